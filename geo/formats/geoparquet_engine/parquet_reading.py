"""Reading Parquet as Arrow batches of plain columns with the geometry as WKB, in bounded memory."""

import json

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from .geometry_encodings import geoarrow_to_wkb, wkt_to_wkb, xy_to_wkb

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


# 8 MB, not 16: each batch is held several times at once (decoded, converted, in GDAL's writer or
# the sort's bucket), and the engine's whole budget is the worker's 256 MB (docs/decisions.md,
# "GeoParquet memory": 1M polygons, prepare 328 -> 192 MB with the other changes there).
BATCH_BYTES = 8 * 1024 * 1024
# Reading a .parquet for the GeoPackage copy: 4 MB, since GDAL's GeoPackage writer holds each batch
# again as features (1M polygons: 224 -> 180 MB peak with the 8 MB SQLite cache, the same CPU;
# the GeoParquet write keeps 8 MB: 4 MB there measured 210 MB and 10 % more CPU).
READ_BATCH_BYTES = 4 * 1024 * 1024


def batch_rows(rows, nbytes, largest=65536, bytes_per_batch=BATCH_BYTES):
    """Rows per batch so that one batch holds about bytes_per_batch of decoded data (wide polygons: a few thousand)."""
    if rows <= 0 or nbytes <= 0:
        return largest
    return int(max(1024, min(largest, bytes_per_batch * rows // nbytes)))


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
        rows = batch_size or batch_rows(
            md.num_rows, sum(md.row_group(i).total_byte_size for i in range(md.num_row_groups)), bytes_per_batch=READ_BATCH_BYTES
        )
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
