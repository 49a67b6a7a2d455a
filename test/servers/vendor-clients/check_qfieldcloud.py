"""Drives the QFieldCloud stand-in with qfieldcloud-sdk, QFieldCloud's own Python client.

Input (JSON on stdin): url, username, password, project_id, directory.
Output (JSON on stdout): what the SDK saw: projects, the project's files, and the md5 of each
file it downloaded, so the suite can compare them with the stand-in's data.
"""
import hashlib
import json
import os
import sys

from qfieldcloud_sdk import sdk

args = json.load(sys.stdin)
client = sdk.Client(url=args["url"].rstrip("/") + "/api/v1/")
client.login(args["username"], args["password"])
projects = client.list_projects()
files = client.list_remote_files(args["project_id"])
downloaded = client.download_project(args["project_id"], args["directory"], throw_on_error=True, force_download=True)
md5 = {}
for f in downloaded:
    with open(os.path.join(args["directory"], f["name"]), "rb") as fh:
        md5[f["name"]] = hashlib.md5(fh.read()).hexdigest()
wrong = sdk.Client(url=args["url"].rstrip("/") + "/api/v1/")
try:
    wrong.login(args["username"], "not-the-password")
    refused = None
except sdk.QfcRequestException as e:
    refused = e.response.status_code
json.dump({
    "projects": [{"id": p["id"], "name": p["name"], "owner": p["owner"]} for p in projects],
    "files": [{"name": f["name"], "md5sum": f["md5sum"], "versions": len(f["versions"])} for f in files],
    "downloaded": md5,
    "wrong_password_status": refused,
}, sys.stdout)
