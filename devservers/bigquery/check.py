"""
Drives the BigQuery stand-in with Google's own Python client (google-cloud-bigquery), so the
stand-in answers what Google's client libraries expect: every call below goes through the
client's request building, response parsing and error mapping. Exits non-zero with the first
failed check; prints one JSON line of what it saw.

Usage: check.py ENDPOINT PROJECT   (the writer's and nobody's keys as JSON on stdin)
"""

import io
import json
import sys

from google.api_core import exceptions
from google.api_core.client_options import ClientOptions
from google.cloud import bigquery
from google.oauth2 import service_account

endpoint, project = sys.argv[1], sys.argv[2]
keys = json.loads(sys.stdin.read())


def client(key):
    credentials = service_account.Credentials.from_service_account_info(key, scopes=["https://www.googleapis.com/auth/bigquery"], always_use_jwt_access=True)
    return bigquery.Client(project=project, credentials=credentials, client_options=ClientOptions(api_endpoint=endpoint))


bq = client(keys["writer"])
seen = {}

dataset = bq.create_dataset(bigquery.Dataset(f"{project}.pycheck"), exists_ok=False)
assert dataset.dataset_id == "pycheck", dataset
seen["datasets"] = sorted(d.dataset_id for d in bq.list_datasets())
assert "pycheck" in seen["datasets"], seen

schema = [
    bigquery.SchemaField("geom", "GEOGRAPHY"),
    bigquery.SchemaField("name", "STRING"),
    bigquery.SchemaField("n", "INT64"),
    bigquery.SchemaField("x", "FLOAT64"),
    bigquery.SchemaField("at", "TIMESTAMP"),
    bigquery.SchemaField("ok", "BOOL"),
]
data = 'geom,name,n,x,at,ok\n"POINT(-73.97 40.78)","Zürich, ""Z""",1,1.5,2024-01-02T03:04:05Z,true\n,,2,,,false\n'
job = bq.load_table_from_file(
    io.BytesIO(data.encode()),
    f"{project}.pycheck.points",
    job_id="pycheck_load_1",
    job_config=bigquery.LoadJobConfig(schema=schema, source_format="CSV", skip_leading_rows=1, allow_quoted_newlines=True, write_disposition="WRITE_TRUNCATE"),
)
job.result()
assert job.output_rows == 2, job.output_rows
seen["load_state"] = job.state

table = bq.get_table(f"{project}.pycheck.points")
assert [f.field_type for f in table.schema] == ["GEOGRAPHY", "STRING", "INTEGER", "FLOAT", "TIMESTAMP", "BOOLEAN"], table.schema
assert table.num_rows == 2, table.num_rows
seen["tables"] = [t.table_id for t in bq.list_tables("pycheck")]

rows = list(bq.list_rows(table, max_results=1))  # tabledata.list, paged one row at a time
rows += list(bq.list_rows(table, start_index=1))
assert rows[0]["geom"] == "POINT(-73.97 40.78)" and rows[0]["name"] == 'Zürich, "Z"' and rows[0]["n"] == 1 and rows[0]["x"] == 1.5, rows[0]
assert rows[0]["at"].isoformat() == "2024-01-02T03:04:05+00:00" and rows[0]["ok"] is True, rows[0]
assert rows[1]["geom"] is None and rows[1]["ok"] is False, rows[1]

query = bq.query(
    "SELECT n, name FROM `pycheck.points` WHERE n > @min ORDER BY n",
    job_config=bigquery.QueryJobConfig(query_parameters=[bigquery.ScalarQueryParameter("min", "INT64", 1)]),
)
result = list(query.result(page_size=1))
assert [(r["n"], r["name"]) for r in result] == [(2, None)], result
seen["query_rows"] = len(result)
seen["query_and_wait"] = [dict(r) for r in bq.query_and_wait("SELECT CAST(MAX(n) AS STRING) AS m FROM pycheck.points")]
assert seen["query_and_wait"] == [{"m": "2"}], seen

# Dry runs (nothing runs; the statement type comes back) and a script (its results are the last statement's).
dry = bq.query("SELECT n FROM pycheck.points", job_config=bigquery.QueryJobConfig(dry_run=True, use_query_cache=False))
assert dry.state == "DONE" and dry.statement_type == "SELECT", (dry.state, dry.statement_type)
script_sql = "SELECT 1 AS x; DELETE FROM pycheck.points WHERE n = 2; SELECT COUNT(*) AS left_rows FROM pycheck.points"
dry_script = bq.query(script_sql, job_config=bigquery.QueryJobConfig(dry_run=True, use_query_cache=False))
assert dry_script.statement_type == "SCRIPT", dry_script.statement_type
assert bq.get_table(f"{project}.pycheck.points").num_rows == 2, "a dry run changed the table"
seen["dry_runs"] = [dry.statement_type, dry_script.statement_type]
script = bq.query(script_sql)
seen["script"] = [dict(r) for r in script.result()]
assert script.statement_type == "SCRIPT" and seen["script"] == [{"left_rows": 1}], (script.statement_type, seen["script"])
bq.query("INSERT INTO pycheck.points (n, name) VALUES (2, NULL)").result()

copy = bq.copy_table(f"{project}.pycheck.points", f"{project}.pycheck.copied", job_id="pycheck_copy_1", job_config=bigquery.CopyJobConfig(write_disposition="WRITE_TRUNCATE"))
copy.result()
assert bq.get_table(f"{project}.pycheck.copied").num_rows == 2

# Errors as the client maps them.
try:
    bq.copy_table(f"{project}.pycheck.points", f"{project}.pycheck.copied", job_id="pycheck_copy_1").result()
    raise AssertionError("a second job with the same id was accepted")
except exceptions.Conflict:
    seen["duplicate_job"] = "Conflict"
try:
    bq.get_table(f"{project}.pycheck.missing")
    raise AssertionError("a missing table was found")
except exceptions.NotFound:
    seen["missing_table"] = "NotFound"
bad = bq.load_table_from_file(io.BytesIO(b"geom\nPOINT(500000 200000)\n"), f"{project}.pycheck.bad", job_config=bigquery.LoadJobConfig(schema=schema[:1], source_format="CSV", skip_leading_rows=1))
try:
    bad.result()
    raise AssertionError("a projected coordinate loaded into GEOGRAPHY")
except exceptions.BadRequest:
    seen["out_of_range_geography"] = "BadRequest"
try:
    list(client(keys["nobody"]).list_datasets())
    raise AssertionError("an account without permission listed datasets")
except exceptions.Forbidden:
    seen["no_permission"] = "Forbidden"

bq.delete_dataset("pycheck", delete_contents=True)
assert "pycheck" not in [d.dataset_id for d in bq.list_datasets()]
print(json.dumps(seen, default=str))
