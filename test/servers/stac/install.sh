#!/usr/bin/env bash
# stac-fastapi-static (a STAC API over a static catalog) for the stac connector suite, in its own
# venv under the data folder. Its CORS middleware breaks on starlette >= 0.48 (measured with
# 1.0.1: "can only join an iterable" at start), so fastapi and starlette are pinned below that.
# When the install fails, the STAC API part of the suite says so and is skipped.
set -uo pipefail
cd "$(dirname "$0")/../../.."
source devservers/venv.sh
venv_install stac-fastapi 'the STAC API part of the stac suite will be skipped' \
  stac-fastapi-static==1.0.1 fastapi==0.116.2 starlette==0.47.3 uvicorn==0.54.0
exit 0
