#!/usr/bin/env bash
# An S3 API for the s3 connector suite: moto's server from PyPI, in a venv under the data folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV="${SVC_DATA_DIR:-.data}/tools/moto"
MOTO_VERSION=5.2.5
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import moto, sys; sys.exit(moto.__version__ != '$MOTO_VERSION')" 2>/dev/null; then
  echo "[ensure] installing moto $MOTO_VERSION (S3 test server of the s3 connector)" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "moto[server]==$MOTO_VERSION"
fi
