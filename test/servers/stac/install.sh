#!/usr/bin/env bash
# stac-fastapi-static (a STAC API over a static catalog) for the stac connector suite, in its own
# venv under the data folder. Its CORS middleware breaks on starlette >= 0.48 (measured with
# 1.0.1: "can only join an iterable" at start), so fastapi and starlette are pinned below that.
# When the install fails, the STAC API part of the suite says so and is skipped.
set -uo pipefail
cd "$(dirname "$0")/../../.."
DATA_DIR="${SVC_DATA_DIR:-.data}"
VENV="$DATA_DIR/tools/stac-fastapi"
PINS=(stac-fastapi-static==1.0.1 fastapi==0.116.2 starlette==0.47.3 uvicorn==0.54.0)
STAMP="$VENV/.pins"
if [ -x "$VENV/bin/python" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "${PINS[*]}" ]; then
  exit 0
fi
printf '[test-servers] installing %s\n' "${PINS[*]}" >&2
rm -rf "$VENV"
if python3 -m venv "$VENV" && "$VENV/bin/pip" install -q --disable-pip-version-check "${PINS[@]}"; then
  echo "${PINS[*]}" > "$STAMP"
else
  rm -rf "$VENV"
  printf '[test-servers] stac-fastapi could not be installed: the STAC API part of the stac suite will be skipped\n' >&2
fi
exit 0
