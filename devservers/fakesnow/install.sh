#!/usr/bin/env bash
# A Snowflake stand-in for the snowflake connector suite: fakesnow's server (PyPI, DuckDB
# underneath), in a venv under the data folder.
set -euo pipefail
cd "$(dirname "$0")/../.."
VENV="${SVC_DATA_DIR:-.data}/tools/fakesnow"
FAKESNOW_VERSION=0.12.1
# fakesnow 0.12 imports snowflake.connector.converter, which the connector's 5.x line dropped.
CONNECTOR_VERSION=4.8.1
if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('fakesnow') != '$FAKESNOW_VERSION' or m.version('snowflake-connector-python') != '$CONNECTOR_VERSION')" 2>/dev/null; then
  echo "[ensure] installing fakesnow $FAKESNOW_VERSION (Snowflake test server of the snowflake connector)" >&2
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --disable-pip-version-check "fakesnow[server]==$FAKESNOW_VERSION" "snowflake-connector-python==$CONNECTOR_VERSION"
fi
