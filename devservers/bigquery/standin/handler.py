"""The HTTP routes: authentication by signed JWT, the REST resources, jobs, queries and the upload endpoint."""

import base64
import json
import re
import sys
import uuid
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler
from urllib.parse import parse_qs, urlparse

from google.auth import jwt as google_jwt

from .accounts import ALLOWED, KEYS
from .jobs import new_job, run_job
from .resources import create_sql_table, dataset_resource, drop_table, normalise_schema, page_of, require_dataset, require_table, table_resource
from .sql import dry_run
from .store import PORT, PROJECT, SCOPE, STATUS, ApiError, datasets, db, jobs, lock, now_ms, sql_name, tables, uploads



class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, code, body=None, headers=None):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json; charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def body(self):
        return self._body

    def read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            out = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(out)
                out += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def authenticate(self):
        auth = self.headers.get("Authorization") or ""
        if not auth.startswith("Bearer "):
            raise ApiError(401, "required", "Request is missing required authentication credential.")
        token = auth[7:]
        try:
            header = json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
            email, public = KEYS[header.get("kid")]
            claims = google_jwt.decode(token, certs={header["kid"]: public}, verify=True)
        except Exception:
            raise ApiError(401, "authError", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
        if claims.get("iss") != email or (SCOPE not in str(claims.get("scope", "")) and "bigquery" not in str(claims.get("aud", ""))):
            raise ApiError(401, "authError", "Request had invalid authentication credentials.")
        return email

    def handle_any(self, method):
        # The body is read first, whatever the answer: a keep-alive connection stays in step.
        self._body = self.read_body()
        try:
            url = urlparse(self.path)
            params = parse_qs(url.query)
            email = self.authenticate()
            if email not in ALLOWED:
                raise ApiError(403, "accessDenied", f"Access Denied: Project {PROJECT}: User does not have permission to use BigQuery in project {PROJECT}.")
            with lock:
                self.route(method, url.path, params, email)
        except ApiError as e:
            print(f"{method} {self.path}: {e.code} {e.reason} {e.message}", file=sys.stderr, flush=True)
            self.reply(e.code, {"error": {"code": e.code, "message": e.message, "errors": [{"message": e.message, "domain": "global", "reason": e.reason}], "status": STATUS.get(e.code, "UNKNOWN")}})

    def route(self, method, path, params, email):
        m = re.fullmatch(r"/upload/bigquery/v2/projects/([^/]+)/jobs", path)
        if m:
            return self.upload(method, m.group(1), params, email)
        m = re.fullmatch(r"/bigquery/v2/projects/([^/]+)(/.*)?", path)
        if not m:
            raise ApiError(404, "notFound", f"Not found: {path}")
        project, rest = m.group(1), m.group(2) or ""
        if project != PROJECT:
            raise ApiError(404, "notFound", f"Not found: Project {project}")
        if rest == "/datasets" and method == "GET":
            return self.reply(200, {"kind": "bigquery#datasetList", "datasets": [{"kind": "bigquery#dataset", "id": f"{p}:{d}", "datasetReference": {"projectId": p, "datasetId": d}, "location": v["location"]} for (p, d), v in sorted(datasets.items())]})
        if rest == "/datasets" and method == "POST":
            body = json.loads(self.body() or b"{}")
            d = (body.get("datasetReference") or {}).get("datasetId")
            if not d or not re.fullmatch(r"[A-Za-z0-9_]{1,1024}", d):
                raise ApiError(400, "invalid", f"Invalid dataset ID \"{d}\"")
            if (project, d) in datasets:
                raise ApiError(409, "duplicate", f"Already Exists: Dataset {project}:{d}")
            datasets[(project, d)] = {"location": body.get("location") or "US", "created": now_ms()}
            return self.reply(200, dataset_resource(project, d))
        m = re.fullmatch(r"/datasets/([^/]+)", rest)
        if m:
            d = m.group(1)
            require_dataset(project, d)
            if method == "GET":
                return self.reply(200, dataset_resource(project, d))
            if method == "DELETE":
                owned = [k for k in tables if k[:2] == (project, d)]
                if owned and (params.get("deleteContents") or ["false"])[0] != "true":
                    raise ApiError(400, "resourceInUse", f"Dataset {project}:{d} is still in use")
                for k in owned:
                    drop_table(*k)
                del datasets[(project, d)]
                return self.reply(204)
        m = re.fullmatch(r"/datasets/([^/]+)/tables", rest)
        if m:
            d = m.group(1)
            require_dataset(project, d)
            if method == "GET":
                names = sorted(t for (p, dd, t) in tables if (p, dd) == (project, d))
                return self.reply(200, {"kind": "bigquery#tableList", "tables": [{"kind": "bigquery#table", "id": f"{project}:{d}.{t}", "tableReference": {"projectId": project, "datasetId": d, "tableId": t}, "type": "TABLE"} for t in names], "totalItems": len(names)})
            if method == "POST":
                body = json.loads(self.body() or b"{}")
                t = (body.get("tableReference") or {}).get("tableId")
                if not t or not re.fullmatch(r"[\w-]{1,1024}", t):
                    raise ApiError(400, "invalid", f"Invalid table ID \"{t}\"")
                if (project, d, t) in tables:
                    raise ApiError(409, "duplicate", f"Already Exists: Table {project}:{d}.{t}")
                schema = normalise_schema((body.get("schema") or {}).get("fields"))
                create_sql_table(project, d, t, schema)
                tables[(project, d, t)] = {"schema": schema, "created": now_ms(), "modified": now_ms()}
                return self.reply(200, table_resource(project, d, t))
        m = re.fullmatch(r"/datasets/([^/]+)/tables/([^/]+)(/data)?", rest)
        if m:
            d, t, data = m.group(1), m.group(2), m.group(3)
            table = require_table(project, d, t)
            if data and method == "GET":
                rows = db.execute(f"SELECT * FROM {sql_name(project, d, t)} ORDER BY rowid").fetchall()
                return self.reply(200, {"kind": "bigquery#tableDataList", "etag": table["modified"], **page_of(rows, table["schema"], params)})
            if method == "GET":
                return self.reply(200, table_resource(project, d, t))
            if method == "DELETE":
                drop_table(project, d, t)
                return self.reply(204)
        if rest == "/jobs" and method == "POST":
            body = json.loads(self.body() or b"{}")
            if (body.get("configuration") or {}).get("dryRun"):
                return self.reply(200, dry_run(project, body))
            entry = new_job(project, body, email)
            if "load" in entry["resource"]["configuration"]:
                raise ApiError(400, "invalid", "Load jobs from local data go to the upload endpoint")
            run_job(project, entry)
            return self.reply(200, entry["resource"])
        m = re.fullmatch(r"/jobs/([^/]+)", rest)
        if m and method == "GET":
            entry = jobs.get((project, m.group(1)))
            if not entry:
                raise ApiError(404, "notFound", f"Not found: Job {project}:{m.group(1)}")
            return self.reply(200, entry["resource"])
        if rest == "/queries" and method == "POST":
            body = json.loads(self.body() or b"{}")
            entry = new_job(project, {"jobReference": {"location": body.get("location")}, "configuration": {"query": {k: v for k, v in body.items() if k in ("query", "useLegacySql", "queryParameters", "defaultDataset", "parameterMode")}}}, email)
            run_job(project, entry)
            return self.query_results(project, entry, {"maxResults": [str(body.get("maxResults", 100000))], "formatOptions.useInt64Timestamp": [str((body.get("formatOptions") or {}).get("useInt64Timestamp", False)).lower()]}, "bigquery#queryResponse")
        m = re.fullmatch(r"/queries/([^/]+)", rest)
        if m and method == "GET":
            entry = jobs.get((project, m.group(1)))
            if not entry:
                raise ApiError(404, "notFound", f"Not found: Job {project}:{m.group(1)}")
            return self.query_results(project, entry, params, "bigquery#getQueryResultsResponse")
        raise ApiError(404, "notFound", f"Not found: {method} {rest}")

    def query_results(self, project, entry, params, kind):
        status = entry["resource"]["status"]
        if status.get("errorResult"):
            e = status["errorResult"]
            raise ApiError(400, e["reason"], e["message"])
        stats = entry["resource"]["statistics"].get("query", {})
        out = {"kind": kind, "jobReference": entry["resource"]["jobReference"], "jobComplete": True, "schema": {"fields": entry["schema"]}, "cacheHit": False, "totalBytesProcessed": "0"}
        if "numDmlAffectedRows" in stats:
            out["numDmlAffectedRows"] = stats["numDmlAffectedRows"]
        out.update(page_of(entry["rows"], entry["schema"], params))
        return self.reply(200, out)

    def upload(self, method, project, params, email):
        kind = (params.get("uploadType") or [""])[0]
        if method == "POST" and kind == "multipart":
            ctype = self.headers.get("Content-Type", "")
            message = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + self.body())
            parts = list(message.iter_parts())
            if len(parts) != 2:
                raise ApiError(400, "invalid", "A multipart upload has two parts: the job, then the data")
            metadata = json.loads(parts[0].get_payload(decode=True) or b"{}")
            data = parts[1].get_payload(decode=True) or b""
            return self.start_load(project, metadata, data, email)
        if method == "POST" and kind == "resumable":
            upload_id = uuid.uuid4().hex
            uploads[upload_id] = {"metadata": json.loads(self.body() or b"{}"), "data": bytearray()}
            location = f"http://127.0.0.1:{PORT}/upload/bigquery/v2/projects/{project}/jobs?uploadType=resumable&upload_id={upload_id}"
            return self.reply(200, None, {"Location": location})
        if method == "PUT" and kind == "resumable":
            upload = uploads.get((params.get("upload_id") or [""])[0])
            if not upload:
                raise ApiError(404, "notFound", "No such upload")
            upload["data"] += self.body()
            total = re.search(r"/(\d+|\*)$", self.headers.get("Content-Range", "") or "")
            if total and total.group(1) != "*" and int(total.group(1)) > len(upload["data"]):
                return self.reply(308, None, {"Range": f"bytes=0-{len(upload['data']) - 1}"})
            del uploads[params["upload_id"][0]]
            return self.start_load(project, upload["metadata"], bytes(upload["data"]), email)
        raise ApiError(400, "invalid", f"Unsupported upload: {method} uploadType={kind}")

    def start_load(self, project, metadata, data, email):
        if "load" not in (metadata.get("configuration") or {}):
            raise ApiError(400, "invalid", "The upload endpoint takes load jobs")
        entry = new_job(project, metadata, email)
        run_job(project, entry, data)
        self.reply(200, entry["resource"])

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PUT(self):
        self.handle_any("PUT")

    def do_DELETE(self):
        self.handle_any("DELETE")
