#!/usr/bin/env bash
# OpenSSH's sshd for the sftp connector suite (Debian's openssh-server), and the two local
# accounts it logs in: one with password authentication, one with key authentication. The suite
# starts its own sshd on a free loopback port with its own host key and configuration; the
# package's system daemon is kept from starting.
set -euo pipefail
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if [ ! -x /usr/sbin/sshd ]; then
  echo "[ensure] installing openssh-server (test server of the sftp connector)" >&2
  # No daemon on port 22 because of the tests: policy-rc.d refuses service starts during install.
  added_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee /usr/sbin/policy-rc.d >/dev/null
    as_root chmod 755 /usr/sbin/policy-rc.d
    added_policy=1
  fi
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server >/dev/null
  if [ "$added_policy" = 1 ]; then as_root rm -f /usr/sbin/policy-rc.d; fi
fi

# Passwords are set to random values by each run of the suite (test/servers/sshd/server.ts).
for user in geoflow-sftp-pw geoflow-sftp-key; do
  if ! id "$user" >/dev/null 2>&1; then
    as_root useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
  fi
done
