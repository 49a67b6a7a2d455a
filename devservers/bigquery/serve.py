"""
A BigQuery REST API stand-in for the bigquery connector suite, written from Google's API
reference (https://cloud.google.com/bigquery/docs/reference/rest): datasets (list, get, insert,
delete), tables (list, get, insert, delete), tabledata.list, jobs (insert: load, query, copy;
get), jobs.query, getQueryResults, and the upload endpoint of load jobs (multipart and
resumable). Requests are authenticated as BigQuery authenticates service accounts that sign
their own tokens: an RS256 JWT whose key id and signature must match a service account key this
server issued (google-auth verifies it). GoogleSQL runs on SQLite: enough for the statements the
connector sends and plain user SELECTs; no ST_ functions. As BigQuery does, a query of several
statements separated by semicolons runs as a script (each statement in turn, the job's results
those of the last one, statementType SCRIPT), and a job with configuration.dryRun runs nothing
and answers the statement type it would have (SELECT, INSERT, DELETE, SCRIPT …). GEOGRAPHY values are WKT text, checked
on load as BigQuery does (well-formed, longitude and latitude in range).

Its answers are checked in the suite by Google's own Python client (check.py), so it cannot
drift from what Google's client libraries expect.

Which real behaviour it follows, and where that was checked. BigQuery REST API v2 as Google's
reference documents it (2026): a jobs.insert whose job id was used before fails 409 "Already
Exists: Job …" (reason duplicate), as the reference's jobs.insert and google-cloud-bigquery's
design note "query retries" say; a copy job with WRITE_TRUNCATE replaces the destination's rows
and schema when the job succeeds, and nothing before (JobConfigurationTableCopy); WRITE_EMPTY
fails on a table that has rows; GEOGRAPHY columns load WKT in WGS 84 and refuse coordinates out of
range ("Geospatial analytics" / loading GEOGRAPHY data). check.py drives each of these through
google-cloud-bigquery 3.47 (copy_table with WRITE_TRUNCATE, the same copy job id again →
Conflict, a GEOGRAPHY schema, an out-of-range point → BadRequest). Not checked against BigQuery
itself: none can be reached here, and goccy's bigquery-emulator v0.6.6 (which issue 38's author
ran from its source) cannot show GEOGRAPHY values, copy jobs or repeated job ids. So the
connector's `replace` (a copy job with WRITE_TRUNCATE) and its retried-delivery protection (job
ids derived from the delivery id; a 409 duplicate means an earlier attempt's job, which is then
looked up instead of loading twice) are verified by this stand-in only.

Prints one JSON line (port, project, service account keys: "writer" may do anything, "nobody" is
a valid account without any permission, "stranger" is signed with a key the server does not
know), then serves until stdin closes.

Usage: serve.py PORT PROJECT
"""

import base64
import csv
import io
import json
import re
import sqlite3
import sys
import threading
import time
import uuid
from datetime import datetime, timezone
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from google.auth import jwt as google_jwt

PORT = int(sys.argv[1])
PROJECT = sys.argv[2]
SCOPE = "https://www.googleapis.com/auth/bigquery"


def make_key(name):
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = private.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    public = private.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    key_id = uuid.uuid4().hex
    email = f"{name}@{PROJECT}.iam.gserviceaccount.com"
    info = {
        "type": "service_account",
        "project_id": PROJECT,
        "private_key_id": key_id,
        "private_key": pem,
        "client_email": email,
        "client_id": str(abs(hash(name))),
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    return info, key_id, public


KEYS = {}  # key id -> (email, public PEM)
ALLOWED = set()  # emails with permission
accounts = {}
for name in ("writer", "nobody", "stranger"):
    info, key_id, public = make_key(name)
    accounts[name] = info
    if name != "stranger":
        KEYS[key_id] = (info["client_email"], public)
ALLOWED.add(accounts["writer"]["client_email"])

lock = threading.RLock()
db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
datasets = {}  # (project, dataset) -> resource
tables = {}  # (project, dataset, table) -> {"schema": [...], "created": ms}
jobs = {}  # (project, job id) -> {"resource": {...}, "schema": [...], "rows": [...]}
uploads = {}  # upload id -> {"metadata": {...}, "data": bytearray}


class ApiError(Exception):
    def __init__(self, code, reason, message):
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message


STATUS = {400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 409: "ALREADY_EXISTS", 500: "INTERNAL"}


def now_ms():
    return str(int(time.time() * 1000))


def sql_name(project, dataset, table):
    return '"' + f"{project}.{dataset}.{table}".replace('"', '""') + '"'


# --- values ---------------------------------------------------------------------------------

GEO_KINDS = ("POINT", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON", "GEOMETRYCOLLECTION")


def check_wkt(text):
    t = text.strip()
    if t.startswith("{"):
        return t  # GeoJSON geometry, as load jobs accept
    kind = re.match(r"^([A-Za-z]+)", t)
    if not kind or kind.group(1).upper() not in GEO_KINDS or t.count("(") != t.count(")"):
        raise ValueError(f"Invalid WKT: {t[:40]}")
    numbers = [float(n) for n in re.findall(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?", t[len(kind.group(1)) :])]
    for lon, lat in zip(numbers[0::2], numbers[1::2]):
        if not (-180 <= lon <= 180 and -90 <= lat <= 90):
            raise ValueError(f"Longitude or latitude out of range: {lon} {lat} (GEOGRAPHY is WGS 84)")
    return t


def parse_timestamp(text):
    t = text.strip()
    if re.fullmatch(r"-?\d+", t):  # microseconds
        dt = datetime.fromtimestamp(int(t) / 1e6, tz=timezone.utc)
    else:
        t = t.replace(" UTC", "+00:00").replace("Z", "+00:00").replace("T", " ").replace("/", "-")
        if re.search(r"[+-]\d\d$", t):
            t += ":00"
        dt = datetime.fromisoformat(t)
        if dt.tzinfo is None:
            dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S.%f+00")


def to_storage(field_type, text):
    """A value of a load file or a query parameter, stored as SQLite holds it."""
    if text is None:
        return None
    t = field_type.upper()
    if t in ("INTEGER", "INT64"):
        return int(text)
    if t in ("FLOAT", "FLOAT64"):
        return float(text)
    if t in ("BOOLEAN", "BOOL"):
        v = str(text).strip().lower()
        if v in ("true", "1"):
            return 1
        if v in ("false", "0"):
            return 0
        raise ValueError(f"Invalid BOOL value: {text}")
    if t == "TIMESTAMP":
        return parse_timestamp(str(text))
    if t == "DATE":
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(text)):
            raise ValueError(f"Invalid date: '{text}'")
        return str(text)
    if t == "GEOGRAPHY":
        return check_wkt(str(text))
    if t == "BYTES":
        base64.b64decode(str(text), validate=True)
        return str(text)
    return str(text)


def to_rest(field_type, value, int64_timestamp):
    """A stored value as BigQuery's REST API sends it: text, TIMESTAMP as microseconds or seconds."""
    if value is None:
        return None
    t = field_type.upper()
    if t in ("BOOLEAN", "BOOL"):
        return "true" if value else "false"
    if t == "TIMESTAMP" and isinstance(value, str):
        dt = datetime.fromisoformat(value.replace("+00", "+00:00"))
        micros = int(dt.timestamp()) * 1_000_000 + dt.microsecond
        return str(micros) if int64_timestamp else f"{micros / 1e6:.6E}"
    if t in ("FLOAT", "FLOAT64"):
        return repr(float(value))
    return str(value)


SQLITE_TYPES = {"INTEGER": "INTEGER", "INT64": "INTEGER", "FLOAT": "REAL", "FLOAT64": "REAL", "BOOLEAN": "INTEGER", "BOOL": "INTEGER"}


def create_sql_table(project, dataset, table, schema):
    cols = ", ".join('"' + f["name"].replace('"', '""') + '" ' + SQLITE_TYPES.get(f["type"].upper(), "TEXT") for f in schema)
    db.execute(f"CREATE TABLE {sql_name(project, dataset, table)} ({cols})")


LEGACY_TYPES = {"INT64": "INTEGER", "FLOAT64": "FLOAT", "BOOL": "BOOLEAN", "STRUCT": "RECORD"}


def normalise_schema(fields):
    out = []
    seen = set()
    for f in fields or []:
        name = f.get("name", "")
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,299}", name):
            raise ApiError(400, "invalid", f"Invalid field name \"{name}\". Fields must contain only letters, numbers, and underscores, start with a letter or underscore, and be at most 300 characters long.")
        if name.lower() in seen:
            raise ApiError(400, "invalid", f"Duplicate column names in the schema: {name}")
        seen.add(name.lower())
        # BigQuery answers with the legacy names of types, whichever spelling created the column.
        ftype = LEGACY_TYPES.get(f.get("type", "STRING").upper(), f.get("type", "STRING").upper())
        out.append({"name": name, "type": ftype, "mode": f.get("mode", "NULLABLE")})
    return out


# --- resources ------------------------------------------------------------------------------


def dataset_resource(project, dataset):
    d = datasets[(project, dataset)]
    return {
        "kind": "bigquery#dataset",
        "id": f"{project}:{dataset}",
        "datasetReference": {"projectId": project, "datasetId": dataset},
        "location": d["location"],
        "creationTime": d["created"],
        "lastModifiedTime": d["created"],
        "etag": d["created"],
        "selfLink": f"http://127.0.0.1:{PORT}/bigquery/v2/projects/{project}/datasets/{dataset}",
    }


def require_dataset(project, dataset):
    if project != PROJECT:
        raise ApiError(404, "notFound", f"Not found: Project {project}")
    if (project, dataset) not in datasets:
        raise ApiError(404, "notFound", f"Not found: Dataset {project}:{dataset}")


def require_table(project, dataset, table):
    require_dataset(project, dataset)
    if (project, dataset, table) not in tables:
        raise ApiError(404, "notFound", f"Not found: Table {project}:{dataset}.{table}")
    return tables[(project, dataset, table)]


def table_resource(project, dataset, table):
    t = tables[(project, dataset, table)]
    rows = db.execute(f"SELECT COUNT(*) FROM {sql_name(project, dataset, table)}").fetchone()[0]
    return {
        "kind": "bigquery#table",
        "id": f"{project}:{dataset}.{table}",
        "tableReference": {"projectId": project, "datasetId": dataset, "tableId": table},
        "schema": {"fields": t["schema"]},
        "numRows": str(rows),
        "numBytes": "0",
        "type": "TABLE",
        "location": datasets[(project, dataset)]["location"],
        "creationTime": t["created"],
        "lastModifiedTime": t["modified"],
        "etag": t["modified"],
    }


def drop_table(project, dataset, table):
    db.execute(f"DROP TABLE IF EXISTS {sql_name(project, dataset, table)}")
    tables.pop((project, dataset, table), None)


def page_of(rows, schema, params):
    start = int((params.get("pageToken") or params.get("startIndex") or ["0"])[0])
    size = int((params.get("maxResults") or ["100000"])[0])
    int64 = (params.get("formatOptions.useInt64Timestamp") or ["false"])[0].lower() == "true"
    chunk = rows[start : start + size]
    out = {"rows": [{"f": [{"v": to_rest(f["type"], v, int64)} for f, v in zip(schema, r)]} for r in chunk], "totalRows": str(len(rows))}
    if start + size < len(rows):
        out["pageToken"] = str(start + size)
    return out


# --- SQL ------------------------------------------------------------------------------------


def translate(sql, default_dataset):
    """GoogleSQL → SQLite: table paths and backticked names quoted, casts renamed."""

    def table_path(parts):
        if len(parts) == 3:
            return tuple(parts)
        if len(parts) == 2:
            return (PROJECT, parts[0], parts[1])
        if default_dataset and (PROJECT, default_dataset, parts[0]) in tables:
            return (PROJECT, default_dataset, parts[0])
        return None

    def quoted(m):
        inner = m.group(1).replace("\\`", "`").replace("\\\\", "\\")
        parts = inner.split(".") if len(inner.split(".")) <= 3 else [inner]
        path = table_path(parts) if len(parts) > 1 or (PROJECT, default_dataset, inner) in tables else None
        if path:
            if path[0] != PROJECT or (path[0], path[1]) not in datasets:
                raise ApiError(404, "notFound", f"Not found: Dataset {path[0]}:{path[1]}")
            if path not in tables:
                raise ApiError(404, "notFound", f"Not found: Table {path[0]}:{path[1]}.{path[2]}")
            return sql_name(*path)
        return '"' + inner.replace('"', '""') + '"'

    def unquoted(m):
        path = table_path([g for g in m.groups() if g])
        if path in tables:
            return sql_name(*path)
        if path and (path[0], path[1]) in datasets:  # dataset.table of a known dataset
            raise ApiError(404, "notFound", f"Not found: Table {path[0]}:{path[1]}.{path[2]}")
        return m.group(0)

    # Split off string literals so nothing inside them is rewritten.
    pieces = re.split(r"('(?:[^'\\]|\\.)*')", sql)
    for i in range(0, len(pieces), 2):
        p = pieces[i]
        p = re.sub(r"`((?:[^`\\]|\\.)*)`", quoted, p)
        p = re.sub(r"(?<![\w\"])([A-Za-z_][\w-]*)\.([A-Za-z_]\w*)(?:\.([A-Za-z_]\w*))?(?![\w\"])", unquoted, p)
        p = re.sub(r"\bAS\s+STRING\b", "AS TEXT", p, flags=re.I)
        p = re.sub(r"\bAS\s+INT64\b", "AS INTEGER", p, flags=re.I)
        p = re.sub(r"\bAS\s+FLOAT64\b", "AS REAL", p, flags=re.I)
        pieces[i] = p
    return "".join(pieces)


STATEMENT_TYPES = {"SELECT": "SELECT", "WITH": "SELECT", "INSERT": "INSERT", "DELETE": "DELETE", "UPDATE": "UPDATE", "MERGE": "MERGE"}


def split_statements(sql):
    """A script's statements: split on semicolons outside string literals, quoted names and comments."""
    statements, current, i = [], [], 0
    while i < len(sql):
        c = sql[i]
        if c in "'\"`":
            j = i + 1
            while j < len(sql) and sql[j] != c:
                j += 2 if sql[j] == "\\" else 1
            current.append(sql[i : j + 1])
            i = j + 1
        elif sql.startswith("--", i) or c == "#":
            j = sql.find("\n", i)
            i = len(sql) if j < 0 else j
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            i = len(sql) if j < 0 else j + 2
        elif c == ";":
            statements.append("".join(current))
            current, i = [], i + 1
        else:
            current.append(c)
            i += 1
    statements.append("".join(current))
    return [st for st in statements if st.strip()]


def statement_type(query):
    """What BigQuery's statistics.query.statementType would say: SCRIPT for several statements."""
    statements = split_statements(query)
    if len(statements) != 1:
        return "SCRIPT"
    word = statements[0].lstrip().lstrip("(").split(None, 1)[0].upper() if statements[0].strip() else ""
    if word not in STATEMENT_TYPES:
        raise ApiError(400, "invalidQuery", f"Syntax error: Unexpected keyword {word} (the stand-in knows {', '.join(sorted(STATEMENT_TYPES))})")
    return STATEMENT_TYPES[word]


def run_statement(sql, params):
    """One translated statement: (schema, rows, affected rows or None, kind)."""
    word = sql.lstrip().lstrip("(").split(None, 1)[0].upper() if sql.strip() else ""
    kind = STATEMENT_TYPES.get(word)
    if kind not in ("SELECT", "INSERT", "DELETE"):
        raise ApiError(400, "invalidQuery", f"The stand-in runs SELECT, INSERT and DELETE statements only, not {word}")
    try:
        cur = db.execute(sql, params)
        rows = cur.fetchall() if kind == "SELECT" else []
    except sqlite3.Error as e:
        raise ApiError(400, "invalidQuery", f"Syntax error or unsupported SQL: {e}")
    if kind != "SELECT":
        touched = re.search(r'(?:INSERT\s+INTO|DELETE\s+FROM)\s+"([^"]+)"', sql, re.I)
        if touched:
            parts = touched.group(1).split(".")
            if len(parts) == 3 and tuple(parts) in tables:
                tables[tuple(parts)]["modified"] = now_ms()
        return [], [], cur.rowcount, kind
    # Result types: a column of a table the query reads keeps its type; else from the values.
    known = {}
    for key, t in tables.items():
        if sql_name(*key) in sql:
            for f in t["schema"]:
                known.setdefault(f["name"].lower(), f["type"])
    schema = []
    for i, d in enumerate(cur.description or []):
        name = d[0] if re.fullmatch(r"[A-Za-z_]\w*", d[0] or "") else f"f{i}_"
        ftype = known.get(name.lower())
        if not ftype:
            sample = next((r[i] for r in rows if r[i] is not None), None)
            ftype = "INTEGER" if isinstance(sample, int) else "FLOAT" if isinstance(sample, float) else "STRING"
        schema.append({"name": name, "type": ftype, "mode": "NULLABLE"})
    return schema, rows, None, "SELECT"


def run_query(project, config_query, params_in):
    query = config_query.get("query", "")
    if config_query.get("useLegacySql") is not False and "useLegacySql" in config_query:
        raise ApiError(400, "invalid", "The stand-in runs GoogleSQL only (useLegacySql: false)")
    default = (config_query.get("defaultDataset") or {}).get("datasetId")
    params = {}
    for p in config_query.get("queryParameters") or []:
        ptype = p.get("parameterType", {}).get("type", "STRING")
        value = (p.get("parameterValue") or {}).get("value")
        try:
            params[p["name"]] = to_storage(ptype, value)
        except (ValueError, TypeError) as e:
            raise ApiError(400, "invalidQuery", f"Invalid query parameter {p.get('name')}: {e}")
    kind = statement_type(query)
    # A script runs its statements in turn; its results are the last statement's.
    result = None
    for statement in split_statements(query):
        result = run_statement(translate(statement, default), params)
    schema, rows, affected, last = result
    return schema, rows, affected, kind if kind == "SCRIPT" else last


def dry_run(project, body):
    """jobs.insert with configuration.dryRun: nothing runs; the statement type it would have, as BigQuery answers."""
    config = body.get("configuration") or {}
    query = config.get("query")
    if not query:
        raise ApiError(400, "invalid", "The stand-in dry-runs query jobs only")
    kind = statement_type(query.get("query", ""))
    for statement in split_statements(query.get("query", "")):
        translate(statement, (query.get("defaultDataset") or {}).get("datasetId"))  # unknown tables are errors, as in BigQuery
    location = (body.get("jobReference") or {}).get("location") or "US"
    return {
        "kind": "bigquery#job",
        "jobReference": {"projectId": project, "location": location},
        "configuration": config,
        "status": {"state": "DONE"},
        "statistics": {"creationTime": now_ms(), "totalBytesProcessed": "0", "query": {"totalBytesProcessed": "0", "statementType": kind}},
    }


# --- jobs -----------------------------------------------------------------------------------


def new_job(project, body, email):
    ref = body.get("jobReference") or {}
    job_id = ref.get("jobId") or f"job_{uuid.uuid4().hex}"
    if not re.fullmatch(r"[A-Za-z0-9_-]{1,1024}", job_id):
        raise ApiError(400, "invalid", f"Invalid job ID \"{job_id}\"")
    if (project, job_id) in jobs:
        loc = jobs[(project, job_id)]["resource"]["jobReference"]["location"]
        raise ApiError(409, "duplicate", f"Already Exists: Job {project}:{loc}.{job_id}")
    location = ref.get("location") or "US"
    resource = {
        "kind": "bigquery#job",
        "id": f"{project}:{location}.{job_id}",
        "jobReference": {"projectId": project, "jobId": job_id, "location": location},
        "configuration": body.get("configuration") or {},
        "status": {"state": "RUNNING"},
        "statistics": {"creationTime": now_ms(), "startTime": now_ms()},
        "user_email": email,
    }
    entry = {"resource": resource, "schema": [], "rows": []}
    jobs[(project, job_id)] = entry
    return entry


def finish(entry, error=None):
    r = entry["resource"]
    r["status"] = {"state": "DONE"}
    if error:
        r["status"]["errorResult"] = {"reason": error.reason, "message": error.message}
        r["status"]["errors"] = [{"reason": error.reason, "message": error.message}]
    r["statistics"]["endTime"] = now_ms()


def run_job(project, entry, data=None):
    config = entry["resource"]["configuration"]
    try:
        db.execute("BEGIN")
        try:
            if "query" in config:
                schema, rows, affected, kind = run_query(project, config["query"], None)
                entry["schema"], entry["rows"] = schema, rows
                stats = {"statementType": kind, "totalBytesProcessed": "0", "cacheHit": False}
                if affected is not None:
                    stats["numDmlAffectedRows"] = str(affected)
                else:
                    stats["schema"] = {"fields": schema}
                entry["resource"]["statistics"]["query"] = stats
            elif "load" in config:
                rows = load(project, config["load"], data or b"")
                entry["resource"]["statistics"]["load"] = {"inputFiles": "1", "inputFileBytes": str(len(data or b"")), "outputRows": str(rows), "outputBytes": "0"}
            elif "copy" in config:
                copy(project, config["copy"])
                entry["resource"]["statistics"]["copy"] = {}
            else:
                raise ApiError(400, "invalid", "The stand-in runs query, load and copy jobs only")
            db.execute("COMMIT")
        except Exception:
            db.execute("ROLLBACK")
            raise
        finish(entry)
    except ApiError as e:
        finish(entry, e)


def destination(config, what):
    ref = config.get("destinationTable") or {}
    p, d, t = ref.get("projectId", PROJECT), ref.get("datasetId"), ref.get("tableId")
    if not d or not t:
        raise ApiError(400, "invalid", f"{what}: destinationTable is required")
    require_dataset(p, d)
    if not re.fullmatch(r"[\w-]{1,1024}", t):
        raise ApiError(400, "invalid", f"Invalid table ID \"{t}\"")
    return p, d, t


def prepare_destination(p, d, t, config, schema):
    """Applies createDisposition / writeDisposition; returns the destination's schema."""
    exists = (p, d, t) in tables
    write = config.get("writeDisposition") or ("WRITE_APPEND" if "sourceFormat" in config or "sourceUris" in config or "schema" in config else "WRITE_EMPTY")
    create = config.get("createDisposition") or "CREATE_IF_NEEDED"
    if not exists:
        if create == "CREATE_NEVER":
            raise ApiError(404, "notFound", f"Not found: Table {p}:{d}.{t}")
        if not schema:
            raise ApiError(400, "invalid", "No schema specified on job or table.")
        create_sql_table(p, d, t, schema)
        tables[(p, d, t)] = {"schema": schema, "created": now_ms(), "modified": now_ms()}
        return schema
    if write == "WRITE_EMPTY" and db.execute(f"SELECT 1 FROM {sql_name(p, d, t)} LIMIT 1").fetchone():
        raise ApiError(409, "duplicate", f"Already Exists: Table {p}:{d}.{t}")
    if write == "WRITE_TRUNCATE":
        db.execute(f"DROP TABLE {sql_name(p, d, t)}")
        target_schema = schema or tables[(p, d, t)]["schema"]
        create_sql_table(p, d, t, target_schema)
        tables[(p, d, t)].update(schema=target_schema, modified=now_ms())
        return target_schema
    tables[(p, d, t)]["modified"] = now_ms()
    return tables[(p, d, t)]["schema"]


def load(project, config, data):
    fmt = (config.get("sourceFormat") or "CSV").upper()
    if fmt != "CSV":
        raise ApiError(400, "invalid", f"The stand-in loads CSV only, not {fmt}")
    p, d, t = destination(config, "load")
    schema = normalise_schema((config.get("schema") or {}).get("fields")) if config.get("schema") else None
    target_schema = prepare_destination(p, d, t, config, schema)
    text = data.decode("utf-8")
    reader = csv.reader(io.StringIO(text))
    rows = []
    for i, record in enumerate(reader):
        if i < int(config.get("skipLeadingRows") or 0):
            continue
        if not config.get("allowQuotedNewlines") and any("\n" in v for v in record):
            raise ApiError(400, "invalid", f"Error while reading data: line {i + 1} holds a quoted newline and allowQuotedNewlines is false")
        if len(record) != len(target_schema):
            raise ApiError(400, "invalid", f"Error while reading data, error message: CSV table references column position {len(target_schema) - 1}, but line {i + 1} has {len(record)} columns")
        try:
            rows.append([to_storage(f["type"], None if v == "" else v) for f, v in zip(target_schema, record)])
        except (ValueError, TypeError) as e:
            raise ApiError(400, "invalid", f"Error while reading data, error message: line {i + 1}: {e}")
    marks = ", ".join("?" for _ in target_schema)
    db.executemany(f"INSERT INTO {sql_name(p, d, t)} VALUES ({marks})", rows)
    return len(rows)


def copy(project, config):
    sources = config.get("sourceTables") or ([config["sourceTable"]] if config.get("sourceTable") else [])
    if len(sources) != 1:
        raise ApiError(400, "invalid", "The stand-in copies exactly one source table")
    s = sources[0]
    sp, sd, st = s.get("projectId", PROJECT), s.get("datasetId"), s.get("tableId")
    source = require_table(sp, sd, st)
    p, d, t = destination(config, "copy")
    prepare_destination(p, d, t, config, source["schema"])
    if config.get("writeDisposition") in ("WRITE_TRUNCATE", None) and (p, d, t) in tables:
        tables[(p, d, t)]["schema"] = source["schema"]
    db.execute(f"INSERT INTO {sql_name(p, d, t)} SELECT * FROM {sql_name(sp, sd, st)}")


# --- HTTP -----------------------------------------------------------------------------------


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


server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
server.daemon_threads = True
threading.Thread(target=server.serve_forever, daemon=True).start()
print(json.dumps({"port": PORT, "project": PROJECT, "keys": accounts}), flush=True)
sys.stdin.read()
server.shutdown()
