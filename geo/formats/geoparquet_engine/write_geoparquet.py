"""A layer GDAL 3.12 reads -> GeoParquet 1.1 (WKB, covering bbox, PROJJSON CRS, Hilbert order): the write-geoparquet command."""

import json
import os
import tempfile

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .gdal_crs import crs_convert
from .geometry_encodings import wkb_bounds, wkb_type_names
from .hilbert_order import Buckets, hilbert
from .parquet_reading import batch_rows

ROW_GROUP_BYTES = 32 * 1024 * 1024
from .reporting import UserError, progress


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


def write_geoparquet(req):
    import pyogrio

    # GDAL reads a GeoPackage's Arrow batches ahead in worker threads (two here), each thread's
    # batches in memory at once: one thread measured the same CPU time and 90 MB less peak for 1M
    # polygons (docs/decisions.md, "GeoParquet memory").
    pyogrio.set_gdal_config_options({"OGR_GPKG_NUM_THREADS": "1"})
    info = pyogrio.read_info(req["source"], layer=req["layer"], force_total_bounds=False, **{k: v for k, v in (o.split("=", 1) for o in req.get("open_options") or [])})
    total = int(info["features"]) if info.get("features", -1) >= 0 else 0
    extent = info.get("total_bounds")
    compression = req.get("compression", "zstd")
    level = req.get("compression_level")
    # The default row group: 65,536 rows, fewer when rows are wide. pyarrow writes a row group from
    # one table, so its rows wait in memory until there are enough: 65,536 polygons of 50 vertices
    # are ~70 MB, past the engine's share of the worker's budget (docs/decisions.md).
    row_group = int(req.get("row_group_size") or batch_rows(total, source_bytes(req["source"]), bytes_per_batch=ROW_GROUP_BYTES))
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
            # The rows left over are copied: a slice would keep the whole sorted bucket in memory
            # until the next row group is written.
            rest = t.slice(take)
            rest = rest.take(pa.array(np.arange(rest.num_rows))) if rest.num_rows else rest
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
