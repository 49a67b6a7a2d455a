#!/usr/bin/env bash
# The vendors' own Python clients, which the suites drive against the QFieldCloud, Mergin Maps and
# Google Drive stand-ins (test/servers/qfieldcloud, merginmaps, gdrive) so a stand-in cannot drift
# from what the real service answers. One venv each under the data folder: qfieldcloud-sdk and
# mergin-client pin conflicting dependencies (pip: ResolutionImpossible in one venv).
# When an install fails, the check of that stand-in says so and is skipped.
set -uo pipefail
cd "$(dirname "$0")/../../.."
source devservers/venv.sh
skipped='the suite check that uses it will be skipped'
venv_install qfieldcloud-sdk "$skipped" qfieldcloud-sdk==0.18.0
venv_install mergin-client "$skipped" mergin-client==0.15.0
venv_install google-api-python-client "$skipped" google-api-python-client==2.202.0
exit 0
