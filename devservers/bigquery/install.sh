#!/usr/bin/env bash
# Google's own BigQuery client for Python (PyPI google-cloud-bigquery), in a venv under the data
# folder: it runs the BigQuery stand-in (serve.py, which verifies request signatures with
# google-auth) and checks the stand-in's answers in the bigquery suite, so the stand-in cannot
# drift from the protocol the client library speaks.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV="${SVC_DATA_DIR:-.data}/tools/bigquery"
BIGQUERY_VERSION=3.47.0
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('google-cloud-bigquery') != '$BIGQUERY_VERSION')" 2>/dev/null; then
  echo "[ensure] installing google-cloud-bigquery $BIGQUERY_VERSION (checks the BigQuery stand-in of the bigquery connector suite)" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "google-cloud-bigquery==$BIGQUERY_VERSION" "cryptography"
fi
