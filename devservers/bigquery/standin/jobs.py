"""Jobs: query, load (CSV) and copy, each in one SQLite transaction, with BigQuery's write and create dispositions."""

import csv
import io
import re
import uuid

from .resources import create_sql_table, normalise_schema, require_dataset, require_table
from .sql import run_query
from .store import PROJECT, ApiError, db, jobs, now_ms, sql_name, tables
from .values import to_storage



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
