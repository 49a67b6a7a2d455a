"""GeoParquet for geoflow: read, inspect and write, run in the sandbox by geo/formats/engine.ts.

Usage: python -I geoflow_formats.py COMMAND REQUEST_JSON

  inspect           what a (Geo)Parquet file or folder of files holds, from its footers only
  to-gpkg           a (Geo)Parquet file or folder -> a GeoPackage the service's GDAL 3.6 reads
  prepare           inspect, then to-gpkg
  write-geoparquet  a layer GDAL 3.12 reads -> GeoParquet 1.1 (WKB, covering bbox, PROJJSON CRS,
                    rows in Hilbert order), streamed with bounded memory

The answer is one JSON object on the last line of stdout; progress lines ("progress N") come
before it. A failure the user can act on exits 3 with {"error": "..."}; anything else is a bug
and exits non-zero with a traceback on stderr.

Engines (docs/decisions.md, "GeoParquet engine"): pyarrow (Parquet, Arrow), pyogrio's bundled
GDAL 3.12 (reading any vector source as Arrow, writing the GeoPackage), numpy and shapely (WKB
bounds, GeoArrow to WKB). Nothing here opens a network connection or a file it was not named.

The commands live in the package geoparquet_engine beside this file (parquet_metadata: inspect;
to_gpkg; write_geoparquet; with geometry_encodings, parquet_reading, gdal_crs, hilbert_order).
"""

import os

# Read by GDAL when pyogrio registers its drivers: nothing that follows references to other files
# or to services, even inside the sandbox.
os.environ.setdefault(
    "GDAL_SKIP",
    "OGR_VRT WFS OAPIF OGCAPI EEDA PLSCENES CSW NGW Elasticsearch Carto AmigoCloud HTTP GDALG ADBC",
)
os.environ.setdefault("GDAL_HTTP_TIMEOUT", "1")
os.environ.setdefault("CPL_VSIL_CURL_ALLOWED_EXTENSIONS", ".none")
# Arrow's jemalloc reserves address space in large steps; the sandbox limits address space.
os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")

import json  # noqa: E402
import sys  # noqa: E402

# -I leaves the script's folder off sys.path (nothing the user can write is imported); the
# package beside this file is ours, mounted read-only in the sandbox like this script.
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))

from geoparquet_engine.parquet_metadata import inspect  # noqa: E402
from geoparquet_engine.reporting import UserError  # noqa: E402
from geoparquet_engine.to_gpkg import to_gpkg  # noqa: E402
from geoparquet_engine.write_geoparquet import write_geoparquet  # noqa: E402


def prepare(req):
    """inspect, then to-gpkg, in one process (an upload pays the interpreter's start once)."""
    inspection = inspect(req)
    copy = to_gpkg({**req, "layer_name": inspection["layer"]["name"]})
    return {"inspection": inspection, "copy": copy}


COMMANDS = {"inspect": inspect, "to-gpkg": to_gpkg, "prepare": prepare, "write-geoparquet": write_geoparquet}


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    request = json.loads(sys.argv[2])
    try:
        result = COMMANDS[sys.argv[1]](request)
    except UserError as e:
        print(json.dumps({"error": str(e)}, ensure_ascii=False), flush=True)
        sys.exit(3)
    print(json.dumps(result, ensure_ascii=False, allow_nan=False, default=str), flush=True)


if __name__ == "__main__":
    main()
