#!/usr/bin/env bash
# The vendors' own Python clients, which the suites drive against the QFieldCloud, Mergin Maps and
# Google Drive stand-ins (test/servers/qfieldcloud, merginmaps, gdrive) so a stand-in cannot drift
# from what the real service answers. One venv each under the data folder: qfieldcloud-sdk and
# mergin-client pin conflicting dependencies (pip: ResolutionImpossible in one venv).
# When an install fails, the check of that stand-in says so and is skipped.
set -uo pipefail
cd "$(dirname "$0")/../../.."
DATA_DIR="${SVC_DATA_DIR:-.data}"
install_client() {
  local name="$1" pin="$2"
  local venv="$DATA_DIR/tools/$name"
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.pins" 2>/dev/null)" = "$pin" ]; then
    return 0
  fi
  printf '[test-servers] installing %s\n' "$pin" >&2
  rm -rf "$venv"
  if python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check "$pin"; then
    echo "$pin" > "$venv/.pins"
  else
    rm -rf "$venv"
    printf '[test-servers] %s could not be installed: the suite check that uses it will be skipped\n' "$pin" >&2
  fi
}
install_client qfieldcloud-sdk qfieldcloud-sdk==0.18.0
install_client mergin-client mergin-client==0.15.0
install_client google-api-python-client google-api-python-client==2.202.0
exit 0
