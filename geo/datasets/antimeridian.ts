import { gdal, openAs, type Dataset, type Layer, type SpatialReference } from '../gdal/gdal.js';
import type { ProcessingWarning } from '../warnings.js';
import { geometryColumnOf, holdsOnlyPoints, sqlIdent, sqlNumber } from './layer-sql.js';
import { extentOf, FEATURES_READ_LIMIT, layerLonLatExtent, type Box } from './lon-lat-extent.js';

/*
 * RFC 7946 GeoJSON cuts geometries that cross the antimeridian into parts on either side of 180°
 * (GDAL's WRAPDATELINE; RFC 7946 §3.1.9), without a word. Which ones GDAL cuts follows its own
 * heuristics (a jump of more than 350° between vertices, coordinates beyond ±180°, rings touching
 * 180°), so the written file is compared with the layer: a feature with more parts than it had
 * was split. Only line and polygon layers whose extent comes near 180° are compared, first by
 * their total number of parts in SQL (most world data: nothing split, two passes in C), then, when
 * the totals differ, feature by feature to count them (up to FEATURES_READ_LIMIT; above it the
 * warning gives the parts added).
 */

/** Whether GDAL may cut something in a layer of this lon/lat extent (it leaves everything strictly within ±180° without a possible jump). */
export function mayCrossAntimeridian(extent: Box | null): boolean {
  if (!extent) return true;
  const [west, , east] = extent;
  return east >= 180 || west <= -180 || (west < -170 && east > 170);
}

function parts(g: InstanceType<typeof gdal.Geometry> | null): number {
  if (!g || g.isEmpty()) return 0;
  return g instanceof gdal.GeometryCollection ? g.children.count() : 1;
}

/**
 * The warning for features of `source` that GDAL split at 180° writing `written` (a GeoJSON file
 * holding that layer alone, features in the same order), or null when none was.
 */
export async function splitAtAntimeridian(sourceDs: Dataset, source: Layer, srs: SpatialReference | null, written: string): Promise<ProcessingWarning | null> {
  if (holdsOnlyPoints(source)) return null;
  const raw = srs ? null : extentOf(source);
  if (!mayCrossAntimeridian(srs ? layerLonLatExtent(source, srs) : raw && [raw.minX, raw.minY, raw.maxX, raw.maxY])) return null;
  const partsOf = (ds: Dataset, layer: Layer) => {
    const g = geometryColumnOf(layer);
    return sqlNumber(ds, `SELECT sum(coalesce(ST_NumGeometries(${g}), 1)) AS n FROM ${sqlIdent(layer.name)} WHERE ${g} IS NOT NULL`);
  };
  const out = await openAs('GeoJSON', written);
  const examples: unknown[] = [];
  let split = 0;
  let added = 0;
  try {
    const target = out.layers.get(0);
    added = ((await partsOf(out, target)) ?? 0) - ((await partsOf(sourceDs, source)) ?? 0);
    if (added <= 0) return null;
    if (source.features.count(true) <= FEATURES_READ_LIMIT) {
      let a = await source.features.firstAsync();
      let b = await target.features.firstAsync();
      for (; a && b; a = await source.features.nextAsync(), b = await target.features.nextAsync()) {
        if (parts(b.getGeometry()) > parts(a.getGeometry())) {
          split++;
          if (examples.length < 5) examples.push(a.fid);
        }
      }
    }
  } finally {
    out.close();
  }
  const counted = split > 0;
  const which = counted ? `${split} feature${split === 1 ? '' : 's'}` : `features (${added} part${added === 1 ? '' : 's'} more than the layer had)`;
  return {
    code: 'geometry_split',
    message: `GeoJSON (RFC 7946) cuts geometries at the antimeridian: ${which} of layer ${source.name} crossing 180° ${
      split === 1 ? 'is' : 'are'
    } written in parts on either side (a MultiPolygon or MultiLineString); GeoPackage or FlatGeobuf keep them whole`,
    layer: source.name,
    details: { features: counted ? split : null, parts_added: added, example_fids: examples },
  };
}
