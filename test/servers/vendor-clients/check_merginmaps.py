"""Drives the Mergin Maps stand-in with mergin-client, Mergin Maps' own Python client.

Input (JSON on stdin): url, username, password, workspace, project, version, directory.
Output (JSON on stdout): the projects it lists, the project's versions, and the SHA-1 of every
file of the downloaded version, so the suite can compare them with the stand-in's data.
"""
import hashlib
import json
import os
import sys

from mergin import MerginClient
from mergin.common import ClientError, LoginError

args = json.load(sys.stdin)
mc = MerginClient(args["url"], login=args["username"], password=args["password"])
projects = mc.projects_list(only_namespace=args["workspace"])
full_name = f'{args["workspace"]}/{args["project"]}'
versions = mc.project_versions(full_name)
mc.download_project(full_name, args["directory"], version=args["version"])
checksums = {}
for root, _dirs, names in os.walk(args["directory"]):
    if ".mergin" in root.split(os.sep):
        continue
    for name in names:
        path = os.path.join(root, name)
        with open(path, "rb") as fh:
            checksums[os.path.relpath(path, args["directory"])] = hashlib.sha1(fh.read()).hexdigest()
try:
    MerginClient(args["url"], login=args["username"], password="not-the-password")
    refused = None
except (LoginError, ClientError) as e:
    refused = str(e)[:200]
json.dump({
    "projects": [{"name": p["name"], "namespace": p["namespace"], "version": p["version"]} for p in projects],
    "versions": [v["name"] for v in versions],
    "files": checksums,
    "wrong_password": refused,
}, sys.stdout)
