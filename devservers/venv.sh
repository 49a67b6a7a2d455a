# Sourced by the install.sh of devservers/ and test/servers/: a Python venv under the data folder holding pinned
# packages from PyPI (a vendor's client, or a server the suites start themselves).

# venv_install NAME SKIPPED PIN...: installs the PINs into $SVC_DATA_DIR/tools/NAME unless that venv
# holds exactly them already (its .pins stamp). When the install fails, the venv goes, SKIPPED
# says what the suites skip for want of it, and the call returns 1 (callers carry on: a missing
# tool skips its suite, saying why, and the other suites still run).
venv_install() {
  local name="$1" skipped="$2"
  shift 2
  local venv="${SVC_DATA_DIR:-.data}/tools/$name" pins="$*"
  if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.pins" 2>/dev/null)" = "$pins" ]; then
    return 0
  fi
  printf '[test-servers] installing %s\n' "$pins" >&2
  rm -rf "$venv"
  if python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check "$@"; then
    echo "$pins" > "$venv/.pins"
  else
    rm -rf "$venv"
    printf '[test-servers] %s could not be installed: %s\n' "$pins" "$skipped" >&2
    return 1
  fi
}
