"""Geometry encodings to and from WKB: GeoArrow, lon/lat columns, WKT; WKB type names and bounds, vectorised."""

import numpy as np
import pyarrow as pa

from .reporting import UserError

GEOARROW_DEPTH = {"point": 0, "linestring": 1, "multipoint": 1, "polygon": 2, "multilinestring": 2, "multipolygon": 3}
WKB_TYPES = {1: "Point", 2: "LineString", 3: "Polygon", 4: "MultiPoint", 5: "MultiLineString", 6: "MultiPolygon", 7: "GeometryCollection"}


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
