"""GeoParquet -> a GeoPackage the service's GDAL 3.6 reads: the to-gpkg command."""

import itertools
import json

import pyarrow as pa
import pyarrow.parquet as pq

from .gdal_crs import crs_convert
from .geometry_encodings import wkb_type_names
from .parquet_metadata import crs_label, geometry_plan, open_parquet
from .parquet_reading import WKB_COLUMN, parquet_batches
from .reporting import UserError, progress


def to_gpkg(req):
    from pyogrio.raw import write_arrow

    import pyogrio

    # An 8 MB page cache: the rows are appended (no index), so a larger cache only holds more
    # dirty pages (64 MB measured 50 MB more peak for 1M polygons, no faster).
    pyogrio.set_gdal_config_options({"OGR_SQLITE_SYNCHRONOUS": "OFF", "OGR_SQLITE_CACHE": "8"})
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
