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

import itertools  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.dataset as ds  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402


class UserError(Exception):
    """Something about the input or the request that the user can fix."""


_last_percent = [-1]


def progress(done, total):
    """A "progress N" line when the percentage changes (engine.ts reads them)."""
    if total:
        percent = min(100, int(done * 100 / total))
        if percent != _last_percent[0]:
            _last_percent[0] = percent
            print(f"progress {percent}", flush=True)


# --- GeoParquet metadata -------------------------------------------------------------------

GEOARROW_DEPTH = {"point": 0, "linestring": 1, "multipoint": 1, "polygon": 2, "multilinestring": 2, "multipolygon": 3}
GEOMETRY_NAMES = ["geometry", "geom", "wkb_geometry", "wkb", "the_geom", "shape"]
X_NAMES = ["lon", "long", "longitude", "x", "lng"]
Y_NAMES = ["lat", "latitude", "y"]
GEOARROW_TYPE_NAMES = {
    "point": "Point",
    "linestring": "LineString",
    "polygon": "Polygon",
    "multipoint": "MultiPoint",
    "multilinestring": "MultiLineString",
    "multipolygon": "MultiPolygon",
}
WKB_TYPES = {1: "Point", 2: "LineString", 3: "Polygon", 4: "MultiPoint", 5: "MultiLineString", 6: "MultiPolygon", 7: "GeometryCollection"}


def parquet_files(paths):
    """The .parquet files under the given files or folders, sorted (a partitioned dataset's parts)."""
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, dirs, names in os.walk(p):
                dirs[:] = sorted(d for d in dirs if not d.startswith((".", "_")))
                for n in sorted(names):
                    if not n.startswith((".", "_")) and (n.endswith(".parquet") or n.endswith(".geoparquet") or "." not in n):
                        files.append(os.path.join(root, n))
        else:
            files.append(p)
    if not files:
        raise UserError("The folder holds no .parquet files")
    return files


def open_parquet(paths):
    files = parquet_files(paths)
    try:
        first = pq.ParquetFile(files[0])
    except Exception as e:  # pyarrow says what is wrong with the footer
        raise UserError(f"Not a readable Parquet file: {e}")
    # Hive-style folders (year=2024/part-0.parquet) add their keys as columns.
    root = paths[0] if len(paths) == 1 and os.path.isdir(paths[0]) else None
    try:
        dataset = ds.dataset(files, format="parquet", partitioning="hive" if root else None, partition_base_dir=root)
    except Exception as e:
        raise UserError(f"The Parquet files cannot be read as one dataset: {e}")
    return files, first, dataset


def geo_metadata(schema):
    raw = (schema.metadata or {}).get(b"geo")
    if not raw:
        return None
    try:
        geo = json.loads(raw)
    except ValueError:
        raise UserError("The file's 'geo' metadata is not valid JSON")
    if not isinstance(geo, dict) or not isinstance(geo.get("columns"), dict) or geo.get("primary_column") not in geo["columns"]:
        raise UserError("The file's 'geo' metadata names no primary geometry column")
    return geo


def find_name(names, wanted):
    lower = {n.lower(): n for n in names}
    for w in wanted:
        if w.lower() in lower:
            return lower[w.lower()]
    return None


def geometry_plan(schema, options):
    """How rows become geometries: the GeoParquet metadata, or a column the user names, or lon/lat.

    Answers {"kind": "wkb"|"geoarrow"|"xy", "column"| "x","y", "encoding", "crs" (PROJJSON or a
    string GDAL reads, or None), "geometry_types", "bbox", "version", "covering"}.
    """
    geo = geo_metadata(schema)
    names = schema.names
    named = options.get("GEOMETRY_COLUMN")
    if geo and not (named and named != geo["primary_column"]):
        column = geo["primary_column"]
        meta = geo["columns"][column]
        encoding = str(meta.get("encoding", "WKB")).lower()
        if column not in names:
            raise UserError(f"The 'geo' metadata names the column {column!r}, which the file does not have")
        if encoding != "wkb" and encoding not in GEOARROW_DEPTH:
            raise UserError(f"The geometry encoding {meta.get('encoding')!r} is not one GeoParquet defines (WKB, point, linestring, polygon, multipoint, multilinestring, multipolygon)")
        crs = meta["crs"] if "crs" in meta else "OGC:CRS84"  # absent means OGC:CRS84; null means unknown
        return {
            "kind": "wkb" if encoding == "wkb" else "geoarrow",
            "column": column,
            "encoding": encoding,
            "crs": crs,
            "geometry_types": meta.get("geometry_types") or [],
            "bbox": meta.get("bbox"),
            "version": geo.get("version"),
            "covering": (meta.get("covering") or {}).get("bbox"),
            "other_geometry_columns": [c for c in geo["columns"] if c != column],
        }
    crs_option = options.get("CRS")
    if named:
        if named not in names:
            raise UserError(f"No column named {named!r}; the columns are: {', '.join(names)}")
        field = schema.field(named)
        if not (pa.types.is_binary(field.type) or pa.types.is_large_binary(field.type) or pa.types.is_string(field.type) or pa.types.is_large_string(field.type)):
            raise UserError(f"Column {named!r} holds {field.type}, not WKB (binary) or WKT (text)")
        kind = "wkb" if pa.types.is_binary(field.type) or pa.types.is_large_binary(field.type) else "wkt"
        return {"kind": kind, "column": named, "encoding": kind, "crs": crs_option, "geometry_types": [], "bbox": None, "version": None, "covering": None, "other_geometry_columns": []}
    for key in ("X_COLUMN", "Y_COLUMN"):
        if options.get(key) and options[key] not in names:
            raise UserError(f"No column named {options[key]!r}; the columns are: {', '.join(names)}")
    x = options.get("X_COLUMN") or find_name(names, X_NAMES)
    y = options.get("Y_COLUMN") or find_name(names, Y_NAMES)
    if x and y and x in names and y in names:
        for c in (x, y):
            if not (pa.types.is_floating(schema.field(c).type) or pa.types.is_integer(schema.field(c).type)):
                raise UserError(f"Column {c!r} holds {schema.field(c).type}, not numbers")
        return {"kind": "xy", "x": x, "y": y, "encoding": "xy", "crs": crs_option or "EPSG:4326", "geometry_types": ["Point"], "bbox": None, "version": None, "covering": None, "other_geometry_columns": []}
    guess = find_name(names, GEOMETRY_NAMES)
    if guess and (pa.types.is_binary(schema.field(guess).type) or pa.types.is_large_binary(schema.field(guess).type)):
        return {"kind": "wkb", "column": guess, "encoding": "wkb", "crs": crs_option, "geometry_types": [], "bbox": None, "version": None, "covering": None, "other_geometry_columns": []}
    return None


def field_type(t):
    if pa.types.is_boolean(t):
        return "Boolean"
    if pa.types.is_integer(t):
        return "Integer64" if t.bit_width > 32 or (t.bit_width == 32 and pa.types.is_unsigned_integer(t)) else "Integer"
    if pa.types.is_floating(t) or pa.types.is_decimal(t):
        return "Real"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "String"
    if pa.types.is_date(t):
        return "Date"
    if pa.types.is_timestamp(t):
        return "DateTime"
    if pa.types.is_time(t):
        return "Time"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "Binary"
    if pa.types.is_dictionary(t):
        return field_type(t.value_type)
    return "String"  # lists, structs, maps: JSON text, as GeoPackage stores them


def crs_label(crs):
    """'EPSG:4326' for a PROJJSON whose id is an authority code, the name otherwise."""
    if crs is None:
        return None
    if isinstance(crs, str):
        return crs
    ident = crs.get("id") if isinstance(crs, dict) else None
    if isinstance(ident, dict) and ident.get("authority") and ident.get("code") is not None:
        return f"{ident['authority']}:{ident['code']}"
    return crs.get("name") if isinstance(crs, dict) else None


def covering_bbox_from_statistics(files, covering):
    """The union of the covering column's row-group statistics: the extent without reading rows."""
    paths = {k: tuple(v) for k, v in covering.items()} if covering else {}
    if set(paths) != {"xmin", "ymin", "xmax", "ymax"}:
        return None
    box = [np.inf, np.inf, -np.inf, -np.inf]
    for f in files:
        md = pq.ParquetFile(f).metadata
        index = {md.schema.column(i).path: i for i in range(md.num_columns)}
        for rg in range(md.num_row_groups):
            for k, pos in (("xmin", 0), ("ymin", 1), ("xmax", 2), ("ymax", 3)):
                i = index.get(".".join(paths[k]))
                if i is None:
                    return None
                st = md.row_group(rg).column(i).statistics
                if st is None or not st.has_min_max:
                    return None
                box[pos] = min(box[pos], st.min) if pos < 2 else max(box[pos], st.max)
    return box if np.isfinite(box).all() else None


def inspect(req):
    options = req.get("open_options") or {}
    files, first, dataset = open_parquet(req["paths"])
    schema = dataset.schema
    plan = geometry_plan(first.schema_arrow, options)
    rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    warnings = []
    fields = []
    skip = set()
    if plan:
        skip = {plan.get("column"), *(plan.get("other_geometry_columns") or [])}
        if plan["kind"] == "xy":
            skip = set()
        if plan.get("covering"):
            skip.add(plan["covering"]["xmin"][0])
    for f in schema:
        if f.name in skip:
            continue
        fields.append({"name": f.name, "type": field_type(f.type)})
    layer = {"name": req.get("layer_name") or "layer", "feature_count": rows, "fields": fields}
    if plan is None:
        layer.update({"geometry_type": None, "has_geometry": False, "crs": None, "crs_projjson": None, "extent": None})
        warnings.append(
            "The Parquet file has no GeoParquet metadata and no geometry column was found: name one with the open option GEOMETRY_COLUMN "
            "(WKB or WKT), or X_COLUMN and Y_COLUMN; it is read as a table without geometry"
        )
        return {"layer": layer, "geoparquet_version": None, "encoding": None, "warnings": warnings, "files": len(files)}
    types = plan["geometry_types"]
    if plan["kind"] == "geoarrow" and not types:
        types = [GEOARROW_TYPE_NAMES[plan["encoding"]]]
    bbox = plan["bbox"]
    if not bbox and plan.get("covering"):
        bbox = covering_bbox_from_statistics(files, plan["covering"])
    if bbox and len(bbox) == 6:  # 3D bbox: [xmin, ymin, zmin, xmax, ymax, zmax]
        bbox = [bbox[0], bbox[1], bbox[3], bbox[4]]
    if len(files) > 1 and plan["bbox"]:
        boxes = [geo_metadata(pq.ParquetFile(f).schema_arrow) for f in files]
        try:
            bs = [b["columns"][plan["column"]]["bbox"] for b in boxes]
            bs = [[b[0], b[1], b[-3] if len(b) == 6 else b[2], b[-2] if len(b) == 6 else b[3]] for b in bs]
            bbox = [min(b[0] for b in bs), min(b[1] for b in bs), max(b[2] for b in bs), max(b[3] for b in bs)]
        except (KeyError, TypeError, IndexError):
            bbox = None
    crs = plan["crs"]
    if crs is None and plan["kind"] in ("wkb", "geoarrow") and plan["version"]:
        warnings.append("The GeoParquet metadata says the coordinate reference system is unknown (crs: null)")
    if plan.get("other_geometry_columns"):
        warnings.append(f"Only the primary geometry column {plan['column']!r} is read as geometry; {', '.join(plan['other_geometry_columns'])} are kept as WKB")
    layer.update(
        {
            "geometry_type": geometry_type_label(types),
            "has_geometry": True,
            "crs": crs_label(crs),
            "crs_projjson": crs if isinstance(crs, dict) else None,
            "crs_text": crs if isinstance(crs, str) else None,
            "extent": bbox,
        }
    )
    return {"layer": layer, "geoparquet_version": plan["version"], "encoding": plan["encoding"], "warnings": warnings, "files": len(files)}


def geometry_type_label(types):
    """GeoParquet's list (['Point', 'MultiPolygon Z']) as the service labels a layer's type."""
    if not types:
        return "GEOMETRY"
    upper = sorted({t.upper() for t in types})
    if len(upper) == 1:
        return upper[0]
    z = all(t.endswith(" Z") for t in upper)
    base = {t.replace(" Z", "").replace("MULTI", "") for t in upper}
    if len(base) == 1:  # Polygon and MultiPolygon: the multi type holds both
        return f"MULTI{base.pop()}{' Z' if z else ''}"
    return f"GEOMETRY{' Z' if z else ''}"


# --- Reading: Arrow batches with WKB geometry ------------------------------------------------


def rebased(arr):
    """A list array's offsets starting at 0 and the matching slice of its child."""
    offsets = arr.offsets.to_numpy()
    start, end = int(offsets[0]), int(offsets[-1])
    return (offsets - start).astype(np.int64), arr.values.slice(start, end - start)


def geoarrow_to_wkb(arr, encoding):
    import shapely

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    nulls = arr.is_null().to_numpy(zero_copy_only=False)
    offsets = []
    child = arr
    for _ in range(GEOARROW_DEPTH[encoding]):
        off, child = rebased(child)
        offsets.append(off)
    if pa.types.is_struct(child.type):
        dims = [child.field(i).to_numpy(zero_copy_only=False) for i in range(child.type.num_fields)]
        coords = np.column_stack(dims).astype(np.float64)
    elif pa.types.is_fixed_size_list(child.type):
        size = child.type.list_size
        coords = child.flatten().to_numpy(zero_copy_only=False).reshape(-1, size).astype(np.float64)
    else:
        raise UserError(f"The GeoArrow {encoding} column has an unexpected layout ({child.type})")
    kind = getattr(shapely.GeometryType, encoding.upper())
    # shapely wants the innermost offsets first (coordinates per ring, then rings per polygon …).
    geoms = shapely.from_ragged_array(kind, coords, tuple(reversed(offsets)) if offsets else None)
    geoms[nulls] = None
    return pa.array(shapely.to_wkb(geoms, output_dimension=coords.shape[1] if coords.shape[1] in (2, 3) else 2), pa.binary())


def xy_to_wkb(x, y):
    x = x.to_numpy(zero_copy_only=False).astype(np.float64)
    y = y.to_numpy(zero_copy_only=False).astype(np.float64)
    n = len(x)
    raw = np.zeros((n, 21), np.uint8)
    raw[:, 0] = 1
    raw[:, 1] = 1
    raw[:, 5:13] = x.astype("<f8").view(np.uint8).reshape(n, 8)
    raw[:, 13:21] = y.astype("<f8").view(np.uint8).reshape(n, 8)
    offsets = np.arange(0, 21 * (n + 1), 21, dtype=np.int32)
    missing = np.isnan(x) | np.isnan(y)
    validity = pa.array(~missing).buffers()[1] if missing.any() else None
    return pa.Array.from_buffers(pa.binary(), n, [validity, pa.py_buffer(offsets), pa.py_buffer(raw.tobytes())], null_count=int(missing.sum()))


def wkt_to_wkb(arr):
    import shapely

    return pa.array(shapely.to_wkb(shapely.from_wkt(arr.to_numpy(zero_copy_only=False), on_invalid="raise")), pa.binary())


def to_json_text(arr):
    """Nested values (lists, structs, maps) as JSON text: GeoPackage has no nested types."""
    return pa.array([None if v is None else json.dumps(v, ensure_ascii=False, default=str) for v in arr.to_pylist()], pa.string())


def plain_column(arr):
    t = arr.type
    if pa.types.is_dictionary(t):
        return plain_column(arr.dictionary_decode())
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_struct(t) or pa.types.is_map(t) or pa.types.is_fixed_size_list(t):
        return to_json_text(arr)
    if pa.types.is_unsigned_integer(t) and t.bit_width == 64:
        return pc.cast(arr, pa.int64())
    if pa.types.is_decimal(t) or pa.types.is_float16(t):
        return pc.cast(arr, pa.float64())
    if pa.types.is_time(t) or pa.types.is_duration(t) or pa.types.is_interval(t):
        return pc.cast(arr, pa.string()) if not pa.types.is_time(t) else pc.cast(pc.cast(arr, pa.time64("us")), pa.string())
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pc.cast(arr, pa.string())
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t) or pa.types.is_fixed_size_binary(t):
        return pc.cast(arr, pa.binary())
    return arr


def wkb_type_names(wkb):
    """GeoParquet geometry type names of the WKB values in an array (ISO and EWKB Z flags)."""
    values = [v for v in wkb.to_pylist() if v] if len(wkb) <= 4096 else None
    if values is None:
        bufs = wkb.buffers()
        odt = np.int64 if pa.types.is_large_binary(wkb.type) else np.int32
        offs = np.frombuffer(bufs[1], odt)[wkb.offset : wkb.offset + len(wkb) + 1]
        data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
        lens = np.diff(offs)
        starts = offs[:-1][lens >= 5]
        if len(starts) == 0:
            return set()
        little = data[starts] == 1
        b = [data[starts + i].astype(np.uint32) for i in range(1, 5)]
        code = np.where(little, b[0] | (b[1] << 8) | (b[2] << 16) | (b[3] << 24), b[3] | (b[2] << 8) | (b[1] << 16) | (b[0] << 24))
        codes = np.unique(code)
    else:
        codes = np.unique([int.from_bytes(v[1:5], "little" if v[0] == 1 else "big") for v in values if len(v) >= 5])
    names = set()
    for c in codes:
        c = int(c)
        z = bool(c & 0x80000000) or (c % 10000) // 1000 in (1, 3)
        base = (c & 0x0FFFFFFF) % 1000
        if base in WKB_TYPES:
            names.add(WKB_TYPES[base] + (" Z" if z else ""))
    return names


WKB_COLUMN = "__geoflow_wkb"


def attribute_columns(plan, schema):
    """The columns copied as attributes: all but the geometry and the covering bbox (other geometry columns stay, as WKB)."""
    skip = set()
    if plan:
        if plan.get("column"):
            skip.add(plan["column"])
        if plan.get("covering"):
            skip.add(plan["covering"]["xmin"][0])
    return [n for n in schema.names if n not in skip]


def converted(batch, plan, columns):
    """One batch with plain attribute columns and the geometry as WKB in WKB_COLUMN."""
    arrays = [plain_column(batch.column(n)) for n in columns]
    names = list(columns)
    if plan:
        if plan["kind"] == "wkb":
            g = plain_column(batch.column(plan["column"]))
        elif plan["kind"] == "wkt":
            g = wkt_to_wkb(batch.column(plan["column"]))
        elif plan["kind"] == "geoarrow":
            g = geoarrow_to_wkb(batch.column(plan["column"]), plan["encoding"])
        else:
            g = xy_to_wkb(batch.column(plan["x"]), batch.column(plan["y"]))
        arrays.append(g)
        names.append(WKB_COLUMN)
    return pa.RecordBatch.from_arrays(arrays, names=names)


BATCH_BYTES = 16 * 1024 * 1024


def batch_rows(rows, nbytes, largest=65536):
    """Rows per batch so that one batch holds about BATCH_BYTES of decoded data (wide polygons: a few thousand)."""
    if rows <= 0 or nbytes <= 0:
        return largest
    return int(max(1024, min(largest, BATCH_BYTES * rows // nbytes)))


def parquet_batches(plan, dataset, batch_size=None):
    """Record batches of the dataset, converted; one empty batch for a dataset without rows (its schema).

    Each file is read one batch at a time without read-ahead: the dataset scanner reads up to 16
    batches ahead on every core, which for 1M 50-vertex polygons held 1.4 GB (measured; 193 MB so).
    Hive partition keys become constant columns; a column a part lacks is null in its rows.
    """
    columns = attribute_columns(plan, dataset.schema)
    read = list(dict.fromkeys(columns + ([plan["column"]] if plan and plan.get("column") else [])))
    schema = dataset.schema
    empty = True
    for fragment in dataset.get_fragments():
        pf = pq.ParquetFile(fragment.path, pre_buffer=False, buffer_size=1 << 20)
        md = pf.metadata
        rows = batch_size or batch_rows(md.num_rows, sum(md.row_group(i).total_byte_size for i in range(md.num_row_groups)))
        keys = ds.get_partition_keys(fragment.partition_expression) or {}
        here = [n for n in read if n in pf.schema_arrow.names]
        for batch in pf.iter_batches(batch_size=rows, columns=here, use_threads=False):
            if not batch.num_rows:
                continue
            empty = False
            arrays = []
            for n in read:
                t = schema.field(n).type
                if n in here:
                    a = batch.column(n)
                    arrays.append(a if a.type == t else a.cast(t))
                elif n in keys:
                    arrays.append(pa.array([keys[n]] * batch.num_rows).cast(t))
                else:
                    arrays.append(pa.nulls(batch.num_rows, t))
            yield converted(pa.RecordBatch.from_arrays(arrays, names=read), plan, columns)
    if empty:
        yield converted(pa.RecordBatch.from_pylist([], schema=dataset.schema), plan, columns)


# --- CRS through the bundled GDAL --------------------------------------------------------------


_gdal = None


def libgdal():
    """The GDAL library inside the pyogrio wheel, for what pyogrio does not expose (PROJJSON)."""
    global _gdal
    if _gdal is None:
        import ctypes
        import glob

        import pyogrio

        libs = glob.glob(os.path.join(os.path.dirname(pyogrio.__file__), os.pardir, "pyogrio.libs", "libgdal*.so*"))
        lib = ctypes.CDLL(libs[0])
        lib.OSRNewSpatialReference.restype = ctypes.c_void_p
        lib.OSRNewSpatialReference.argtypes = [ctypes.c_char_p]
        lib.OSRSetFromUserInput.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
        lib.OSRExportToPROJJSON.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
        lib.OSRExportToWkt.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
        lib.OSRDestroySpatialReference.argtypes = [ctypes.c_void_p]
        lib.VSIFree.argtypes = [ctypes.c_void_p]
        lib.CPLSetConfigOption.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
        lib.CPLSetConfigOption(b"OSR_USE_NON_DEPRECATED", b"NO")
        _gdal = (lib, ctypes)
    return _gdal


def crs_convert(text, to):
    """A CRS GDAL reads (WKT, EPSG:n, PROJJSON text) as PROJJSON (dict) or WKT; None if unreadable."""
    if text is None:
        return None
    lib, ctypes = libgdal()
    srs = lib.OSRNewSpatialReference(None)
    try:
        if lib.OSRSetFromUserInput(srs, text.encode()) != 0:
            return None
        out = ctypes.c_void_p()
        if to == "projjson":
            err = lib.OSRExportToPROJJSON(srs, ctypes.byref(out), None)
        else:
            err = lib.OSRExportToWkt(srs, ctypes.byref(out))
        if err != 0 or not out.value:
            return None
        value = ctypes.string_at(out.value).decode()
        lib.VSIFree(out)
        return json.loads(value) if to == "projjson" else value
    finally:
        lib.OSRDestroySpatialReference(srs)


# --- GeoParquet -> GeoPackage --------------------------------------------------------------------


def to_gpkg(req):
    from pyogrio.raw import write_arrow

    import pyogrio

    pyogrio.set_gdal_config_options({"OGR_SQLITE_SYNCHRONOUS": "OFF", "OGR_SQLITE_CACHE": "64"})
    options = req.get("open_options") or {}
    files, first, dataset = open_parquet(req["paths"])
    plan = geometry_plan(first.schema_arrow, options)
    total = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    crs_wkt = None
    if plan and plan["crs"] is not None:
        crs = plan["crs"]
        crs_wkt = crs_convert(json.dumps(crs) if isinstance(crs, dict) else crs, "wkt")
        if crs_wkt is None and isinstance(crs, dict) and crs_label(crs) and ":" in crs_label(crs):
            # A PROJJSON cut down to its id (some writers do): the authority code says it all.
            crs_wkt = crs_convert(crs_label(crs), "wkt")
        if crs_wkt is None:
            raise UserError(f"The coordinate reference system {crs_label(crs)!r} is not one GDAL knows")
    batches = parquet_batches(plan, dataset)
    first_batch = next(batches)
    schema = first_batch.schema
    if plan:
        i = schema.get_field_index(WKB_COLUMN)
        schema = schema.set(i, pa.field(WKB_COLUMN, pa.binary(), metadata={b"ARROW:extension:name": b"geoarrow.wkb"}))
    types = set(plan["geometry_types"]) if plan else set()
    done = [0]

    def counted():
        for b in itertools.chain([first_batch], batches):
            if not b.num_rows:
                continue
            out = pa.RecordBatch.from_arrays(b.columns, schema=schema)
            if plan and not plan["geometry_types"]:
                types.update(wkb_type_names(out.column(WKB_COLUMN)))
            done[0] += out.num_rows
            progress(done[0], total)
            yield out

    geometry_type = "Unknown"
    if plan and len(plan["geometry_types"]) == 1:
        geometry_type = plan["geometry_types"][0].replace(" Z", "")
    layer = req["layer_name"]
    write_arrow(
        pa.RecordBatchReader.from_batches(schema, counted()),
        req["output"],
        layer=layer,
        driver="GPKG",
        geometry_name=WKB_COLUMN if plan else None,
        geometry_type=geometry_type if plan else None,
        crs=crs_wkt,
        encoding="UTF-8",
        # GDAL 3.6 reads GeoPackage 1.3 without a warning; the service's previews do not need the R-tree.
        dataset_options={"VERSION": "1.3"},
        # The geometry column's name in the copy: geom (GDAL's and QGIS's default) unless an attribute has it.
        layer_options={"SPATIAL_INDEX": "NO", "FID": free_name(("fid", "ogc_fid", "fid_"), schema.names), "GEOMETRY_NAME": free_name(("geom", "geometry", "geom_"), schema.names)},
    )
    return {"features": done[0], "geometry_types": sorted(types)}


def free_name(candidates, taken):
    """The first candidate no column has (case-insensitive), else the first with a number."""
    used = {t.lower() for t in taken}
    return next((c for c in candidates if c.lower() not in used), f"{candidates[0]}_0")


# --- GDAL source -> GeoParquet ----------------------------------------------------------------


def hilbert(x, y, order=16):
    """Hilbert curve index of integer grid cells (0 .. 2**order - 1), vectorised."""
    x = x.astype(np.uint32)
    y = y.astype(np.uint32)
    n = np.uint32((1 << order) - 1)
    d = np.zeros(x.shape, np.uint64)
    s = 1 << (order - 1)
    while s > 0:
        rx = (x & np.uint32(s)) > 0
        ry = (y & np.uint32(s)) > 0
        d += np.uint64(s * s) * ((np.uint64(3) * rx.astype(np.uint64)) ^ ry.astype(np.uint64))
        flip = ~ry & rx
        x = np.where(flip, n - x, x)
        y = np.where(flip, n - y, y)
        swap = ~ry
        x, y = np.where(swap, y, x), np.where(swap, x, y)
        s >>= 1
    return d


def wkb_bounds(wkb):
    """xmin, ymin, xmax, ymax of each WKB value (NaN for null or empty)."""
    bufs = wkb.buffers()
    odt = np.int64 if pa.types.is_large_binary(wkb.type) else np.int32
    offs = np.frombuffer(bufs[1], odt)[wkb.offset : wkb.offset + len(wkb) + 1]
    if len(offs) > 1 and (np.diff(offs) < 0).any():
        raise RuntimeError("corrupt geometry offsets from the reader")
    lens = np.diff(offs)
    data = np.frombuffer(bufs[2], np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    if wkb.null_count == 0 and len(lens) and (lens == 21).all():
        start = int(offs[0])
        raw = data[start : start + 21 * len(lens)].reshape(-1, 21)
        if (raw[:, 0] == 1).all() and (raw[:, 1] == 1).all() and (raw[:, 2:5] == 0).all():
            xy = raw[:, 5:21].copy().view("<f8").reshape(-1, 2)
            return xy[:, 0], xy[:, 1], xy[:, 0], xy[:, 1]
    import shapely

    b = shapely.bounds(shapely.from_wkb(wkb.to_numpy(zero_copy_only=False)))
    return b[:, 0], b[:, 1], b[:, 2], b[:, 3]


def arrow_source(req):
    """(meta, reader) of the GDAL layer as Arrow batches, through the GDAL bundled with pyogrio."""
    from pyogrio.raw import open_arrow

    kwargs = {k: v for k, v in (o.split("=", 1) for o in req.get("open_options") or [])}
    return open_arrow(req["source"], layer=req["layer"], use_pyarrow=True, batch_size=req.get("batch_size") or 65536, datetime_as_string=False, **kwargs)


def source_bytes(path):
    """The size of a source file or folder: with the feature count, its bytes per feature."""
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(r, n)) for r, _, names in os.walk(path) for n in names)
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


class Buckets:
    """Rows spilled to Arrow IPC files by the top bits of their Hilbert key, read back in order.

    Memory stays bounded by one input batch plus one bucket (a bucket larger than BUCKET_ROWS is
    split again by the next bits when read), whatever the size of the layer.
    """

    BITS = 8
    BUCKET_BYTES = 48 * 1024 * 1024

    def __init__(self, folder):
        self.folder = folder
        self.writers = {}
        self.bytes = {}

    def add(self, batch, keys, shift=32 - BITS, prefix=""):
        bucket = (keys >> np.uint64(shift)).astype(np.int64) & ((1 << self.BITS) - 1)
        order = np.argsort(bucket, kind="stable")
        batch = batch.take(pa.array(order))
        bucket = bucket[order]
        cuts = np.flatnonzero(np.diff(bucket)) + 1
        for start, end in zip(np.concatenate([[0], cuts]), np.concatenate([cuts, [len(bucket)]])):
            name = f"{prefix}{int(bucket[start]):03d}"
            w = self.writers.get(name)
            if w is None:
                w = self.writers[name] = pa.ipc.new_stream(os.path.join(self.folder, name), batch.schema)
                self.bytes[name] = 0
            part = batch.slice(start, end - start)
            w.write_batch(part)
            self.bytes[name] += part.nbytes

    @staticmethod
    def close(writer):
        try:
            writer.close()
        except (pa.ArrowInvalid, OSError):
            pass  # closed already (a bucket split again)

    def sorted_tables(self, shift=32 - BITS, prefix=""):
        names = sorted(n for n in self.writers if n.startswith(prefix) and len(n) == len(prefix) + 3)
        for name in names:
            self.close(self.writers.pop(name))
            path = os.path.join(self.folder, name)
            if self.bytes.pop(name) > self.BUCKET_BYTES and shift > 0:
                # Too large to sort in memory: split by the next bits, streaming, then recurse.
                child = name + "."
                with pa.ipc.open_stream(path) as r:
                    for b in r:
                        self.add(b, b.column("__key").to_numpy(), max(0, shift - self.BITS), child)
                os.remove(path)
                for n in [n for n in self.writers if n.startswith(child)]:
                    self.close(self.writers[n])
                yield from self.sorted_tables(max(0, shift - self.BITS), child)
                continue
            with pa.ipc.open_stream(path) as r:
                t = r.read_all()
            os.remove(path)
            yield t.take(pc.sort_indices(t.column("__key")))


def write_geoparquet(req):
    import pyogrio

    info = pyogrio.read_info(req["source"], layer=req["layer"], force_total_bounds=False, **{k: v for k, v in (o.split("=", 1) for o in req.get("open_options") or [])})
    total = int(info["features"]) if info.get("features", -1) >= 0 else 0
    extent = info.get("total_bounds")
    compression = req.get("compression", "zstd")
    level = req.get("compression_level")
    row_group = int(req.get("row_group_size") or 65536)
    sort = req.get("sort", "hilbert")
    out = req["output"]
    # Batches of about BATCH_BYTES: 65,536 points, but some 13,000 polygons of 50 vertices (a
    # 65,536-row batch of those is ~60 MB of WKB, held again by the bounds, the bucket and the row group).
    req = {**req, "batch_size": batch_rows(total, source_bytes(req["source"]))}
    work = tempfile.mkdtemp(prefix=".geoparquet-", dir=os.path.dirname(os.path.abspath(out)))
    try:
        if sort == "hilbert" and (extent is None or not np.isfinite(extent).all()):
            extent = None  # measured in a first pass below
        return _write(req, info, total, extent, compression, level, row_group, sort, out, work)
    finally:
        import shutil

        shutil.rmtree(work, ignore_errors=True)


def _write(req, info, total, extent, compression, level, row_group, sort, out, work):
    geometry_name = req.get("geometry_column") or "geometry"
    crs_text = info.get("crs")
    projjson = crs_convert(crs_text, "projjson") if crs_text else None
    types = set()
    box = [np.inf, np.inf, -np.inf, -np.inf]
    buckets = Buckets(work) if sort == "hilbert" else None
    if sort == "hilbert" and extent is None:
        # The layer's extent is not in its metadata: one pass to measure it (the curve needs it).
        with arrow_source(req) as (meta, reader):
            g = meta["geometry_name"] or "wkb_geometry"
            for b in reader:
                if meta["geometry_type"] is None:
                    break
                xmin, ymin, xmax, ymax = wkb_bounds(b.column(g))
                if len(xmin) and not np.isnan(xmin).all():
                    box = [min(box[0], np.nanmin(xmin)), min(box[1], np.nanmin(ymin)), max(box[2], np.nanmax(xmax)), max(box[3], np.nanmax(ymax))]
        extent = box if np.isfinite(box).all() else [0, 0, 1, 1]
        box = [np.inf, np.inf, -np.inf, -np.inf]
    geo_column = None
    state = {"writer": None, "schema": None, "pending": [], "rows": 0}

    def prepared(batch):
        """The batch with the geometry renamed, its bbox column added and (for sorting) its key."""
        nonlocal box
        arrays, names = [], []
        for name in batch.schema.names:
            if name != geo_column:
                arrays.append(batch.column(name))
                names.append(name)
        if geo_column is None:
            return pa.RecordBatch.from_arrays(arrays, names=names), None
        g = batch.column(geo_column)
        if isinstance(g, pa.ChunkedArray):
            g = g.combine_chunks()
        if not pa.types.is_binary(g.type):
            g = pc.cast(g, pa.binary())
        xmin, ymin, xmax, ymax = wkb_bounds(g)
        types.update(wkb_type_names(g))
        if len(xmin) and not np.isnan(xmin).all():
            box = [min(box[0], np.nanmin(xmin)), min(box[1], np.nanmin(ymin)), max(box[2], np.nanmax(xmax)), max(box[3], np.nanmax(ymax))]
        valid = ~np.isnan(xmin)
        bbox = pa.StructArray.from_arrays(
            [pa.array(v, pa.float64()) for v in (xmin, ymin, xmax, ymax)],
            names=["xmin", "ymin", "xmax", "ymax"],
            mask=pa.array(~valid),
        )
        arrays += [g, bbox]
        names += [geometry_name, "bbox"]
        key = None
        if sort == "hilbert":
            w = max(extent[2] - extent[0], 1e-300)
            h = max(extent[3] - extent[1], 1e-300)
            cx = np.nan_to_num(((xmin + xmax) / 2 - extent[0]) / w * 65535, nan=65535)
            cy = np.nan_to_num(((ymin + ymax) / 2 - extent[1]) / h * 65535, nan=65535)
            key = hilbert(np.clip(cx, 0, 65535), np.clip(cy, 0, 65535))
            key[~valid] = np.uint64(0xFFFFFFFF)  # rows without geometry go last
            arrays.append(pa.array(key, pa.uint64()))
            names.append("__key")
        return pa.RecordBatch.from_arrays(arrays, names=names), key

    def geo_metadata_now():
        if geo_column is None:
            return None
        column = {
            "encoding": "WKB",
            "geometry_types": sorted(types),
            # GeoParquet: an absent crs means OGC:CRS84; a layer without one says so with null.
            "crs": projjson,
            "covering": {"bbox": {k: ["bbox", k] for k in ("xmin", "ymin", "xmax", "ymax")}},
        }
        if np.isfinite(box).all():
            column["bbox"] = [float(v) for v in box]
        return {"version": "1.1.0", "primary_column": geometry_name, "columns": {geometry_name: column}}

    def open_writer(schema, known):
        """Sorted output knows its metadata before the first row; unsorted output adds it at the end."""
        schema = pa.schema([f for f in schema if f.name != "__key"])
        geo = geo_metadata_now() if known else None
        if geo:
            schema = schema.with_metadata({"geo": json.dumps(geo)})
        state["writer"] = pq.ParquetWriter(
            out, schema, compression=compression, compression_level=level, write_statistics=True, store_schema=known
        )

    def emit(table, final=False):
        if table is not None and table.num_rows:
            if "__key" in table.schema.names:
                table = table.drop_columns(["__key"])
            state["pending"].append(table)
            state["rows"] += table.num_rows
        while state["rows"] >= row_group or (final and state["rows"]):
            t = pa.concat_tables(state["pending"])
            take = min(row_group, t.num_rows)
            state["writer"].write_table(t.slice(0, take), row_group_size=row_group)
            rest = t.slice(take)
            state["pending"], state["rows"] = ([rest], rest.num_rows) if rest.num_rows else ([], 0)

    done = 0
    with arrow_source(req) as (meta, reader):
        geo_column = (meta["geometry_name"] or "wkb_geometry") if meta["geometry_type"] is not None else None
        names = [n for n in reader.schema.names if n != geo_column]
        if geo_column and geometry_name in names:
            raise UserError(f"The layer has an attribute named {geometry_name!r}; choose another GEOMETRY_NAME")
        if geo_column and "bbox" in names:
            raise UserError("The layer has an attribute named 'bbox', the name of GeoParquet's covering column; rename it first")
        for batch in reader:
            t, key = prepared(batch)
            state["schema"] = t.schema
            if key is not None:
                buckets.add(t, key)
            else:
                if state["writer"] is None:
                    open_writer(t.schema, known=False)
                emit(pa.Table.from_batches([t]))
            done += batch.num_rows
            progress(done, total * (2 if buckets is not None else 1))
        if state["schema"] is None:  # an empty layer: its schema alone
            state["schema"] = prepared(pa.RecordBatch.from_pylist([], schema=reader.schema))[0].schema
    if state["writer"] is None:
        open_writer(state["schema"], known=True)
    if buckets is not None:
        written = 0
        for t in buckets.sorted_tables():
            emit(t)
            written += t.num_rows
            progress(total + written, total * 2)
    emit(None, final=True)
    geo = geo_metadata_now()
    if geo and not state["writer"].schema.metadata:
        state["writer"].add_key_value_metadata({"geo": json.dumps(geo)})
    state["writer"].close()
    return {"features": done, "geometry_types": sorted(types), "bbox": geo and geo["columns"][geometry_name].get("bbox"), "row_group_size": row_group}


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
