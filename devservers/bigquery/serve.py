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

import json
import sys
import threading
from http.server import ThreadingHTTPServer

from standin.accounts import accounts
from standin.handler import Handler
from standin.store import PORT, PROJECT

server = ThreadingHTTPServer(("127.0.0.1", PORT), Handler)
server.daemon_threads = True
threading.Thread(target=server.serve_forever, daemon=True).start()
print(json.dumps({"port": PORT, "project": PROJECT, "keys": accounts}), flush=True)
sys.stdin.read()
server.shutdown()
