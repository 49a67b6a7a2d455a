"""Seeds a real CKAN with ckanapi (CKAN's own client) as a publisher would: an organization,
datasets (public and private) and resources (file uploads and links). Reads a JSON plan on stdin:
{"url", "token", "organization", "datasets": [{"name", "title", "private", "resources": [{"name",
"format"?, "file"? (a path, uploaded), "url"? (a link)}]}]}, and prints what CKAN answered for each
resource as JSON: {dataset: {resource name: resource}}. Also `reupload`: {"url", "token",
"reupload": {"id", "file"}} uploads another file to a resource (resource_patch)."""
import json
import sys

from ckanapi import RemoteCKAN

plan = json.load(sys.stdin)
ckan = RemoteCKAN(plan["url"], apikey=plan["token"], user_agent="geoflow-tests-seed")

if "reupload" in plan:
    r = plan["reupload"]
    with open(r["file"], "rb") as f:
        print(json.dumps(ckan.action.resource_patch(id=r["id"], upload=f)))
    sys.exit(0)

org = plan["organization"]
ckan.action.organization_create(name=org, title=org)
out = {}
for d in plan["datasets"]:
    ckan.action.package_create(name=d["name"], title=d["title"], private=d.get("private", False), owner_org=org)
    out[d["name"]] = {}
    for r in d["resources"]:
        fields = {"package_id": d["name"], "name": r["name"]}
        if "format" in r:
            fields["format"] = r["format"]
        if "file" in r:
            with open(r["file"], "rb") as f:
                created = ckan.action.resource_create(upload=f, **fields)
        else:
            created = ckan.action.resource_create(url=r["url"], **fields)
        out[d["name"]][r["name"]] = created
print(json.dumps(out))
