#!/usr/bin/env bash
# MariaDB for the mysql connector suite (Debian's mariadb-server). The suite starts its own
# throwaway server (mariadb-install-db into a temp folder, mariadbd on a free loopback port, run
# as the unprivileged mysql user); the package's system daemon is kept from starting.
set -euo pipefail
source "$(dirname "$0")/../apt.sh"

if [ ! -x /usr/sbin/mariadbd ] || ! command -v mariadb-install-db >/dev/null 2>&1; then
  install_without_daemon mariadb-server "test server of the mysql connector"
fi
