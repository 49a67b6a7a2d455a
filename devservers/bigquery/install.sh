#!/usr/bin/env bash
# Google's own BigQuery client for Python (PyPI google-cloud-bigquery), in a venv under the data
# folder: it runs the BigQuery stand-in (serve.py, which verifies request signatures with
# google-auth) and checks the stand-in's answers in the bigquery suite, so the stand-in cannot
# drift from the protocol the client library speaks.
set -uo pipefail
cd "$(dirname "$0")/../.."
source devservers/venv.sh
venv_install bigquery 'the bigquery suites will be skipped' google-cloud-bigquery==3.47.0 cryptography
exit 0
