"""Shapes in longitude/latitude: geometry families and parts, densifying, and the cells a feature too large
for one projection is cut into."""

import math

from shapely.affinity import translate
from shapely.geometry import (
    GeometryCollection,
    LineString,
    MultiLineString,
    MultiPoint,
    MultiPolygon,
    Polygon,
    box,
)
from shapely.ops import unary_union

CELL = 10.0
MAX_SPAN = 20.0
POLAR_LAT = 80.0


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
