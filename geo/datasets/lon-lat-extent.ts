import { outsideAreaSql, type AreaOfUse } from '../crs-operations.js';
import { gdal, type Dataset, type Layer, type SpatialReference } from '../gdal/gdal.js';
import { geometryColumnOf, sqlIdent, sqlNumber } from './layer-sql.js';

/*
 * Where a layer's features lie in longitude/latitude, for what the conversion must say about it:
 * outside the target CRS's area of use (coordinates there are not reliable), across 180° (RFC 7946
 * GeoJSON cuts those geometries in two). The layer's extent answers cheaply when all is clear; the
 * features are read only when it is not.
 */

export type Box = [number, number, number, number];

/** Longitude/latitude of points in `srs` (its own geographic CRS: the datum shift is below what an area of use resolves). */
function lonLatOf(srs: SpatialReference): ((x: number, y: number) => [number, number]) | null {
  if (srs.isGeographic()) return (x, y) => [x, y];
  try {
    const ct = new gdal.CoordinateTransformation(srs, srs.cloneGeogCS());
    return (x, y) => {
      const p = ct.transformPoint(x, y);
      return [p.x, p.y];
    };
  } catch {
    return null;
  }
}

/** A box in `srs` as a lon/lat box (corners and middle of each side), or null when it cannot be transformed. */
function boxToLonLat(box: Box, project: (x: number, y: number) => [number, number]): Box | null {
  const [x0, y0, x1, y1] = box;
  const xm = (x0 + x1) / 2;
  const ym = (y0 + y1) / 2;
  const xs: number[] = [];
  const ys: number[] = [];
  try {
    for (const [x, y] of [
      [x0, y0],
      [x1, y0],
      [x0, y1],
      [x1, y1],
      [xm, y0],
      [xm, y1],
      [x0, ym],
      [x1, ym],
    ] as const) {
      const [lon, lat] = project(x, y);
      if (!Number.isFinite(lon) || !Number.isFinite(lat)) return null;
      xs.push(lon);
      ys.push(lat);
    }
  } catch {
    return null;
  }
  return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
}

/** The extent the driver knows (a header, an index), else one read through. */
export function extentOf(layer: Layer): { minX: number; minY: number; maxX: number; maxY: number } | null {
  for (const force of [false, true]) {
    try {
      return layer.getExtent(force);
    } catch {
      // Not known without reading: read through.
    }
  }
  return null;
}

/** The layer's extent in lon/lat; null when empty, unknown or not transformable. */
export function layerLonLatExtent(layer: Layer, srs: SpatialReference): Box | null {
  const e = extentOf(layer);
  if (!e) return null;
  const extent: Box = [e.minX, e.minY, e.maxX, e.maxY];
  if (!extent.every(Number.isFinite) || extent[0] > extent[2]) return null;
  const project = lonLatOf(srs);
  return project ? boxToLonLat(extent, project) : null;
}

/** A lon/lat point outside an area of use (whose west exceeds its east when it crosses 180°). */
export function outsideArea(lon: number, lat: number, area: AreaOfUse): boolean {
  const lonOut = area.west <= area.east ? lon < area.west || lon > area.east : lon < area.west && lon > area.east;
  return lonOut || lat < area.south || lat > area.north;
}

/**
 * Reading features one by one in JavaScript costs about 36 µs each here (36 s for a million):
 * above this many, a projected layer's count is not taken, and the warning says only that the
 * layer reaches outside. A layer in longitude/latitude is counted by SQL at any size.
 */
export const FEATURES_READ_LIMIT = 100_000;

/**
 * The features of a layer whose lon/lat bounding box reaches outside an area of use (a corner
 * outside: partly or wholly outside): the same rule as the reproject operation's count
 * (geo/operations/families/coordinate-systems.ts). Null when it was not counted (a projected layer
 * above FEATURES_READ_LIMIT).
 */
export async function countOutsideArea(ds: Dataset, layer: Layer, srs: SpatialReference, area: AreaOfUse): Promise<number | null> {
  if (srs.isGeographic()) {
    const g = geometryColumnOf(layer);
    const outside = `${outsideAreaSql(`ST_MinX(${g})`, `ST_MinY(${g})`, area)} OR ${outsideAreaSql(`ST_MaxX(${g})`, `ST_MaxY(${g})`, area)}`;
    return (await sqlNumber(ds, `SELECT count(*) AS n FROM ${sqlIdent(layer.name)} WHERE ${g} IS NOT NULL AND NOT ST_IsEmpty(${g}) AND (${outside})`)) ?? 0;
  }
  if (layer.features.count(true) > FEATURES_READ_LIMIT) return null;
  const project = lonLatOf(srs);
  if (!project) return 0;
  let count = 0;
  for (let f = await layer.features.firstAsync(); f; f = await layer.features.nextAsync()) {
    const g = f.getGeometry();
    if (!g || g.isEmpty()) continue;
    const e = g.getEnvelope();
    const box = boxToLonLat([e.minX, e.minY, e.maxX, e.maxY], project);
    if (!box) continue;
    if (outsideArea(box[0], box[1], area) || outsideArea(box[2], box[3], area)) count++;
  }
  return count;
}
