"""
fakesnow's Snowflake server (DuckDB underneath) for the snowflake connector suite, with what its
server mode lacks for the Node.js driver (snowflake-sdk) that the connector uses. Each addition
is what Snowflake itself does, so the connector's calls run unchanged:

- Results as JSON rowsets. Snowflake answers the Node.js driver in JSON (the driver reads no
  Arrow); fakesnow answers in Arrow. Rows are re-encoded the way Snowflake's JSON result format
  encodes them (every value as text; DATE as days since the epoch; TIMESTAMP_NTZ as seconds with
  a fraction; BOOLEAN as 1/0; BINARY as hex).
- PUT through a presigned URL: fakesnow mimics a GCS stage; its stage info lacks the `region`
  field every real GCS stage info has, which the Node.js driver reads, and its bucket answers
  no GET (GCS answers 404 for a missing object, which the driver asks before a PUT without
  OVERWRITE).
- `ALTER TABLE a SWAP WITH b`, which fakesnow's parser refuses: done as three renames in one
  DuckDB transaction, so other sessions see the old or the new tables, never neither. Renames
  and swaps carry the tables' comments, as Snowflake's do (DuckDB drops a comment on rename).
- GEOGRAPHY and GEOMETRY: DuckDB has a GEOMETRY type but no GEOGRAPHY and no SRIDs. Both are
  DuckDB GEOMETRY here (the information schema says GEOMETRY for both), and TO_GEOGRAPHY,
  TO_GEOMETRY, ST_ASWKT and ST_SRID are macros over DuckDB's own geometry functions. SRIDs are
  not kept: ST_SRID answers NULL.

Prints one JSON line (the port), then serves until stdin closes.

Usage: serve.py PORT
"""

import datetime
import decimal
import json
import re
import sys
import threading
from base64 import b64decode

import pyarrow as pa
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

import fakesnow.macros
import fakesnow.server as fs

PORT = int(sys.argv[1])

# --- spatial macros, created with every database fakesnow creates ----------------------------

SPATIAL = """
CREATE TYPE IF NOT EXISTS {catalog}.main.GEOGRAPHY AS GEOMETRY;
CREATE OR REPLACE MACRO {catalog}.main.to_geography(w) AS CAST(w AS GEOMETRY);
CREATE OR REPLACE MACRO {catalog}.main.to_geometry(w, srid := 0) AS CAST(w AS GEOMETRY);
CREATE OR REPLACE MACRO {catalog}.main.st_aswkt(g) AS ST_AsText(g);
CREATE OR REPLACE MACRO {catalog}.main.st_srid(g) AS CAST(NULL AS INTEGER);
CREATE OR REPLACE MACRO {catalog}.main.current_warehouse() AS CAST(NULL AS VARCHAR);
"""
_creation_sql = fakesnow.macros.creation_sql


def creation_sql(catalog):
    return _creation_sql(catalog) + SPATIAL.format(catalog=catalog)


fakesnow.macros.creation_sql = creation_sql
import fakesnow.conn  # noqa: E402  (reads macros.creation_sql at call time)

fakesnow.conn.macros.creation_sql = creation_sql

# A geometry column described as Snowflake describes a GEOMETRY column (fakesnow knows none; the
# information schema says GEOMETRY too, for GEOGRAPHY columns as well).
import fakesnow.rowtype  # noqa: E402

fakesnow.rowtype.duckdb_to_sf_type["GEOMETRY"] = "geometry"

# --- JSON result encoding -------------------------------------------------------------------

EPOCH = datetime.date(1970, 1, 1)


def encode(value, column):
    if value is None:
        return None
    kind = column.get("type", "text").lower()
    if isinstance(value, bool):
        return "1" if value else "0"
    if kind == "date" and isinstance(value, datetime.date):
        return str((value - EPOCH).days)
    if kind.startswith("timestamp") and isinstance(value, datetime.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=datetime.timezone.utc)
        seconds = value.timestamp()
        whole = int(seconds // 1)
        return f"{whole}.{value.microsecond:06d}000"
    if kind == "time" and isinstance(value, datetime.time):
        return f"{value.hour * 3600 + value.minute * 60 + value.second}.{value.microsecond:06d}000"
    if isinstance(value, (bytes, bytearray)):
        return value.hex().upper()
    if isinstance(value, decimal.Decimal):
        return format(value, "f")
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def as_json(data):
    """An Arrow result of fakesnow as Snowflake's JSON result format."""
    if data.get("queryResultFormat") != "arrow":
        data.setdefault("returned", len(data.get("rowset") or []))
        return data
    encoded = data.pop("rowsetBase64", "")
    rows = []
    if encoded:
        table = pa.ipc.open_stream(b64decode(encoded)).read_all()
        columns = [c.to_pylist() for c in table.columns]
        rowtype = data.get("rowtype") or []
        rows = [[encode(v, rowtype[i] if i < len(rowtype) else {}) for i, v in enumerate(row)] for row in zip(*columns)]
        rows = [fix_arrow_encodings(r, rowtype) for r in rows]
    data["queryResultFormat"] = "json"
    data["rowset"] = rows
    data["total"] = len(rows)
    data["returned"] = len(rows)
    return data


def fix_arrow_encodings(row, rowtype):
    """fakesnow's Arrow for Snowflake scales numbers and splits timestamps; undo what is left."""
    out = []
    for value, column in zip(row, rowtype):
        kind = column.get("type", "").lower()
        if value is not None and kind == "fixed" and column.get("scale") and re.fullmatch(r"-?\d+", value):
            value = str(decimal.Decimal(value).scaleb(-int(column["scale"])))
        if value is not None and kind.startswith("timestamp") and value.startswith("{"):
            parts = json.loads(value)
            value = f"{parts.get('epoch', 0)}.{int(parts.get('fraction', 0)):09d}"
        out.append(value)
    return out


# fakesnow converts DuckDB's Arrow to Snowflake's Arrow encodings (scaled integers, timestamp
# structs) before it serialises; JSON wants the plain values, so that conversion is skipped.
fs.to_sf = lambda table, rowtype: table

# --- SWAP WITH, and comments that survive renames -------------------------------------------

SWAP = re.compile(r"^\s*ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(\S+)\s+SWAP\s+WITH\s+(\S+?)\s*;?\s*$", re.I | re.S)
RENAME = re.compile(r"^\s*ALTER\s+TABLE\s+(?:IF\s+EXISTS\s+)?(\S+)\s+RENAME\s+TO\s+(\S+?)\s*;?\s*$", re.I | re.S)
ddl_lock = threading.Lock()


def unquote(name):
    """The stored name of an identifier as written (quoted: as is; bare: upper case)."""
    last = name.split(".")[-1]
    return last[1:-1].replace('""', '"') if last.startswith('"') else last.upper()


def comment_of(cur, name):
    cur.execute(f"SELECT comment FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = '{unquote(name).replace(chr(39), chr(39) * 2)}'")
    row = cur.fetchone()
    return row[0] if row else None


def set_comment(cur, name, comment):
    if comment is not None:
        cur.execute(f"COMMENT ON TABLE {name} IS '{comment.replace(chr(39), chr(39) * 2)}'")


def renames(request_token, a, b, swap):
    """SWAP WITH as three renames in one transaction; DuckDB drops a table's comment on rename,
    Snowflake keeps it (and SWAP exchanges it with the rest of the table), so comments are carried."""
    conn = fs.to_conn(request_token)
    cur = conn.cursor()
    short = lambda n: n.split(".")[-1]  # noqa: E731
    with ddl_lock:
        cur.execute("BEGIN TRANSACTION")
        try:
            ca, cb = comment_of(cur, a), (comment_of(cur, b) if swap else None)
            if swap:
                temp = f'"_fs_swap_{threading.get_ident()}"'
                cur.execute(f"ALTER TABLE {a} RENAME TO {temp}")
                cur.execute(f"ALTER TABLE {b} RENAME TO {short(a)}")
                cur.execute(f"ALTER TABLE {temp} RENAME TO {short(b)}")
            else:
                cur.execute(f"ALTER TABLE {a} RENAME TO {b}")
            cur.execute("COMMIT")
        except Exception:
            cur.execute("ROLLBACK")
            raise
        # fakesnow keeps comments in another DuckDB database, which one transaction cannot also
        # write: they follow the renames at once, still under the lock.
        if swap:
            set_comment(cur, short(a), cb)
            set_comment(cur, short(b), ca)
        else:
            set_comment(cur, short(b), ca)
    return {
        "data": {
            "rowtype": [{"name": "status", "type": "text", "nullable": True, "length": 16777216, "precision": None, "scale": None, "byteLength": 16777216}],
            "rowset": [["Statement executed successfully."]],
            "queryResultFormat": "json",
            "total": 1,
            "returned": 1,
            "queryId": "ddl",
            "statementTypeId": 0x3000 + 0x200,
            "finalDatabaseName": conn.database,
            "finalSchemaName": conn.schema,
        },
        "success": True,
    }


async def query_request(request: Request):
    body = await request.body()
    if request.headers.get("Content-Encoding") == "gzip":
        import gzip

        body = gzip.decompress(body)
    sql = json.loads(body).get("sqlText", "")
    swap, rename = SWAP.match(sql), RENAME.match(sql)
    if swap or rename:
        m = swap or rename
        try:
            return JSONResponse(renames(fs.to_token(request), m.group(1), m.group(2), bool(swap)))
        except fs.ServerError as e:
            return JSONResponse({"data": None, "code": e.code, "message": e.message, "success": False}, status_code=e.status_code)
        except Exception as e:  # as fakesnow reports it (a missing table 002003, an existing one 002002 …)
            code = f"{getattr(e, 'errno', 2003):06d}"
            return JSONResponse({"data": {"errorCode": code, "sqlState": getattr(e, "sqlstate", "42S02")}, "code": code, "message": str(e), "success": False})

    async def receive():
        return {"type": "http.request", "body": body, "more_body": False}

    scope = dict(request.scope)
    scope["headers"] = [(k, v) for k, v in request.scope["headers"] if k.lower() != b"content-encoding"]
    response = await fs.query_request(Request(scope, receive))
    payload = json.loads(response.body)
    data = payload.get("data")
    if payload.get("success") and isinstance(data, dict):
        if "stageInfo" in data:
            data["stageInfo"].setdefault("region", "us-central1")
            data["stageInfo"].setdefault("endPoint", None)
        else:
            payload["data"] = as_json(data)
    return JSONResponse(payload, status_code=response.status_code)


async def bucket_head(request: Request):
    """GCS answers a presigned GET of a missing object with 404 (the driver checks before a PUT without OVERWRITE)."""
    import os

    from fakesnow.transforms import stage

    target = os.path.normpath(os.path.join(stage.LOCAL_BUCKET_PATH, request.path_params["path"]))
    if not target.startswith(stage.LOCAL_BUCKET_PATH + os.sep) or not os.path.isfile(target):
        return JSONResponse({"error": "NoSuchKey"}, status_code=404)
    return JSONResponse({}, headers={"x-goog-meta-sfc-digest": ""})


routes = [Route("/fs_bucket/{path:path}", bucket_head, methods=["GET", "HEAD"])] + [Route(r.path, query_request if r.path == "/queries/v1/query-request" else r.endpoint, methods=list(r.methods or [])) for r in fs.routes]
app = Starlette(routes=routes)

server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=PORT, log_level=("info" if "FS_DEBUG" in __import__("os").environ else "warning")))
thread = threading.Thread(target=server.run, daemon=True)
thread.start()
while thread.is_alive() and not server.started:
    threading.Event().wait(0.1)
print(json.dumps({"port": PORT}), flush=True)
sys.stdin.read()
server.should_exit = True
thread.join(10)
