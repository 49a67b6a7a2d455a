"""Drives the Google Drive stand-in with google-api-python-client and google-auth, Google's own
Python libraries, signed in both ways the connector signs in.

Input (JSON on stdin): url, service_account_key, oauth {client_id, client_secret, refresh_token},
folder_id, file_id, upload_path, directory.
Output (JSON on stdout): what the clients saw: the folder's files, the md5 of a downloaded file,
the id of a file uploaded in a resumable session (small chunks, so the session really resumes)
and of its update (a new revision of the same file).
"""
import hashlib
import io
import json
import sys

from google.oauth2 import credentials as user_credentials
from google.oauth2 import service_account
from googleapiclient import discovery, discovery_cache
from googleapiclient.http import MediaFileUpload, MediaIoBaseDownload
from googleapiclient.errors import HttpError

args = json.load(sys.stdin)
scope = "https://www.googleapis.com/auth/drive"

# The bundled Drive v3 discovery document, pointed at the stand-in (uploads use its rootUrl too).
document = json.loads(discovery_cache.get_static_doc("drive", "v3"))
document["rootUrl"] = args["url"].rstrip("/") + "/"
document["baseUrl"] = document["rootUrl"] + document["servicePath"]

sa = service_account.Credentials.from_service_account_info(args["service_account_key"], scopes=[scope], always_use_jwt_access=True)
oauth = user_credentials.Credentials(None, refresh_token=args["oauth"]["refresh_token"], client_id=args["oauth"]["client_id"],
                                     client_secret=args["oauth"]["client_secret"], token_uri=args["url"].rstrip("/") + "/token", scopes=[scope])
out = {}
for name, creds in (("service_account", sa), ("oauth", oauth)):
    drive = discovery.build_from_document(document, credentials=creds)
    listed = drive.files().list(q=f"'{args['folder_id']}' in parents and trashed = false", fields="files(id, name, md5Checksum)",
                                supportsAllDrives=True, includeItemsFromAllDrives=True).execute()
    buffer = io.BytesIO()
    downloader = MediaIoBaseDownload(buffer, drive.files().get_media(fileId=args["file_id"], supportsAllDrives=True), chunksize=1024)
    done = False
    chunks = 0
    while not done:
        _status, done = downloader.next_chunk()
        chunks += 1
    media = MediaFileUpload(args["upload_path"], mimetype="application/geopackage+sqlite3", resumable=True, chunksize=256 * 1024)
    created = drive.files().create(body={"name": f"from-python-{name}.gpkg", "parents": [args["folder_id"]]}, media_body=media,
                                   fields="id, md5Checksum", supportsAllDrives=True).execute()
    updated = drive.files().update(fileId=created["id"], media_body=MediaFileUpload(args["upload_path"], resumable=True, chunksize=256 * 1024),
                                   fields="id, md5Checksum", supportsAllDrives=True).execute()
    out[name] = {
        "listed": sorted(f["name"] for f in listed["files"]),
        "downloaded_md5": hashlib.md5(buffer.getvalue()).hexdigest(),
        "download_chunks": chunks,
        "created": created,
        "updated": updated,
    }
try:
    stranger = service_account.Credentials.from_service_account_info({**args["service_account_key"], "client_email": "someone@else.iam.gserviceaccount.com"},
                                                                      scopes=[scope], always_use_jwt_access=True)
    discovery.build_from_document(document, credentials=stranger).files().get(fileId=args["file_id"]).execute()
    out["forged_status"] = None
except HttpError as e:
    out["forged_status"] = e.resp.status
json.dump(out, sys.stdout)
