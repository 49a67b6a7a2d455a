"""Projected results back in longitude/latitude: rings followed continuously, closed over a pole they go
round, cut at +-180 degrees."""

import math

from shapely.affinity import translate
from shapely.geometry import GeometryCollection, LineString, Point, Polygon, box
from shapely.ops import transform, unary_union
from shapely.validation import make_valid

from .shapes import densify_coords, family, keep_kind, parts_of


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
