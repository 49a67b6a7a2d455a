#!/usr/bin/env bash
# MariaDB for the mysql connector suite (Debian's mariadb-server). The suite starts its own
# throwaway server (mariadb-install-db into a temp folder, mariadbd on a free loopback port, run
# as the unprivileged mysql user); the package's system daemon is kept from starting.
set -euo pipefail
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if [ ! -x /usr/sbin/mariadbd ] || ! command -v mariadb-install-db >/dev/null 2>&1; then
  echo "[ensure] installing mariadb-server (test server of the mysql connector)" >&2
  # No daemon on port 3306 because of the tests: policy-rc.d refuses service starts during install.
  added_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee /usr/sbin/policy-rc.d >/dev/null
    as_root chmod 755 /usr/sbin/policy-rc.d
    added_policy=1
  fi
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends mariadb-server >/dev/null
  if [ "$added_policy" = 1 ]; then as_root rm -f /usr/sbin/policy-rc.d; fi
fi
