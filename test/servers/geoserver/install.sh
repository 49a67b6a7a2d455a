#!/usr/bin/env bash
# For the geoserver and geonode connector suites: MapServer (Debian's cgi-mapserver), a real
# WFS 2.0 server that the GeoServer stand-in serves its layers through, and the vendors' client
# libraries that check the stand-ins (geoserver-rest for GeoServer's REST API, geonodectl for
# GeoNode's API v2) in a venv under the data folder. A failed install skips those suites, saying why.
set -uo pipefail
cd "$(dirname "$0")/../../.."
source test/servers/apt.sh
if [ ! -x /usr/lib/cgi-bin/mapserv ]; then
  install_without_daemon cgi-mapserver "WFS server behind the GeoServer stand-in" || printf '[test-servers] cgi-mapserver could not be installed: the geoserver suite will be skipped\n' >&2
fi
DATA_DIR="${SVC_DATA_DIR:-.data}"
VENV="$DATA_DIR/tools/map-clients"
WANT="geoserver-rest==2.10.0 geonodectl==0.3.5"
if [ -x "$VENV/bin/python" ] && [ "$(cat "$VENV/installed" 2>/dev/null)" = "$WANT" ]; then
  exit 0
fi
printf '[test-servers] installing %s\n' "$WANT" >&2
rm -rf "$VENV"
# shellcheck disable=SC2086
if python3 -m venv "$VENV" && "$VENV/bin/pip" install -q --disable-pip-version-check $WANT; then
  echo "$WANT" > "$VENV/installed"
else
  rm -rf "$VENV"
  printf '[test-servers] the GeoServer/GeoNode client libraries could not be installed: their checks will be skipped\n' >&2
fi
exit 0
