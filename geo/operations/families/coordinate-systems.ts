import { z } from 'zod';
import { checkPipeline, coordinateOperations, outsideAreaSql, withinArea } from '../../crs-operations.js';
import { crsSpecOf, parseCrs, requireCrs, invalid, type CompileContext, type CrsSpec, type Relation } from '../relation.js';
import { quoteString } from '../sql-guard.js';
import { define } from './definition.js';
import { geomOf, withValidGeometry } from './geometry-sql.js';
import { crs } from './parameters.js';

/* Operations on the coordinate reference system: reproject (reporting how), or declare the one the coordinates are in. */

export const reproject = define({
  id: 'reproject',
  label: 'Reproject',
  description:
    'Transforms the geometries to another coordinate reference system; a ring the transformation folds over itself (over a pole, along the antimeridian) is repaired, keeping the geometry type.',
  category: 'crs',
  requiresGeometry: true,
  parameters: z.object({
    target_crs: crs,
    transformation: z
      .string()
      .min(1)
      .max(10_000)
      .optional()
      .describe(
        'A PROJ pipeline (+proj=pipeline +step …) to use instead of the one PROJ would choose; every reproject reports the one it used, with the alternatives, in its warnings (code crs_operation)',
      ),
  }),
  example: { type: 'reproject', target_crs: 'EPSG:3857' },
  async compile({ target_crs, transformation }, rel, ctx) {
    const from = requireCrs(rel, 'reproject');
    const to = crsSpecOf(parseCrs(target_crs, 'reproject'));
    const g = geomOf(rel);
    const pipeline = transformation ? checkPipeline(transformation, 'reproject.transformation', 'invalid_transformation') : null;
    if (pipeline) {
      const failed = await ctx.probe(rel, `SELECT ST_Transform(MakePoint(0, 0), 0, NULL, ${quoteString(pipeline)}, NULL) IS NULL AS t`);
      if (failed !== '0') throw invalid('reproject: PROJ cannot run the transformation pipeline given', { parameter: 'transformation' });
    }
    await reportReprojection(rel, from, to, target_crs, pipeline, ctx);
    const call = pipeline
      ? `ST_Transform(${g}, ST_SRID(${g}), NULL, ${quoteString(pipeline)}, NULL)`
      : `ST_Transform(${g}, ST_SRID(${g}), NULL, ${quoteString(from.definition)}, ${quoteString(to.definition)})`;
    // A valid ring can come out crossing itself (folded over a pole or the antimeridian, or
    // collapsed by rounding): repaired, and reported when it cannot be.
    return withValidGeometry(rel, call, { crs: to, extentLonLat: null });
  },
});

export const assignCrs = define({
  id: 'assign_crs',
  label: 'Set coordinate system',
  description:
    'Declares the CRS the coordinates are in, without changing them: for data without one (a shapefile without .prj) or with a wrong one. Reproject changes coordinates; this changes only what they are said to mean.',
  category: 'crs',
  requiresGeometry: true,
  parameters: z.object({ crs: crs.describe('The CRS the coordinates really are in: EPSG:2263, WKT, PROJJSON or a PROJ string') }),
  example: { type: 'assign_crs', crs: 'EPSG:2263' },
  compile({ crs: declared }, rel) {
    return { rel: { ...rel, crs: crsSpecOf(parseCrs(declared, 'assign_crs')), extentLonLat: null } };
  },
});

/**
 * What a reprojection says: the coordinate operation PROJ uses over the layer (best first, with
 * the alternatives), and how many features lie outside the target CRS's area of use.
 */
async function reportReprojection(rel: Relation, from: CrsSpec, to: CrsSpec, target: string, pipeline: string | null, ctx: CompileContext): Promise<void> {
  const answer = await coordinateOperations(from.definition, to.definition, rel.extentLonLat);
  const used = pipeline ? { name: 'the transformation given', accuracy_m: null, pipeline } : (answer.operations[0] ?? null);
  if (used) {
    const accuracy = used.accuracy_m === null ? 'accuracy unknown' : `accuracy ${used.accuracy_m} m`;
    ctx.warn({
      code: 'crs_operation',
      message: `reproject to ${target}: ${pipeline ? 'with the transformation given' : `PROJ uses "${used.name}" (${accuracy})`}${
        answer.unavailable.length ? `; better, but missing its grid on this server: ${answer.unavailable[0]}` : ''
      }`,
      details: {
        chosen_by: pipeline ? 'request' : 'proj',
        name: used.name,
        accuracy_m: used.accuracy_m,
        pipeline: used.pipeline,
        alternatives: pipeline ? answer.operations : answer.operations.slice(1),
        unavailable: answer.unavailable,
      },
    });
  }
  const area = answer.target_area;
  if (!area || (rel.extentLonLat && withinArea(rel.extentLonLat, area))) return;
  const g = geomOf(rel);
  const lonlat = from.geographic ? g : `ST_Transform(${g}, ST_SRID(${g}), NULL, ${quoteString(from.definition)}, 'EPSG:4326')`;
  const outside = `${outsideAreaSql('MbrMinX(ll)', 'MbrMinY(ll)', area)} OR ${outsideAreaSql('MbrMaxX(ll)', 'MbrMaxY(ll)', area)}`;
  const count = Number(await ctx.probe(rel, `SELECT count(*) AS t FROM (SELECT ${lonlat} AS ll FROM (${rel.sql})) WHERE ll IS NOT NULL AND (${outside})`));
  if (count > 0) {
    ctx.warn({
      code: 'crs_outside_area',
      message: `reproject to ${target}: ${count} feature${count === 1 ? ' lies' : 's lie'} partly or wholly outside its area of use (${area.name.replace(/\.$/, '')}), where its coordinates are not reliable`,
      details: { features: count, target_crs: target, area_of_use: area },
    });
  }
}
