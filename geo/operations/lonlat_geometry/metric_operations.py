"""The operations in metres on longitude/latitude features: buffer, simplify, densify along geodesics, measure."""

import math

from shapely.geometry import GeometryCollection, LineString, Polygon
from shapely.geometry.polygon import orient
from shapely.ops import unary_union
from shapely.validation import make_valid

from .back_to_lonlat import project, split_at_antimeridian, to_lonlat, unwrapped_lonlat, wrap180
from .shapes import CELL, POLAR_LAT, densify, densify_coords, family, is_small, keep_kind, parts_of, pieces, unwrap_parts

# Longitude/latitude edges are straight on the map: they are given vertices this close before
# projecting, so that they keep their course in the local projection.
LONLAT_STEP = 0.25
# Straight edges of a projected buffer get vertices this far apart (metres) before going back.
BACK_STEP = 20000.0


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
