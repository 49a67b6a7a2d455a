import { z } from 'zod';
import { distanceOf, findColumn, invalid, wrap, type FieldSpec, type Relation } from '../relation.js';
import { quoteIdent } from '../sql-guard.js';
import { define } from './definition.js';
import { geomOf, validated, validSql, withGeometry, withValidGeometry } from './geometry-sql.js';
import { column, metresPer, squareMetresPer, units } from './parameters.js';

/*
 * Operations on each geometry: buffer, simplify, repair, centroids, parts, dimensions, dissolve,
 * densify, measures. On longitude/latitude data the metric ones hand their work to the geo step
 * (geo_step.py), in metres on the ellipsoid.
 */

export const buffer = define({
  id: 'buffer',
  label: 'Buffer',
  description:
    'Replaces each geometry with the area within a distance of it; in metres on longitude/latitude data too, right across the antimeridian and over the poles.',
  category: 'geometry',
  requiresGeometry: true,
  parameters: z.object({
    distance: z.number().finite().describe('Buffer distance; negative shrinks polygons'),
    units,
    segments: z.number().int().min(1).max(64).default(8).describe('Segments per quarter circle'),
  }),
  example: { type: 'buffer', distance: 100, units: 'meters' },
  compile({ distance, units, segments }, rel, ctx) {
    const d = distanceOf(rel, 'buffer', 'distance', units, distance, ctx);
    const geom = { ...rel.geom!, family: 'polygon' as const };
    if (d.on === 'lonlat') return { rel: { ...rel, geom }, geoStep: { kind: 'buffer', distance: d.metres, segments } };
    return withValidGeometry(rel, `ST_Buffer(${geomOf(rel)}, ${d.value}, ${segments})`, { geom });
  },
});

export const simplify = define({
  id: 'simplify',
  label: 'Simplify',
  description: 'Removes vertices within a tolerance (Douglas-Peucker); the result is always valid (repaired where a simplification crosses itself).',
  category: 'geometry',
  requiresGeometry: true,
  parameters: z.object({
    tolerance: z.number().finite().positive().describe('Maximum distance a vertex may move'),
    units,
    preserve_topology: z.boolean().default(true),
  }),
  example: { type: 'simplify', tolerance: 10, units: 'meters' },
  compile({ tolerance, units, preserve_topology }, rel, ctx) {
    const d = distanceOf(rel, 'simplify', 'tolerance', units, tolerance, ctx);
    if (d.on === 'lonlat') return { rel, geoStep: { kind: 'simplify', tolerance: d.metres, preserve_topology } };
    const fn = preserve_topology ? 'SimplifyPreserveTopology' : 'ST_Simplify';
    return withValidGeometry(rel, `${fn}(${geomOf(rel)}, ${d.value})`);
  },
});

export const makeValid = define({
  id: 'make_valid',
  label: 'Repair geometries',
  description:
    'Repairs invalid geometries (self-intersections, bad rings) without losing vertices, keeping the geometry type; those that cannot be repaired are reported (geometry_invalid).',
  category: 'geometry',
  requiresGeometry: true,
  parameters: z.object({}),
  example: { type: 'make_valid' },
  compile: (_params, rel) => validated(rel),
});

export const centroid = geometryFunction({
  id: 'centroid',
  label: 'Centroids',
  description: 'Replaces each geometry with its centroid.',
  call: (g) => `ST_Centroid(${g})`,
  change: () => ({ geom: { family: 'point', z: false, m: false } }),
});

export const pointOnSurface = geometryFunction({
  id: 'point_on_surface',
  label: 'Point on surface',
  description: 'Replaces each geometry with a point guaranteed to lie on it (labels on odd shapes).',
  call: (g) => `ST_PointOnSurface(${g})`,
  change: () => ({ geom: { family: 'point', z: false, m: false } }),
});

export const explodeMultipart = define({
  id: 'explode_multipart',
  label: 'Multipart to singlepart',
  description: 'Splits each multi-geometry into one feature per part, attributes copied.',
  category: 'geometry',
  requiresGeometry: true,
  parameters: z.object({}),
  example: { type: 'explode_multipart' },
  compile(_params, rel) {
    // ogr2ogr's -explodecollections ends the stage; the chain continues from its output.
    return { rel: { ...rel, geom: { ...rel.geom!, family: rel.geom!.family === 'collection' ? null : rel.geom!.family } }, explode: true };
  },
});

export const promoteToMulti = geometryFunction({
  id: 'promote_to_multi',
  label: 'Promote to multi',
  description: 'Turns single geometries into multi-geometries, so mixed Polygon/MultiPolygon layers get one type.',
  call: (g) => `CastToMulti(${g})`,
});

export const force2d = geometryFunction({
  id: 'force_2d',
  label: 'Drop Z and M',
  description: 'Removes Z and M coordinates.',
  call: (g) => `CastToXY(${g})`,
  change: (rel) => ({ geom: { ...rel.geom!, z: false, m: false } }),
});

export const dissolve = define({
  id: 'dissolve',
  label: 'Dissolve',
  description:
    'Merges geometries that share the values of the given columns (all of them when none is given); invalid inputs are repaired first, and the result is valid.',
  category: 'geometry',
  requiresGeometry: true,
  parameters: z.object({ by: z.array(column).default([]).describe('Group-by columns; empty merges everything') }),
  example: { type: 'dissolve', by: ['region'] },
  compile({ by: columns }, rel) {
    const g = geomOf(rel);
    const by = [...new Set(columns.map((c) => findColumn(rel, c, 'dissolve')))];
    const keys = by.map((f) => quoteIdent(f.name));
    // GEOS refuses to union an invalid geometry (the whole group would come out null): repaired first.
    const union = `CastToMulti(ST_Union(${validSql(g, rel.geom!.family)}))`;
    const inner = wrap(rel, [...keys, `${union} AS ${g}`, 'COUNT(*) AS "_n"'], keys.length ? ` GROUP BY ${keys.join(', ')}` : '', true);
    // Without GROUP BY an empty layer still yields one row: drop it.
    return validated({ ...rel, fields: by, sql: `SELECT ${[...keys, g].join(', ')} FROM (${inner}) WHERE "_n" > 0` });
  },
});

export const calculateGeometry = define({
  id: 'calculate_geometry',
  label: 'Calculate geometry',
  description:
    'Writes the area, length or perimeter of each geometry into a column, in the unit asked for: on the ellipsoid (geodesic) for longitude/latitude data, in the CRS otherwise. Run it after a buffer or a clip, so Shape_Area is not stale.',
  category: 'geometry',
  requiresGeometry: true,
  parameters: z.object({
    column: z.string().min(1).max(255).describe('Column to write (added, or replaced when it exists)'),
    measure: z.enum(['area', 'length', 'perimeter']),
    units: z
      .enum(['square_meters', 'square_kilometers', 'hectares', 'acres', 'square_feet', 'square_miles', 'meters', 'kilometers', 'feet', 'miles', 'source'])
      .optional()
      .describe('square_meters for area and meters for length and perimeter by default; source: the CRS unit (or its square) as it is'),
  }),
  example: { type: 'calculate_geometry', column: 'area_km2', measure: 'area', units: 'square_kilometers' },
  compile({ column: name, measure, units: given }, rel) {
    const units = given ?? (measure === 'area' ? 'square_meters' : 'meters');
    const areaUnit = units in squareMetresPer;
    if (units !== 'source' && areaUnit !== (measure === 'area')) {
      throw invalid(`calculate_geometry: ${units} is not a unit of ${measure === 'area' ? 'area' : 'length'}`, { units, measure });
    }
    if (rel.geom && name.toLowerCase() === rel.geomName.toLowerCase())
      throw invalid(`calculate_geometry: ${JSON.stringify(name)} is the name of the geometry column`);
    const existing = rel.fields.find((f) => f.name.toLowerCase() === name.toLowerCase());
    const spec: FieldSpec = { name: existing?.name ?? name, type: 'Real', width: 0, precision: 0 };
    const fields = existing ? rel.fields.map((f) => (f === existing ? spec : f)) : [...rel.fields, spec];
    const factor = units === 'source' ? 1 : areaUnit ? squareMetresPer[units]! : metresPer[units]!;
    if (units !== 'source' && !rel.crs) throw invalid('calculate_geometry: the layer has no CRS: set one (assign_crs) or use units "source"');
    if (units !== 'source' && rel.crs!.geographic) {
      return { rel: { ...rel, fields }, geoStep: { kind: 'measure', column: spec.name, measure, factor } };
    }
    const g = geomOf(rel);
    const mpu = units === 'source' ? 1 : rel.crs!.metresPerUnit;
    if (mpu === null) throw invalid('calculate_geometry: the layer CRS has no linear unit; use units "source"');
    const raw = measure === 'area' ? `ST_Area(${g}) * ${mpu * mpu}` : measure === 'length' ? `ST_Length(${g}) * ${mpu}` : `ST_Perimeter(${g}) * ${mpu}`;
    const value = `(CASE WHEN ${g} IS NULL THEN NULL ELSE ${raw} / ${factor} END)`;
    const select = fields.map((f) => (f === spec ? `${value} AS ${quoteIdent(f.name)}` : quoteIdent(f.name)));
    select.push(g);
    return { rel: { ...rel, fields, sql: wrap(rel, select) } };
  },
});

export const densify = define({
  id: 'densify',
  label: 'Densify',
  description:
    'Adds vertices so that no segment is longer than a distance; on longitude/latitude data with a metric unit they follow the geodesic (great circle) between the vertices.',
  category: 'geometry',
  requiresGeometry: true,
  parameters: z.object({ max_segment: z.number().finite().positive().describe('Longest segment allowed'), units }),
  example: { type: 'densify', max_segment: 1000, units: 'meters' },
  compile({ max_segment, units }, rel, ctx) {
    const d = distanceOf(rel, 'densify', 'max_segment', units, max_segment, ctx);
    if (d.on === 'lonlat') return { rel, geoStep: { kind: 'densify', max_segment: d.metres } };
    return withValidGeometry(rel, `ST_Segmentize(${geomOf(rel)}, ${d.value})`);
  },
});

/** An operation without parameters that replaces each geometry by a SpatiaLite function of it (`call` of the quoted column). */
function geometryFunction(d: {
  id: string;
  label: string;
  description: string;
  call: (g: string, rel: Relation) => string;
  /** What the operation changes in the relation besides the SQL (the geometry's kind or dimensions). */
  change?: (rel: Relation) => Partial<Relation>;
}) {
  return define({
    id: d.id,
    label: d.label,
    description: d.description,
    category: 'geometry',
    requiresGeometry: true,
    parameters: z.object({}),
    example: { type: d.id },
    compile: (_params, rel) => withGeometry(rel, d.call(geomOf(rel), rel), d.change?.(rel)),
  });
}
