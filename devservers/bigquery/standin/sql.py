"""GoogleSQL on SQLite: table paths translated, scripts split into statements, statements run, dry runs answered."""

import re
import sqlite3

from .store import PROJECT, ApiError, datasets, db, now_ms, sql_name, tables
from .values import to_storage



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
