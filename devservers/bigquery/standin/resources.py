"""Datasets and tables: their SQLite tables, schemas, REST resources and pages of rows."""

import re

from .store import PORT, PROJECT, ApiError, datasets, db, sql_name, tables
from .values import to_rest


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
