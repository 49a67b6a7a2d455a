#!/usr/bin/env bash
# pygeoapi (OGC API - Features) for the ogcfeatures connector suite, in its own venv under the
# data folder. 0.21.0 is the newest release that runs on the machine's Python 3.11. When the
# install fails, the suite says so and is skipped; the other suites still run.
set -uo pipefail
cd "$(dirname "$0")/../../.."
DATA_DIR="${SVC_DATA_DIR:-.data}"
VENV="$DATA_DIR/tools/pygeoapi"
VERSION=0.21.0
if [ -x "$VENV/bin/pygeoapi" ] && "$VENV/bin/python" -c "import pygeoapi, sys; sys.exit(pygeoapi.__version__ != '$VERSION')" 2>/dev/null; then
  exit 0
fi
printf '[test-servers] installing pygeoapi %s\n' "$VERSION" >&2
rm -rf "$VENV"
if ! { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q --disable-pip-version-check "pygeoapi==$VERSION"; }; then
  rm -rf "$VENV"
  printf '[test-servers] pygeoapi could not be installed: the ogcfeatures suite will be skipped\n' >&2
fi
exit 0
