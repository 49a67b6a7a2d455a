"""The stand-in's state: its port and project (from serve.py's arguments), the errors it answers, and what it holds in memory."""

import sqlite3
import sys
import threading
import time

PORT = int(sys.argv[1])
PROJECT = sys.argv[2]
SCOPE = "https://www.googleapis.com/auth/bigquery"

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
