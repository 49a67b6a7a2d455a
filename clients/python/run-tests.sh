#!/usr/bin/env bash
# Tests of the Python client library and CLI: unit tests always; integration tests when the
# project's test command has started a server and exported SVC_TEST_URL (else they are skipped).
# Uses a venv at ${SVC_DATA_DIR:-.data}/venv-python-client (relative to the repository root).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"

data_dir=${SVC_DATA_DIR:-.data}
case "$data_dir" in /*) ;; *) data_dir="$root/$data_dir" ;; esac
venv="$data_dir/venv-python-client"

pick_python() {
  for candidate in "${PYTHON:-}" python3 python3.13 python3.12 python3.11 python3.10; do
    [ -n "$candidate" ] || continue
    command -v "$candidate" >/dev/null 2>&1 || continue
    if "$candidate" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null; then
  python=$(pick_python) || { echo "run-tests.sh: Python 3.10 or newer is required" >&2; exit 1; }
  rm -rf "$venv"
  mkdir -p "$data_dir"
  "$python" -m venv "$venv"
fi

"$venv/bin/python" -m pip install --quiet --disable-pip-version-check -e "clients/python[test]"

set +e
"$venv/bin/python" -m pytest clients/python/tests "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "run-tests.sh: pytest collected no tests; treating that as a failure" >&2
  exit 1
fi
exit "$status"
