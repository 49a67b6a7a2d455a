"""What a (Geo)Parquet file or folder holds, from its footers and GeoParquet metadata only: the inspect command."""

import json
import os

import numpy as np
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from .geometry_encodings import GEOARROW_DEPTH
from .reporting import UserError

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
