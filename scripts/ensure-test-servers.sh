#!/usr/bin/env bash
# Installs what the test suites' servers need (MariaDB, OpenSSH, an S3 API, pygeoapi …), never
# needed by `npm start`: a user points Sources and Destinations at their own servers. Each server
# folder under devservers/ and test/servers/ may hold an install.sh; this runs them all, idempotently.
set -euo pipefail
cd "$(dirname "$0")/.."
for script in devservers/*/install.sh test/servers/*/install.sh; do
  [ -f "$script" ] || continue
  bash "$script"
done
