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
"""

import json
import math
import sys

from osgeo import ogr, osr
from pyproj import Geod, Transformer
from shapely import wkb
from shapely.affinity import translate
from shapely.geometry import (
    GeometryCollection,
    LineString,
    MultiLineString,
    MultiPoint,
    MultiPolygon,
    Point,
    Polygon,
    box,
)
from shapely.geometry.polygon import orient
from shapely.ops import transform, unary_union
from shapely.validation import explain_validity, make_valid

ogr.UseExceptions()
osr.UseExceptions()

CELL = 10.0
MAX_SPAN = 20.0
POLAR_LAT = 80.0
# Longitude/latitude edges are straight on the map: they are given vertices this close before
# projecting, so that they keep their course in the local projection.
LONLAT_STEP = 0.25
# Straight edges of a projected buffer get vertices this far apart (metres) before going back.
BACK_STEP = 20000.0


class Ellipsoid:
    def __init__(self, srs):
        self.a = srs.GetSemiMajor()
        rf = srs.GetInvFlattening()
        self.rf = rf if rf and rf > 0 else 0.0
        self.geod = Geod(a=self.a, rf=self.rf) if self.rf else Geod(a=self.a, b=self.a)
        self._cache = {}

    def aeqd(self, lat0, lon0):
        key = (round(lat0, 6), round(lon0, 6))
        t = self._cache.get(key)
        if t is None:
            shape = f"+a={self.a} +rf={self.rf}" if self.rf else f"+R={self.a}"
            t = Transformer.from_pipeline(f"+proj=aeqd +lat_0={key[0]} +lon_0={key[1]} {shape}")
            if len(self._cache) > 4096:
                self._cache.clear()
            self._cache[key] = t
        return t


# ---- Shapes -----------------------------------------------------------------------------------


def family(geom):
    t = geom.geom_type
    if t in ("Point", "MultiPoint"):
        return "point"
    if t in ("LineString", "MultiLineString", "LinearRing"):
        return "line"
    if t in ("Polygon", "MultiPolygon"):
        return "polygon"
    return "collection"


def parts_of(geom):
    if geom.is_empty:
        return []
    if hasattr(geom, "geoms"):
        out = []
        for g in geom.geoms:
            out.extend(parts_of(g))
        return out
    return [geom]


def keep_kind(geom, kind):
    """The parts of `geom` of one family, as one geometry (empty when none)."""
    parts = [p for p in parts_of(geom) if family(p) == kind]
    if not parts:
        return GeometryCollection()
    if kind == "polygon":
        return parts[0] if len(parts) == 1 else MultiPolygon(parts)
    if kind == "line":
        return parts[0] if len(parts) == 1 else MultiLineString(parts)
    return parts[0] if len(parts) == 1 else MultiPoint(parts)


def densify_coords(coords, step):
    out = [coords[0]]
    for (x0, y0, *_), (x1, y1, *_) in zip(coords, coords[1:]):
        n = int(max(abs(x1 - x0), abs(y1 - y0)) / step)
        for i in range(1, n + 1):
            f = i / (n + 1)
            out.append((x0 + (x1 - x0) * f, y0 + (y1 - y0) * f))
        out.append((x1, y1))
    return out


def densify(geom, step):
    """Vertices added along straight edges so that none is longer than `step` in x or y."""
    if geom.is_empty:
        return geom
    t = geom.geom_type
    if t == "Polygon":
        return Polygon(densify_coords(list(geom.exterior.coords), step), [densify_coords(list(r.coords), step) for r in geom.interiors])
    if t == "LineString":
        return LineString(densify_coords(list(geom.coords), step))
    if t in ("MultiPolygon", "MultiLineString", "GeometryCollection", "MultiPoint"):
        return type(geom)([densify(g, step) for g in geom.geoms]) if t != "GeometryCollection" else GeometryCollection([densify(g, step) for g in geom.geoms])
    return geom


def bounds_of(geom):
    return geom.bounds if not geom.is_empty else None


def unwrap_parts(geom):
    """A feature drawn on both sides of +-180 (Fiji, Russia), with its western parts moved east by
    360 degrees when that makes it narrower: the shape as it is on the globe, in one piece."""
    b = bounds_of(geom)
    if b is None or b[2] - b[0] <= 180:
        return geom
    parts = parts_of(geom)
    if any(p.bounds[1] <= -89.999 or p.bounds[3] >= 89.999 for p in parts):
        return geom
    moved = [translate(p, 360) if p.centroid.x < 0 else p for p in parts]
    nb = unary_union(moved).bounds if len(moved) > 1 else moved[0].bounds
    if nb[2] - nb[0] >= b[2] - b[0]:
        return geom
    return unary_union(moved) if family(geom) == "polygon" else type(geom)(moved) if len(moved) > 1 else moved[0]


def is_small(b):
    return b[2] - b[0] <= MAX_SPAN and b[3] - b[1] <= MAX_SPAN and max(abs(b[1]), abs(b[3])) < POLAR_LAT


def cells_over(b):
    """The cells (box, centre) that cover bounds b: polar caps, then CELL-degree boxes."""
    out = []
    if b[3] > POLAR_LAT:
        out.append((box(b[0], POLAR_LAT, b[2], 90.0), (90.0, 0.0)))
    if b[1] < -POLAR_LAT:
        out.append((box(b[0], -90.0, b[2], -POLAR_LAT), (-90.0, 0.0)))
    lat_lo, lat_hi = max(b[1], -POLAR_LAT), min(b[3], POLAR_LAT)
    if lat_lo < lat_hi:
        y = math.floor(lat_lo / CELL) * CELL
        while y < lat_hi:
            x = math.floor(b[0] / CELL) * CELL
            while x < b[2]:
                y0, y1 = max(y, -POLAR_LAT), min(y + CELL, POLAR_LAT)
                if y0 < y1:
                    out.append((box(x, y0, x + CELL, y1), ((y0 + y1) / 2, x + CELL / 2)))
                x += CELL
            y += CELL
    return out


def pieces(geom, kind):
    """(piece, (lat0, lon0)) pairs: the whole feature when it fits one projection, else per cell."""
    b = geom.bounds
    if is_small(b):
        return [(geom, ((b[1] + b[3]) / 2, (b[0] + b[2]) / 2))]
    out = []
    for cell, centre in cells_over(b):
        if not cell.intersects(geom):
            continue
        piece = keep_kind(geom.intersection(cell), kind)
        if not piece.is_empty:
            out.append((piece, centre))
    return out


# ---- Back to longitude/latitude -----------------------------------------------------------------


def wrap180(d):
    return (d + 180.0) % 360.0 - 180.0


def ring_lonlat(coords, t, lon0):
    """Inverse-projects a ring or line continuously: each longitude within 180 of the one before."""
    xs = [c[0] for c in coords]
    ys = [c[1] for c in coords]
    lons, lats = t.transform(xs, ys, direction="INVERSE")
    out = []
    prev = None
    for lon, lat in zip(lons, lats):
        if not (math.isfinite(lon) and math.isfinite(lat)):
            continue
        lon = lon0 + wrap180(lon - lon0) if prev is None else prev + wrap180(lon - prev)
        out.append((lon, max(-90.0, min(90.0, lat))))
        prev = lon
    return out


def closed_region(coords):
    """A ring in unwrapped longitudes as a polygon: closed over the pole it goes round, if any."""
    if len(coords) < 4:
        return Polygon()
    turns = round((coords[-1][0] - coords[0][0]) / 360.0)
    if turns == 0:
        ring = coords
    else:
        pole = 90.0 if sum(c[1] for c in coords) / len(coords) > 0 else -90.0
        ring = coords + [(coords[-1][0], pole), (coords[0][0], pole), coords[0]]
    poly = Polygon(ring)
    return poly if poly.is_valid else make_valid(poly)


def split_at_antimeridian(geom, kind):
    """A geometry in unwrapped longitudes, cut into [-180, 180] windows and brought back."""
    b = geom.bounds
    if b[0] >= -180.0 and b[2] <= 180.0:
        return geom
    out = []
    k_lo, k_hi = math.floor((b[0] + 180.0) / 360.0), math.floor((b[2] + 180.0) / 360.0)
    for k in range(k_lo, k_hi + 1):
        window = box(-180.0 + 360.0 * k, -90.0, 180.0 + 360.0 * k, 90.0)
        part = keep_kind(geom.intersection(window), kind)
        if not part.is_empty:
            out.append(translate(part, -360.0 * k))
    if not out:
        return GeometryCollection()
    return unary_union(out) if kind == "polygon" else keep_kind(GeometryCollection(out), kind)


def to_lonlat(geom, t, lon0, kind, step=None):
    """A projected result back in longitude/latitude: poles closed, cut at +-180."""
    merged = unwrapped_lonlat(geom, t, lon0, kind, step)
    return split_at_antimeridian(merged, kind) if not merged.is_empty else merged


def unwrapped_lonlat(geom, t, lon0, kind, step=None):
    """A projected result back in longitude/latitude, longitudes continuous from lon0; with `step`,
    straight projected edges get vertices that far apart first, to keep their course."""
    if geom.is_empty:
        return geom
    dense = (lambda c: densify_coords(c, step)) if step else (lambda c: c)
    if kind == "polygon":
        regions = []
        for p in parts_of(geom):
            if family(p) != "polygon":
                continue
            shell = closed_region(ring_lonlat(dense(list(p.exterior.coords)), t, lon0))
            holes = [closed_region(ring_lonlat(dense(list(r.coords)), t, lon0)) for r in p.interiors]
            holes = [h for h in holes if not h.is_empty]
            regions.append(shell.difference(unary_union(holes)) if holes else shell)
        merged = unary_union(regions) if regions else GeometryCollection()
    elif kind == "line":
        lines = [LineString(c) for c in (ring_lonlat(dense(list(p.coords)), t, lon0) for p in parts_of(geom)) if len(c) >= 2]
        merged = keep_kind(GeometryCollection(lines), "line")
    else:
        pts = [Point(ring_lonlat(list(p.coords), t, lon0)[0]) for p in parts_of(geom)]
        merged = keep_kind(GeometryCollection(pts), "point")
    return merged


def project(geom, t):
    return transform(lambda x, y, z=None: t.transform(x, y), geom)


# ---- Operations ---------------------------------------------------------------------------------


def buffer_lonlat(geom, ell, distance, segments):
    kind = family(geom)
    if kind == "collection":
        parts = [buffer_lonlat(p, ell, distance, segments) for p in parts_of(geom)]
        return unary_union([p for p in parts if not p.is_empty]) if parts else Polygon()
    if distance < 0 and kind != "polygon":
        return Polygon()
    geom = unwrap_parts(geom)
    if distance < 0:
        # Shrinking = the polygon less the band within |d| of its boundary.
        band = buffer_lonlat(geom.boundary, ell, -distance, segments)
        return keep_kind(split_at_antimeridian(geom, "polygon").difference(band), "polygon")
    results = []
    for piece, (lat0, lon0) in pieces(geom, kind):
        t = ell.aeqd(lat0, lon0)
        projected = project(densify(piece, LONLAT_STEP) if kind != "point" else piece, t)
        results.append(to_lonlat(projected.buffer(distance, segments), t, lon0, "polygon", BACK_STEP))
    results = [r for r in results if not r.is_empty]
    return keep_kind(unary_union(results), "polygon") if results else Polygon()


def simplify_lonlat(geom, ell, tolerance, preserve):
    kind = family(geom)
    if kind == "point":
        return geom
    if kind == "collection":
        return GeometryCollection([simplify_lonlat(p, ell, tolerance, preserve) for p in parts_of(geom)])
    geom = unwrap_parts(geom)
    b = geom.bounds
    if is_small(b):
        lat0, lon0 = (b[1] + b[3]) / 2, (b[0] + b[2]) / 2
        t = ell.aeqd(lat0, lon0)
        simplified = project(geom, t).simplify(tolerance, preserve_topology=preserve)
        return to_lonlat(simplified, t, lon0, kind)
    # Too large for one projection: each ring or line is simplified in stretches, each stretch in
    # the projection of the cell where it starts; stretch ends are kept, as Douglas-Peucker keeps
    # a line's ends, so the stretches join again.
    def simplify_line(coords, closed):
        out = [coords[0]]
        start = 0
        while start < len(coords) - 1:
            key = cell_key(coords[start])
            end = start + 1
            while end < len(coords) - 1 and cell_key(coords[end]) == key and end - start < 2000:
                end += 1
            stretch = coords[start : end + 1]
            lat0, lon0 = centre_of(key, stretch)
            t = ell.aeqd(lat0, lon0)
            line = LineString(densify_coords(stretch, LONLAT_STEP) if len(stretch) == 2 else stretch)
            if len(stretch) > 2:
                back = unwrapped_lonlat(project(line, t).simplify(tolerance, preserve_topology=False), t, lon0, "line")
                kept = list(back.coords) if back.geom_type == "LineString" else stretch
                # The ends exactly as they were, so that the stretches meet.
                kept = [stretch[0]] + kept[1:-1] + [stretch[-1]]
            else:
                kept = stretch
            out.extend(kept[1:])
            start = end
        if closed and len(out) < 4:
            return coords if preserve else None
        return out

    def cell_key(c):
        if c[1] >= POLAR_LAT:
            return "N"
        if c[1] <= -POLAR_LAT:
            return "S"
        return (math.floor(c[0] / CELL), math.floor(c[1] / CELL))

    def centre_of(key, stretch):
        if key == "N":
            return 90.0, 0.0
        if key == "S":
            return -90.0, 0.0
        return key[1] * CELL + CELL / 2, key[0] * CELL + CELL / 2

    out = []
    for p in parts_of(geom):
        if family(p) == "polygon":
            shell = simplify_line([c[:2] for c in p.exterior.coords], True)
            if shell is None:
                continue
            holes = [h for h in (simplify_line([c[:2] for c in r.coords], True) for r in p.interiors) if h is not None]
            poly = Polygon(shell, holes)
            out.append(poly if poly.is_valid else keep_kind(make_valid(poly), "polygon"))
        else:
            line = simplify_line([c[:2] for c in p.coords], False)
            out.append(LineString(line))
    if not out:
        return GeometryCollection()
    merged = unary_union(out) if kind == "polygon" else keep_kind(GeometryCollection(out), kind)
    return split_at_antimeridian(merged, kind)


def densify_geodesic(geom, ell, max_segment):
    """Vertices added along the geodesic between consecutive vertices, at most max_segment apart."""
    kind = family(geom)
    if kind == "point":
        return geom
    if kind == "collection":
        return GeometryCollection([densify_geodesic(p, ell, max_segment) for p in parts_of(geom)])

    def line(coords):
        out = [coords[0][:2]]
        for (x0, y0, *_), (x1, y1, *_) in zip(coords, coords[1:]):
            # The edge as drawn: east or west by less than 180 degrees, as the data has it.
            x1u = x0 + (x1 - x0)
            _, _, dist = ell.geod.inv(x0, y0, x1u, y1)
            n = int(dist // max_segment)
            if n > 0 and abs(x1u - x0) < 180:
                for lon, lat in ell.geod.npts(x0, y0, x1u, y1, n):
                    prev = out[-1][0]
                    out.append((prev + wrap180(lon - prev), lat))
            prev = out[-1][0]
            out.append((prev + wrap180(x1 - prev), y1))
        return out

    parts = []
    for p in parts_of(geom):
        if family(p) == "polygon":
            shell = line(list(p.exterior.coords))
            holes = [line(list(r.coords)) for r in p.interiors]
            parts.append(Polygon(shell, holes))
        else:
            parts.append(LineString(line(list(p.coords))))
    merged = keep_kind(GeometryCollection(parts), kind)
    b = merged.bounds
    if b[0] >= -180.0 and b[2] <= 180.0:
        return merged
    return split_at_antimeridian(merged if merged.is_valid else keep_kind(make_valid(merged), kind), kind)


def measure(geom, ell, what):
    """Geodesic area (m2), length or perimeter (m) on the layer's ellipsoid (GeographicLib)."""
    kind = family(geom)
    polygons = [p for p in parts_of(geom) if family(p) == "polygon"]
    if what == "area":
        # Each polygon counter-clockwise with clockwise holes, so that parts add up and holes subtract.
        return sum(ell.geod.geometry_area_perimeter(orient(p, 1.0))[0] for p in polygons)
    if what == "perimeter":
        # Every ring, holes included (as ST_Perimeter counts them).
        return sum(ell.geod.geometry_length(p.boundary) for p in polygons)
    return ell.geod.geometry_length(geom) if kind in ("line", "collection") else ell.geod.geometry_length(geom.boundary) if kind == "polygon" else 0.0


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
