#!/usr/bin/env bash
# Independent readers and writers for the GeoParquet and vector tile interoperability tests
# (test/geo/formats/interop.int.spec.ts): pyarrow, DuckDB (core, no extension), GDAL 3.12 (the
# pyogrio wheel; it reads Parquet through DuckDB's ADBC entry point), geopandas (GeoParquet 1.1
# with a covering bbox) and the pmtiles reader with a vector tile decoder. When the install
# fails, the suite says so and is skipped.
set -uo pipefail
cd "$(dirname "$0")/../../.."
source devservers/venv.sh
venv_install formats-interop 'the GeoParquet/PMTiles interoperability suite will be skipped' \
  duckdb==1.5.5 pyarrow==26.0.1 pyogrio==0.13.0 geopandas==1.2.0 shapely==2.2.0 pmtiles==3.8.1 mapbox-vector-tile==2.2.0
exit 0
