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
source devservers/venv.sh
venv_install map-clients 'the GeoServer/GeoNode client checks will be skipped' geoserver-rest==2.10.0 geonodectl==0.3.5
exit 0
