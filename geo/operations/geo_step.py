"""Metric geometry work on longitude/latitude layers, for the operation catalogue.

Run by geo/operations/geo-step.ts in the sandbox (no network, only the stage folder writable) as
    python3 -I geo_step.py SPEC.json
SPEC: {"input": gpkg, "layer": name, "output": gpkg, "out_layer": name, "report": json path,
       "op": {"kind": "buffer"|"simplify"|"densify", ...}}

Distances are metres on the layer's own ellipsoid. Each feature is worked on in an azimuthal
equidistant projection centred on it, where distances from the centre are true; a feature too
large for one such projection (wider or taller than MAX_SPAN degrees, or touching a pole) is cut
into cells of CELL degrees (polar caps above POLAR_LAT get a projection centred on the pole),
each piece worked on in its own projection, and the results joined again: a buffer of a union
is the union of the buffers, so this is exact for buffers. Going back to longitude/latitude,
rings are followed continuously (a ring that goes once round a pole is closed over that pole)
and cut at +-180 degrees, so nothing wraps round the world and Antarctica still reaches -90.
Every output geometry is valid: repaired when it is not, and reported when it cannot be.

The geometry work lives in the package lonlat_geometry beside this file (ellipsoid, shapes,
back_to_lonlat, metric_operations); this script reads and writes the layer.
"""

import json
import os
import sys

from osgeo import ogr, osr
from shapely import wkb
from shapely.validation import explain_validity, make_valid

# -I leaves the script's folder off sys.path (nothing the user can write is imported); the
# package beside this file is ours, mounted read-only in the sandbox like this script.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from lonlat_geometry.ellipsoid import Ellipsoid  # noqa: E402
from lonlat_geometry.metric_operations import buffer_lonlat, densify_geodesic, measure, simplify_lonlat  # noqa: E402
from lonlat_geometry.shapes import family, keep_kind  # noqa: E402

ogr.UseExceptions()
osr.UseExceptions()


# ---- The layer ----------------------------------------------------------------------------------


def valid_or_repaired(geom, kind):
    """(geometry, repaired, reason): the geometry itself when valid, else repaired (same family)."""
    if geom.is_empty or geom.is_valid:
        return geom, False, None
    reason = explain_validity(geom)
    fixed = make_valid(geom)
    fixed = keep_kind(fixed, kind) if kind in ("point", "line", "polygon") else fixed
    if fixed.is_valid:
        return fixed, True, reason
    fixed = fixed.buffer(0) if kind == "polygon" else fixed
    return fixed, True, reason if fixed.is_valid else None


def main():
    spec = json.load(open(sys.argv[1]))
    op = spec["op"]
    src = ogr.Open(spec["input"])
    layer = src.GetLayerByName(spec["layer"])
    srs = layer.GetSpatialRef()
    if srs is None or not srs.IsGeographic():
        raise SystemExit("the layer is not in a geographic CRS")
    ell = Ellipsoid(srs)
    driver = ogr.GetDriverByName("GPKG")
    dst = driver.Open(spec["output"], 1) if spec.get("append") else driver.CreateDataSource(spec["output"])
    defn = layer.GetLayerDefn()
    out = dst.CreateLayer(spec["out_layer"], srs, ogr.wkbUnknown, ["GEOMETRY_NAME=" + spec.get("geometry_name", "geometry"), "SPATIAL_INDEX=NO"])
    for i in range(defn.GetFieldCount()):
        out.CreateField(defn.GetFieldDefn(i))
    if op["kind"] == "measure" and out.GetLayerDefn().GetFieldIndex(op["column"]) < 0:
        out.CreateField(ogr.FieldDefn(op["column"], ogr.OFTReal))
    out_defn = out.GetLayerDefn()
    report = {"features": 0, "repaired": [], "invalid": [], "emptied": []}
    dst.StartTransaction()
    for n, feature in enumerate(layer):
        report["features"] += 1
        g = feature.GetGeometryRef()
        geom = None
        if op["kind"] == "measure":
            f = ogr.Feature(out_defn)
            f.SetFrom(feature)
            value = measure(wkb.loads(bytes(g.ExportToIsoWkb())), ell, op["measure"]) if g is not None and not g.IsEmpty() else None
            if value is None:
                f.SetFieldNull(op["column"])
            else:
                f.SetField(op["column"], value / op["factor"])
            out.CreateFeature(f)
            continue
        if g is not None and not g.IsEmpty():
            shape = wkb.loads(bytes(g.ExportToIsoWkb()))
            kind = family(shape)
            if not shape.is_valid:
                shape, _, _ = valid_or_repaired(shape, kind)
            if op["kind"] == "buffer":
                result, kind = buffer_lonlat(shape, ell, op["distance"], op["segments"]), "polygon"
            elif op["kind"] == "simplify":
                result = simplify_lonlat(shape, ell, op["tolerance"], op["preserve_topology"])
            elif op["kind"] == "densify":
                result = densify_geodesic(shape, ell, op["max_segment"])
            else:
                raise SystemExit("unknown operation " + op["kind"])
            result, repaired, reason = valid_or_repaired(result, kind)
            if repaired and reason:
                report["repaired"].append({"feature": n + 1, "reason": reason})
            elif repaired:
                report["invalid"].append({"feature": n + 1})
            if result.is_empty:
                report["emptied"].append(n + 1)
            else:
                geom = ogr.CreateGeometryFromWkb(result.wkb)
        f = ogr.Feature(out_defn)
        f.SetFrom(feature)
        f.SetGeometryDirectly(geom)
        out.CreateFeature(f)
    dst.CommitTransaction()
    dst = None
    with open(spec["report"], "w") as fh:
        json.dump(report, fh)


if __name__ == "__main__":
    main()
