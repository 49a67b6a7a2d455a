import { z } from 'zod';
import { gdal } from '../../gdal/gdal.js';
import { densifiedBox, familyCode, invalid, parseCrs, selectAll, wrap, type Relation } from '../relation.js';
import { quoteIdent, quoteString } from '../sql-guard.js';
import { define } from './definition.js';
import { geomOf, keptMulti, validated, validSql } from './geometry-sql.js';
import { crs, otherLayer, workspaceId } from './parameters.js';

/* Operations that cut geometries to an area: a box, or the polygons of another layer. */

export const clipBbox = define({
  id: 'clip_bbox',
  label: 'Clip to box',
  description:
    "Cuts geometries to a bounding box and drops those outside it; the pieces keep the layer's geometry type (a polygon cut along an edge drops the stray line) and are valid.",
  category: 'geometry',
  requiresGeometry: true,
  parameters: z.object({
    bbox: z.tuple([z.number().finite(), z.number().finite(), z.number().finite(), z.number().finite()]).describe('[min_x, min_y, max_x, max_y]'),
    crs: crs.default('EPSG:4326').describe('CRS of the box coordinates'),
  }),
  example: { type: 'clip_bbox', bbox: [5.9, 45.8, 10.5, 47.8], crs: 'EPSG:4326' },
  compile({ bbox, crs: boxCrs }, rel) {
    if (!(bbox[0] < bbox[2] && bbox[1] < bbox[3])) throw invalid('clip_bbox: the box must be [min_x, min_y, max_x, max_y] with min < max');
    const g = geomOf(rel);
    let wkt = densifiedBox(bbox);
    if (rel.crs) {
      const geometry = gdal.Geometry.fromWKT(wkt, parseCrs(boxCrs, 'clip_bbox'));
      try {
        geometry.transformTo(gdal.SpatialReference.fromWKT(rel.crs.wkt));
      } catch {
        throw invalid('clip_bbox: the box cannot be transformed to the layer CRS');
      }
      wkt = geometry.toWKT();
    }
    const env = gdal.Geometry.fromWKT(wkt).getEnvelope();
    const box = `SetSRID(GeomFromText(${quoteString(wkt)}), ST_SRID(${g}))`;
    const fam = rel.geom!.family;
    // GEOS refuses to intersect an invalid geometry (the feature would vanish): repaired first.
    const fixed = repairedInput(rel);
    const cut =
      fam && fam !== 'collection' ? keptMulti(g, `CollectionExtract(ST_Intersection(${g}, ${box}), ${familyCode[fam]})`) : `ST_Intersection(${g}, ${box})`;
    const where = ` WHERE MbrIntersects(${g}, BuildMbr(${env.minX}, ${env.minY}, ${env.maxX}, ${env.maxY})) AND ST_Intersects(${g}, ${box}) = 1`;
    const clipped = wrap(fixed, selectAll(fixed, new Map(), cut), where);
    return validated({ ...rel, sql: `SELECT * FROM (${clipped}) WHERE ${g} IS NOT NULL AND NOT ST_IsEmpty(${g})` });
  },
});

export const clip = define({
  id: 'clip',
  label: 'Clip to layer',
  description:
    "Cuts geometries to the polygons of another layer (of the same dataset, or of another of your Workspaces with workspace_id) and drops those outside them; the pieces keep the layer's geometry type and are valid.",
  category: 'geometry',
  requiresGeometry: true,
  parameters: z.object({ clip_layer: otherLayer, workspace_id: workspaceId }),
  example: { type: 'clip', clip_layer: 'study_area' },
  async compile({ clip_layer, workspace_id }, given, ctx) {
    const {
      rel,
      layers: [clip],
    } = await ctx.attach(given, [clip_layer], workspace_id, 'clip');
    if (!clip) throw invalid('clip: no clip layer');
    if (clip.geom?.family !== 'polygon' && clip.geom?.family !== null) {
      throw invalid(`clip: layer ${clip_layer} holds ${clip.geom ? `${clip.geom.family} geometries` : 'no geometries'}; clipping needs polygons`);
    }
    const g = geomOf(rel);
    const c = quoteIdent(clip.geomName!);
    const fam = rel.geom!.family;
    // GEOS refuses to union or intersect invalid geometries (the clip area or the feature would vanish): repaired first.
    const area = `(SELECT CastToMultiPolygon(ST_Union(${validSql(c, 'polygon')})) AS u FROM ${clip.table} WHERE ${c} IS NOT NULL)`;
    const cut = fam && fam !== 'collection' ? keptMulti(g, `CollectionExtract(ST_Intersection(${g}, a.u), ${familyCode[fam]})`) : `ST_Intersection(${g}, a.u)`;
    const inner = `SELECT ${selectAll(rel, new Map(), cut).join(', ')} FROM (${repairedInput(rel).sql}), ${area} a WHERE ${g} IS NOT NULL AND MbrIntersects(${g}, a.u) AND ST_Intersects(${g}, a.u) = 1`;
    return validated({ ...rel, sql: `SELECT * FROM (${inner}) WHERE ${g} IS NOT NULL AND NOT ST_IsEmpty(${g})` });
  },
});

/** The relation with invalid geometries repaired, once per row, before they are intersected. */
function repairedInput(rel: Relation): Relation {
  return { ...rel, sql: wrap(rel, selectAll(rel, new Map(), validSql(geomOf(rel), rel.geom!.family)), '', true) };
}
