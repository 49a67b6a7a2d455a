#!/usr/bin/env bash
# OpenSSH's sshd for the sftp connector suite (Debian's openssh-server), and the two local
# accounts it logs in: one with password authentication, one with key authentication. The suite
# starts its own sshd on a free loopback port with its own host key and configuration; the
# package's system daemon is kept from starting.
set -euo pipefail
source "$(dirname "$0")/../apt.sh"

if [ ! -x /usr/sbin/sshd ]; then
  install_without_daemon openssh-server "test server of the sftp connector"
fi

# Passwords are set to random values by each run of the suite (test/servers/sshd/server.ts).
for user in geoflow-sftp-pw geoflow-sftp-key; do
  if ! id "$user" >/dev/null 2>&1; then
    as_root useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
  fi
done
