# Sourced by the test servers' install.sh: root or sudo, and Debian packages whose system
# daemon must not start (the suites start their own throwaway server on a free loopback port).
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# install_without_daemon PACKAGE WHY: policy-rc.d refuses service starts during the install.
install_without_daemon() {
  echo "[ensure] installing $1 ($2)" >&2
  local added_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' | as_root tee /usr/sbin/policy-rc.d >/dev/null
    as_root chmod 755 /usr/sbin/policy-rc.d
    added_policy=1
  fi
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -o DPkg::Lock::Timeout=300 --no-install-recommends "$1" >/dev/null
  if [ "$added_policy" = 1 ]; then as_root rm -f /usr/sbin/policy-rc.d; fi
}
