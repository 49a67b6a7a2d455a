"""Independent GeoParquet and PMTiles readers and writers for interop.int.spec.ts.

Run with the formats-interop venv (test/servers/formats-interop/install.sh):
    python interop.py COMMAND PATH [ARGS...]   -> one JSON object on stdout

Writers make the same small dataset three ways (geopandas 1.1 with covering bbox, DuckDB's own
GeoParquet 1.0, pyarrow with GeoArrow-native polygons); readers report what each library sees.
"""

import datetime
import json
import sys

ROWS = [
    # id, name (non-ASCII, one null), founded (date, one null), polygon in EPSG:2056 (Swiss LV95)
    (1, "Zürich – Ünïcode 東京", datetime.date(1291, 8, 1), [(2683000, 1247000), (2684000, 1247000), (2684000, 1248000), (2683000, 1248000), (2683000, 1247000)]),
    (2, None, None, [(2600000, 1200000), (2601000, 1200000), (2601000, 1201500), (2600000, 1200000)]),
    (3, "Genève", datetime.date(1815, 5, 19), None),
]


def wkt(ring):
    return "POLYGON ((" + ", ".join(f"{x} {y}" for x, y in ring) + "))" if ring else None


def write_geopandas(path):
    import geopandas
    import shapely

    gdf = geopandas.GeoDataFrame(
        {"id": [r[0] for r in ROWS], "name": [r[1] for r in ROWS], "founded": [r[2] for r in ROWS]},
        geometry=[shapely.Polygon(r[3]) if r[3] else None for r in ROWS],
        crs="EPSG:2056",
    )
    gdf.to_parquet(path, schema_version="1.1.0", write_covering_bbox=True)
    return {"written": path}


def write_duckdb(path):
    import duckdb

    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    values = ", ".join(
        f"({r[0]}, {'NULL' if r[1] is None else repr(r[1])}, {'NULL' if r[2] is None else repr(r[2].isoformat())}::DATE, "
        f"{'NULL' if r[3] is None else repr(wkt(r[3]))}::GEOMETRY)"
        for r in ROWS
    )
    # DuckDB core has no PROJ to write EPSG:2056 as PROJJSON: its file says nothing, which GeoParquet reads as OGC:CRS84.
    con.execute(f"COPY (SELECT * FROM (VALUES {values}) t(id, name, founded, geometry)) TO '{path}' (FORMAT parquet)")
    return {"written": path}


def write_geoarrow(path):
    """GeoArrow-native polygons (list<list<struct<x, y>>>), metadata written by hand."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    coord = pa.struct([("x", pa.float64()), ("y", pa.float64())])
    polygons = pa.array([[[{"x": x, "y": y} for x, y in r[3]]] if r[3] else None for r in ROWS], pa.list_(pa.list_(coord)))
    table = pa.table(
        {
            "id": pa.array([r[0] for r in ROWS], pa.int64()),
            "name": pa.array([r[1] for r in ROWS], pa.string()),
            "founded": pa.array([r[2] for r in ROWS], pa.date32()),
            "geometry": polygons,
        }
    )
    geo = {
        "version": "1.1.0",
        "primary_column": "geometry",
        "columns": {"geometry": {"encoding": "polygon", "geometry_types": ["Polygon"], "crs": {"id": {"authority": "EPSG", "code": 2056}, "name": "CH1903+ / LV95"}}},
    }
    pq.write_table(table.replace_schema_metadata({"geo": json.dumps(geo)}), path)
    return {"written": path}


def plain(v):
    if isinstance(v, bytes):
        import shapely

        return shapely.from_wkb(v).wkt
    if isinstance(v, (datetime.date, datetime.datetime)):
        return v.isoformat()
    return v


def read_pyarrow(path):
    import pyarrow.parquet as pq

    f = pq.ParquetFile(path)
    t = f.read()
    md = f.metadata
    stats = []
    for i in range(md.num_row_groups):
        rg = md.row_group(i)
        cols = {rg.column(j).path_in_schema: rg.column(j).statistics for j in range(rg.num_columns)}
        s = {k: [cols[f"bbox.{k}"].min, cols[f"bbox.{k}"].max] for k in ("xmin", "ymin", "xmax", "ymax") if f"bbox.{k}" in cols and cols[f"bbox.{k}"].has_min_max}
        stats.append({"rows": rg.num_rows, "bbox": s})
    return {
        "geo": json.loads(f.schema_arrow.metadata[b"geo"]),
        "types": {fld.name: str(fld.type) for fld in t.schema},
        "rows": [{k: plain(v) for k, v in row.items()} for row in t.to_pylist()],
        "row_groups": stats,
        "compression": md.row_group(0).column(0).compression if md.num_row_groups else None,
    }


def read_duckdb(path):
    import duckdb

    con = duckdb.connect(config={"autoinstall_known_extensions": False, "autoload_known_extensions": False})
    rows = con.execute(f"SELECT * EXCLUDE (geometry, bbox), ST_AsText(geometry) AS wkt, ST_CRS(geometry) AS crs FROM '{path}' ORDER BY id").fetchall()
    names = [d[0] for d in con.description]
    types = dict(con.execute(f"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM '{path}')").fetchall())
    return {"rows": [{k: plain(v) for k, v in zip(names, r)} for r in rows], "types": types}


def read_gdal(path):
    """GDAL 3.12 (pyogrio's wheel), which reads Parquet through DuckDB's ADBC entry point."""
    import glob
    import os

    import duckdb
    import pyogrio
    import shapely
    from pyogrio.raw import read

    so = glob.glob(os.path.join(os.path.dirname(duckdb.__file__), os.pardir, "_duckdb*.so"))[0]
    options = {"ADBC_DRIVER": so}
    info = pyogrio.read_info(f"ADBC:{path}", **options)
    meta, fids, geometry, fields = read(f"ADBC:{path}", **options)
    rows = []
    for i in range(len(geometry)):
        row = {name: plain(fields[j][i]) for j, name in enumerate(meta["fields"])}
        row["wkt"] = shapely.from_wkb(geometry[i]).wkt if geometry[i] is not None else None
        rows.append(row)
    for r in rows:
        for k, v in list(r.items()):
            if hasattr(v, "item"):
                r[k] = v.item()
            if isinstance(v, float) and v != v:
                r[k] = None
    return {
        "driver": info["driver"],
        "crs": info["crs"],
        "features": int(info["features"]),
        "geometry_type": info["geometry_type"],
        "fields": list(info["fields"]),
        "dtypes": [str(d) for d in info["dtypes"]],
        "rows": sorted(rows, key=lambda r: r.get("id") or 0),
    }


def read_pmtiles(path, *zooms_and_points):
    """Header, metadata, and for each (zoom, lon, lat) the decoded features of the tile holding the point."""
    import math

    import mapbox_vector_tile
    from pmtiles.reader import MmapSource, Reader

    with open(path, "rb") as f:
        reader = Reader(MmapSource(f))
        header = reader.header()
        metadata = reader.metadata()
        tiles = []
        args = list(zooms_and_points)
        for i in range(0, len(args), 3):
            z, lon, lat = int(args[i]), float(args[i + 1]), float(args[i + 2])
            n = 2**z
            x = int((lon + 180) / 360 * n)
            y = int((1 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2 * n)
            data = reader.get(z, x, y)
            if data is None:
                tiles.append({"z": z, "x": x, "y": y, "layers": None})
                continue
            import gzip

            if data[:2] == b"\x1f\x8b":
                data = gzip.decompress(data)
            decoded = mapbox_vector_tile.decode(data)
            tiles.append(
                {
                    "z": z,
                    "x": x,
                    "y": y,
                    "layers": {
                        name: [{"type": feat["geometry"]["type"], "properties": feat["properties"]} for feat in layer["features"]]
                        for name, layer in decoded.items()
                    },
                }
            )
    return {
        "min_zoom": header["min_zoom"],
        "max_zoom": header["max_zoom"],
        "tile_type": int(header["tile_type"].value if hasattr(header["tile_type"], "value") else header["tile_type"]),
        "metadata": metadata,
        "tiles": tiles,
    }


COMMANDS = {
    "write-geopandas": write_geopandas,
    "write-duckdb": write_duckdb,
    "write-geoarrow": write_geoarrow,
    "read-pyarrow": read_pyarrow,
    "read-duckdb": read_duckdb,
    "read-gdal": read_gdal,
    "read-pmtiles": read_pmtiles,
}

if __name__ == "__main__":
    print(json.dumps(COMMANDS[sys.argv[1]](*sys.argv[2:]), ensure_ascii=False, default=str))
