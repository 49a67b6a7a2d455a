#!/usr/bin/env bash
# ckanapi (PyPI), CKAN's own Python client, in its own venv under the data folder: the ckan suite
# drives the Action API stand-in with it, so the stand-in answers as CKAN does. Real CKAN is not
# installed: it needs Solr to index datasets, and Debian has no Solr package. When the install
# fails, the part of the suite that needs ckanapi says so and is skipped.
set -uo pipefail
cd "$(dirname "$0")/../../.."
DATA_DIR="${SVC_DATA_DIR:-.data}"
VENV="$DATA_DIR/tools/ckanapi"
PINS=(ckanapi==4.11)
STAMP="$VENV/.pins"
if [ -x "$VENV/bin/python" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "${PINS[*]}" ]; then
  exit 0
fi
printf '[test-servers] installing %s\n' "${PINS[*]}" >&2
rm -rf "$VENV"
if python3 -m venv "$VENV" && "$VENV/bin/pip" install -q --disable-pip-version-check "${PINS[@]}"; then
  echo "${PINS[*]}" > "$STAMP"
else
  rm -rf "$VENV"
  printf '[test-servers] ckanapi could not be installed: the ckanapi checks of the ckan suite will be skipped\n' >&2
fi
exit 0
