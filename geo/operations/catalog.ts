import { z } from 'zod';
import { gdal } from '../gdal/gdal.js';
import { crsText } from '../crs.js';
import { checkSqlExpression, quoteIdent, quoteString } from './sql-guard.js';
import { checkPipeline, coordinateOperations, outsideAreaSql, withinArea } from '../crs-operations.js';
import {
  castExpression,
  crsSpecOf,
  densifiedBox,
  familyCode,
  findColumn,
  invalid,
  distanceOf,
  parseCrs,
  requireCrs,
  selectAll,
  wrap,
  type CompileContext,
  type Compiled,
  type CrsSpec,
  type AttachedLayer,
  type FieldSpec,
  type Relation,
} from './relation.js';

/**
 * The transformation catalog: every operation the service runs, with its parameters as a zod
 * schema and its behaviour: how it compiles into the SELECT that wraps the previous one
 * (geo/operations/execute runs the chain). Recipes, Jobs and Workspace pipelines validate
 * against it; GET /api/v1/transformations publishes it (parameters as JSON Schema). One place,
 * so a new operation is one entry here.
 */
export type OperationCategory = 'attribute' | 'filter' | 'geometry' | 'crs';

export interface OperationDefinition<P extends z.ZodObject = z.ZodObject> {
  id: string;
  label: string;
  description: string;
  category: OperationCategory;
  /** True when the operation needs a geometry column (invalid_transformation on a non-spatial table). */
  requiresGeometry: boolean;
  parameters: P;
  example: Record<string, unknown>;
  /** The relation after this operation, from its parsed parameters (defaults filled in). */
  compile: (params: z.output<P>, rel: Relation, ctx: CompileContext) => Compiled | Promise<Compiled>;
}

/** A catalogue entry as the engine and the API see it, whatever its parameters. */
export interface CatalogEntry extends Omit<OperationDefinition, 'compile'> {
  /** Compiles one validated operation of this type (its parameters parsed by its own schema). */
  apply(op: ValidatedOperation, rel: Relation, ctx: CompileContext): Promise<Compiled>;
}

const column = z.string().min(1).max(255).describe('Name of an existing column');
const columns = z.array(column).min(1).describe('Names of existing columns');
const crs = crsText('A CRS: an authority code (EPSG:4326, EPSG:3857), an OGC URN, WKT, PROJJSON or a PROJ string');
/** Distances are metres unless another unit is asked for; `source` is the layer CRS's own unit (degrees on longitude/latitude). */
const units = z
  .enum(['meters', 'kilometers', 'feet', 'miles', 'source'])
  .default('meters')
  .describe(
    'Unit of the distance, honoured on any CRS (on longitude/latitude data, per feature on the ellipsoid); source: the layer CRS unit as it is (degrees on longitude/latitude: a large value warns, more than 20 is refused)',
  );
/** A layer other than the one the pipeline applies to. */
const otherLayer = z.string().min(1).max(1000).describe('Name of another layer of the dataset (or of the Workspace workspace_id names)');
const workspaceId = z
  .string()
  .min(1)
  .max(100)
  .optional()
  .describe('Another Workspace of yours holding that layer (a second upload or import); in Workspace pipelines only. Same dataset by default');
const sqlExpression = z.string().min(1).max(4000).describe('An expression in the SQLite dialect over the layer columns, e.g. population > 1000');

function define<P extends z.ZodObject>({ compile, ...d }: OperationDefinition<P>): CatalogEntry {
  return {
    ...d,
    async apply(op, rel, ctx) {
      const { type: _type, ...params } = op;
      return compile(d.parameters.parse(params), rel, ctx);
    },
  };
}

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

const metresPer: Record<string, number> = { meters: 1, kilometers: 1000, feet: 0.3048, miles: 1609.344 };
const squareMetresPer: Record<string, number> = {
  square_meters: 1,
  square_kilometers: 1e6,
  hectares: 1e4,
  acres: 4046.8564224,
  square_feet: 0.09290304,
  square_miles: 2589988.110336,
};

/** The wider of two OGR field types, for columns merged from layers that disagree. */
function widerType(a: string, b: string): string {
  if (a === b) return a;
  const numeric = ['Integer', 'Integer64', 'Real'];
  if (numeric.includes(a) && numeric.includes(b)) return numeric[Math.max(numeric.indexOf(a), numeric.indexOf(b))]!;
  if ((a === 'Date' && b === 'DateTime') || (a === 'DateTime' && b === 'Date')) return 'DateTime';
  return 'String';
}

/** The columns a join adds: chosen (all by default), renamed with join_ where this layer has the name. */
function joinedColumns(rel: Relation, other: AttachedLayer, wanted: string[] | undefined, op: string): { from: string; spec: FieldSpec }[] {
  const chosen = wanted ? [...new Set(wanted.map((c) => findColumn({ ...rel, fields: other.fields }, c, `${op} (columns of ${other.name})`)))] : other.fields;
  const taken = new Set(rel.fields.map((f) => f.name.toLowerCase()));
  if (rel.geom) taken.add(rel.geomName.toLowerCase());
  return chosen.map((f) => {
    let name = f.name;
    for (let i = 1; taken.has(name.toLowerCase()); i++) name = `join_${f.name}${i > 1 ? `_${i}` : ''}`;
    taken.add(name.toLowerCase());
    return { from: f.name, spec: { ...f, name } };
  });
}

/**
 * This layer (t) joined with another (j) on a condition: every match, or the first per row (in the
 * other layer's order), unmatched rows kept or dropped. Rows keep their order.
 */
function joinSql(
  rel: Relation,
  other: AttachedLayer,
  added: { from: string; spec: FieldSpec }[],
  on: string,
  extra: string[],
  keep: boolean,
  policy: 'first' | 'all',
  /** The rows numbered (_join_row) with their nearest feature's fid (_join_near), for predicate nearest. */
  nearest: string | null = null,
): string {
  const own = rel.fields.map((f) => `t.${quoteIdent(f.name)} AS ${quoteIdent(f.name)}`);
  const theirs = added.map((a) => `j.${quoteIdent(a.from)} AS ${quoteIdent(a.spec.name)}`);
  const geometry = rel.geom ? [`t.${geomOf(rel)} AS ${geomOf(rel)}`] : [];
  const numbered = nearest ?? `SELECT n.*, ROW_NUMBER() OVER () AS "_join_row" FROM (${rel.sql}) n`;
  const joined = `SELECT ${[...own, ...theirs, ...extra, ...geometry, 't."_join_row" AS "_join_row"', 'j.fid AS "_join_fid"'].join(', ')} FROM (${numbered}) t ${
    keep ? 'LEFT JOIN' : 'JOIN'
  } ${other.table} j ON ${on}`;
  const names = [
    ...rel.fields.map((f) => f.name),
    ...added.map((a) => a.spec.name),
    ...extra.map((e) => /AS ("(?:[^"]|"")+")$/.exec(e)![1]!.slice(1, -1).replace(/""/g, '"')),
  ];
  const out = [...names.map((n) => quoteIdent(n)), ...(rel.geom ? [geomOf(rel)] : [])].join(', ');
  if (policy === 'all') return `SELECT ${out} FROM (${joined}) ORDER BY "_join_row", "_join_fid"`;
  const ranked = `SELECT *, ROW_NUMBER() OVER (PARTITION BY "_join_row" ORDER BY "_join_fid") AS "_join_rank" FROM (${joined})`;
  return `SELECT ${out} FROM (${ranked}) WHERE "_join_rank" = 1 ORDER BY "_join_row"`;
}

/** The geometry column of the relation, quoted. */
const geomOf = (rel: Relation) => quoteIdent(rel.geomName);

/** An operation that replaces each geometry by `call(geometry)` and keeps everything else. */
const withGeometry = (rel: Relation, call: string, change: Partial<Relation> = {}): Compiled => ({
  rel: { ...rel, ...change, sql: wrap(rel, selectAll(rel, new Map(), call)) },
});

/**
 * Like withGeometry, for a call whose result can be invalid (a simplification that crosses
 * itself): an invalid result is repaired, keeping the layer's kind of geometry.
 */
function withValidGeometry(rel: Relation, call: string, change: Partial<Relation> = {}): Compiled {
  const next = withGeometry(rel, call, change).rel;
  const g = geomOf(next);
  const fam = next.geom!.family;
  const repaired = fam === 'line' || fam === 'polygon' ? `CollectionExtract(ST_MakeValid(${g}), ${familyCode[fam]})` : `ST_MakeValid(${g})`;
  const valid = `CASE WHEN ${g} IS NULL OR ST_IsValid(${g}) = 1 THEN ${g} ELSE ${repaired} END`;
  return { rel: { ...next, sql: wrap(next, selectAll(next, new Map(), valid)) } };
}

export const operationCatalog = [
  define({
    id: 'rename_column',
    label: 'Rename column',
    description: 'Renames one attribute column.',
    category: 'attribute',
    requiresGeometry: false,
    parameters: z.object({ from: column, to: z.string().min(1).max(255).describe('New column name') }),
    example: { type: 'rename_column', from: 'NAME_EN', to: 'name' },
    compile({ from: fromName, to }, rel) {
      const from = findColumn(rel, fromName, 'rename_column');
      if (rel.fields.some((f) => f !== from && f.name.toLowerCase() === to.toLowerCase()))
        throw invalid(`rename_column: a column named ${JSON.stringify(to)} already exists`);
      if (rel.geom && to.toLowerCase() === rel.geomName.toLowerCase()) throw invalid(`rename_column: ${JSON.stringify(to)} is the name of the geometry column`);
      const select = rel.fields.map((f) => (f === from ? `${quoteIdent(f.name)} AS ${quoteIdent(to)}` : quoteIdent(f.name)));
      if (rel.geom) select.push(geomOf(rel));
      return { rel: { ...rel, sql: wrap(rel, select), fields: rel.fields.map((f) => (f === from ? { ...f, name: to } : f)) } };
    },
  }),
  define({
    id: 'select_columns',
    label: 'Keep columns',
    description: 'Keeps only the listed attribute columns (and the geometry), in that order.',
    category: 'attribute',
    requiresGeometry: false,
    parameters: z.object({ columns }),
    example: { type: 'select_columns', columns: ['id', 'name'] },
    compile({ columns }, rel) {
      const keep = [...new Set(columns.map((c) => findColumn(rel, c, 'select_columns')))];
      const next = { ...rel, fields: keep };
      return { rel: { ...next, sql: wrap(rel, selectAll(next)) } };
    },
  }),
  define({
    id: 'drop_columns',
    label: 'Drop columns',
    description: 'Removes the listed attribute columns.',
    category: 'attribute',
    requiresGeometry: false,
    parameters: z.object({ columns }),
    example: { type: 'drop_columns', columns: ['tmp', 'shape_area'] },
    compile({ columns }, rel) {
      const drop = new Set(columns.map((c) => findColumn(rel, c, 'drop_columns')));
      const next = { ...rel, fields: rel.fields.filter((f) => !drop.has(f)) };
      return { rel: { ...next, sql: wrap(rel, selectAll(next)) } };
    },
  }),
  define({
    id: 'cast_column',
    label: 'Change column type',
    description: 'Converts a column to another type; values that do not convert become null.',
    category: 'attribute',
    requiresGeometry: false,
    parameters: z.object({ column, to: z.enum(['integer', 'integer64', 'real', 'string', 'date', 'datetime']) }),
    example: { type: 'cast_column', column: 'population', to: 'integer' },
    compile({ column, to }, rel) {
      const col = findColumn(rel, column, 'cast_column');
      const cast = castExpression(col.name, to);
      const fields = rel.fields.map((f) => (f === col ? { name: f.name, type: cast.type, width: 0, precision: 0 } : f));
      return { rel: { ...rel, fields, sql: wrap(rel, selectAll(rel, new Map([[col.name, cast.sql]]))) } };
    },
  }),
  define({
    id: 'compute_column',
    label: 'Calculate column',
    description: 'Adds or replaces a column with the value of an expression.',
    category: 'attribute',
    requiresGeometry: false,
    parameters: z.object({ column: z.string().min(1).max(255).describe('Column to write'), expression: sqlExpression }),
    example: { type: 'compute_column', column: 'density', expression: 'population / area_km2' },
    async compile({ column: name, expression }, rel, { probe }) {
      const expr = checkSqlExpression(expression, 'compute_column expression');
      if (rel.geom && name.toLowerCase() === rel.geomName.toLowerCase())
        throw invalid(`compute_column: ${JSON.stringify(name)} is the name of the geometry column`);
      // The type is the first non-null value's: GDAL would guess it from the first row (NULL → String).
      const typeName = await probe(rel, `SELECT typeof(v) AS t FROM (SELECT ${expr} AS v FROM (${rel.sql})) WHERE v IS NOT NULL LIMIT 1`);
      const type = typeName === 'integer' ? 'Integer64' : typeName === 'real' ? 'Real' : typeName === 'blob' ? 'Binary' : 'String';
      const existing = rel.fields.find((f) => f.name.toLowerCase() === name.toLowerCase());
      const spec: FieldSpec = { name: existing?.name ?? name, type, width: 0, precision: 0 };
      const fields = existing ? rel.fields.map((f) => (f === existing ? spec : f)) : [...rel.fields, spec];
      const select = fields.map((f) => (f === spec ? `${expr} AS ${quoteIdent(f.name)}` : quoteIdent(f.name)));
      if (rel.geom) select.push(geomOf(rel));
      return { rel: { ...rel, fields, sql: wrap(rel, select) } };
    },
  }),
  define({
    id: 'filter',
    label: 'Filter rows',
    description: 'Keeps the rows for which the expression is true.',
    category: 'filter',
    requiresGeometry: false,
    parameters: z.object({ where: sqlExpression }),
    example: { type: 'filter', where: "status = 'active' AND population > 1000" },
    async compile({ where: condition }, rel, { probe }) {
      const where = checkSqlExpression(condition, 'filter condition');
      // Run the condition once now, so a wrong column is reported as such rather than mid-convert.
      await probe(rel, `SELECT 1 AS t FROM (${rel.sql}) WHERE ${where} LIMIT 1`);
      return { rel: { ...rel, sql: wrap(rel, selectAll(rel), ` WHERE ${where}`) } };
    },
  }),
  define({
    id: 'reproject',
    label: 'Reproject',
    description: 'Transforms the geometries to another coordinate reference system.',
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
      return withGeometry(rel, call, { crs: to, extentLonLat: null });
    },
  }),
  define({
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
  }),
  define({
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
  }),
  define({
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
  }),
  define({
    id: 'make_valid',
    label: 'Repair geometries',
    description: 'Repairs invalid geometries (self-intersections, bad rings) without losing vertices.',
    category: 'geometry',
    requiresGeometry: true,
    parameters: z.object({}),
    example: { type: 'make_valid' },
    compile(_params, rel) {
      const fam = rel.geom!.family;
      const g = geomOf(rel);
      // Repair can turn a polygon into a polygon plus stray lines: keep the layer's own kind.
      return withGeometry(rel, fam === 'line' || fam === 'polygon' ? `CollectionExtract(ST_MakeValid(${g}), ${familyCode[fam]})` : `ST_MakeValid(${g})`);
    },
  }),
  define({
    id: 'centroid',
    label: 'Centroids',
    description: 'Replaces each geometry with its centroid.',
    category: 'geometry',
    requiresGeometry: true,
    parameters: z.object({}),
    example: { type: 'centroid' },
    compile(_params, rel) {
      return withGeometry(rel, `ST_Centroid(${geomOf(rel)})`, { geom: { family: 'point', z: false, m: false } });
    },
  }),
  define({
    id: 'point_on_surface',
    label: 'Point on surface',
    description: 'Replaces each geometry with a point guaranteed to lie on it (labels on odd shapes).',
    category: 'geometry',
    requiresGeometry: true,
    parameters: z.object({}),
    example: { type: 'point_on_surface' },
    compile(_params, rel) {
      return withGeometry(rel, `ST_PointOnSurface(${geomOf(rel)})`, { geom: { family: 'point', z: false, m: false } });
    },
  }),
  define({
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
  }),
  define({
    id: 'promote_to_multi',
    label: 'Promote to multi',
    description: 'Turns single geometries into multi-geometries, so mixed Polygon/MultiPolygon layers get one type.',
    category: 'geometry',
    requiresGeometry: true,
    parameters: z.object({}),
    example: { type: 'promote_to_multi' },
    compile(_params, rel) {
      return withGeometry(rel, `CastToMulti(${geomOf(rel)})`);
    },
  }),
  define({
    id: 'force_2d',
    label: 'Drop Z and M',
    description: 'Removes Z and M coordinates.',
    category: 'geometry',
    requiresGeometry: true,
    parameters: z.object({}),
    example: { type: 'force_2d' },
    compile(_params, rel) {
      return withGeometry(rel, `CastToXY(${geomOf(rel)})`, { geom: { ...rel.geom!, z: false, m: false } });
    },
  }),
  define({
    id: 'dissolve',
    label: 'Dissolve',
    description: 'Merges geometries that share the values of the given columns (all of them when none is given).',
    category: 'geometry',
    requiresGeometry: true,
    parameters: z.object({ by: z.array(column).default([]).describe('Group-by columns; empty merges everything') }),
    example: { type: 'dissolve', by: ['region'] },
    compile({ by: columns }, rel) {
      const g = geomOf(rel);
      const by = [...new Set(columns.map((c) => findColumn(rel, c, 'dissolve')))];
      const keys = by.map((f) => quoteIdent(f.name));
      const inner = `SELECT ${[...keys, `CastToMulti(ST_Union(${g})) AS ${g}`, 'COUNT(*) AS "_n"'].join(', ')} FROM (${rel.sql})${keys.length ? ` GROUP BY ${keys.join(', ')}` : ''}`;
      // Without GROUP BY an empty layer still yields one row: drop it.
      return { rel: { ...rel, fields: by, sql: `SELECT ${[...keys, g].join(', ')} FROM (${inner}) WHERE "_n" > 0` } };
    },
  }),
  define({
    id: 'clip_bbox',
    label: 'Clip to box',
    description: 'Cuts geometries to a bounding box and drops those outside it.',
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
      const cut = fam && fam !== 'collection' ? `CollectionExtract(ST_Intersection(${g}, ${box}), ${familyCode[fam]})` : `ST_Intersection(${g}, ${box})`;
      const where = ` WHERE MbrIntersects(${g}, BuildMbr(${env.minX}, ${env.minY}, ${env.maxX}, ${env.maxY})) AND ST_Intersects(${g}, ${box}) = 1`;
      const clipped = wrap(rel, selectAll(rel, new Map(), cut), where);
      return { rel: { ...rel, sql: `SELECT * FROM (${clipped}) WHERE ${g} IS NOT NULL` } };
    },
  }),
  define({
    id: 'clip',
    label: 'Clip to layer',
    description:
      'Cuts geometries to the polygons of another layer (of the same dataset, or of another of your Workspaces with workspace_id) and drops those outside them.',
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
      const area = `(SELECT CastToMultiPolygon(ST_Union(${c})) AS u FROM ${clip.table} WHERE ${c} IS NOT NULL)`;
      const cut = fam && fam !== 'collection' ? `CollectionExtract(ST_Intersection(${g}, a.u), ${familyCode[fam]})` : `ST_Intersection(${g}, a.u)`;
      const inner = `SELECT ${selectAll(rel, new Map(), cut).join(', ')} FROM (${rel.sql}), ${area} a WHERE ${g} IS NOT NULL AND MbrIntersects(${g}, a.u) AND ST_Intersects(${g}, a.u) = 1`;
      return { rel: { ...rel, sql: `SELECT * FROM (${inner}) WHERE ${g} IS NOT NULL AND NOT ST_IsEmpty(${g})` } };
    },
  }),
  define({
    id: 'spatial_join',
    label: 'Spatial join',
    description:
      'Adds the attributes of the features of another layer that intersect, contain, lie within or are nearest to each feature; one row per feature (the first match) or per match.',
    category: 'geometry',
    requiresGeometry: true,
    parameters: z.object({
      join_layer: otherLayer,
      workspace_id: workspaceId,
      predicate: z
        .enum(['intersects', 'contains', 'within', 'nearest'])
        .default('intersects')
        .describe('contains: the feature contains the joined one; within: it lies within it'),
      columns: z.array(column).optional().describe('Columns of the joined layer to add; all by default'),
      one_to_many: z
        .enum(['first', 'all'])
        .default('first')
        .describe('first: one row per feature, with its first match (in the joined layer order; nearest: the nearest); all: one row per match'),
      keep_unmatched: z.boolean().default(true).describe('Keep features without a match (joined columns null)'),
      max_distance: z.number().finite().positive().optional().describe('nearest: farthest match, in `units`'),
      units,
      distance_column: z.string().min(1).max(255).nullable().default(null).describe('nearest: name of a column receiving the distance, in `units`'),
    }),
    example: { type: 'spatial_join', join_layer: 'districts', predicate: 'intersects', columns: ['district'] },
    async compile(p, given, ctx) {
      const {
        rel,
        layers: [other],
      } = await ctx.attach(given, [p.join_layer], p.workspace_id, 'spatial_join');
      if (!other) throw invalid('spatial_join: no join layer');
      if (!other.geom) throw invalid(`spatial_join: layer ${p.join_layer} has no geometries; use attribute_join for a table`);
      const added = joinedColumns(rel, other, p.columns, 'spatial_join');
      const g = `t.${geomOf(rel)}`;
      const jg = `j.${quoteIdent(other.geomName!)}`;
      const geographic = rel.crs?.geographic === true;
      const factor = p.units === 'source' ? 1 : metresPer[p.units]!;
      if (p.predicate === 'nearest' && p.units !== 'source' && !rel.crs)
        throw invalid('spatial_join: the layer has no CRS, so distances can only be in units "source"');
      // Distances in metres: on the ellipsoid for longitude/latitude, in the CRS unit otherwise.
      // (SpatiaLite's ellipsoidal distance to a line or polygon goes to its nearest vertex: measured
      // instead between the two closest points, found with longitudes scaled by the cosine of the
      // latitude, as the ground has them there.)
      const closest = (x: string, y: string, k: string) =>
        `ScaleCoords(ST_ClosestPoint(ScaleCoords(${x}, ${k}, 1), ScaleCoords(${y}, ${k}, 1)), 1.0 / ${k}, 1)`;
      const metres = (a: string, b: string) => {
        const k = `max(Cos(Radians((MbrMinY(${a}) + MbrMaxY(${a})) / 2.0)), 0.01)`;
        return geographic
          ? `(CASE WHEN ST_Intersects(${a}, ${b}) = 1 THEN 0.0 ELSE ST_Distance(${closest(a, b, k)}, ${closest(b, a, k)}, 1) END)`
          : `(ST_Distance(${a}, ${b}) * ${rel.crs?.metresPerUnit ?? 1})`;
      };
      const distance = (a: string, b: string) => (p.units === 'source' ? `ST_Distance(${a}, ${b})` : `(${metres(a, b)} / ${factor})`);
      let on: string;
      let nearest: string | null = null;
      if (p.predicate === 'nearest') {
        // The nearest feature's id, found per row before the join.
        // The nearest is found per row in three passes, each materialised (a window function keeps
        // SQLite from folding them into one, which would repeat the work per candidate): the least
        // planar distance; on longitude/latitude, the least ellipsoidal distance among the
        // candidates no farther than that by the shrinking of a degree of longitude there; the
        // feature at that distance. (SQLite resolves no outer column in a subquery's ORDER BY.)
        const other_g = quoteIdent(other.geomName!);
        const gq = geomOf(rel);
        const stretch = (x: string) => `(1.0 / max(Cos(Radians(min(max(abs(MbrMaxY(${x})), abs(MbrMinY(${x}))), 89.0))), 0.01))`;
        const candidate = (row: string, y: string) =>
          geographic ? `ST_Distance(${row}.${gq}, ${y}) <= ${row}."_join_pmin" * ${stretch(`${row}.${gq}`)} + 1e-9` : '1';
        const first = `SELECT n.*, ROW_NUMBER() OVER () AS "_join_row", (SELECT min(ST_Distance(n.${gq}, b.${other_g})) FROM ${other.table} b WHERE b.${other_g} IS NOT NULL) AS "_join_pmin" FROM (${rel.sql}) n`;
        const second = `SELECT m.*, ROW_NUMBER() OVER () AS "_join_w2", (SELECT min(${distance(`m.${gq}`, `c.${other_g}`)}) FROM ${other.table} c WHERE c.${other_g} IS NOT NULL AND ${candidate('m', `c.${other_g}`)}) AS "_join_dmin" FROM (${first}) m`;
        nearest = `SELECT k.*, ROW_NUMBER() OVER () AS "_join_w3", (SELECT a.fid FROM ${other.table} a WHERE a.${other_g} IS NOT NULL AND ${candidate('k', `a.${other_g}`)} AND ${distance(`k.${gq}`, `a.${other_g}`)} = k."_join_dmin" ORDER BY a.fid LIMIT 1) AS "_join_near" FROM (${second}) k`;
        const within = p.max_distance === undefined ? '' : ` AND ${distance(g, jg)} <= ${p.max_distance}`;
        on = `j.fid = t."_join_near"${within}`;
      } else {
        const test = { intersects: ['MbrIntersects', 'ST_Intersects'], contains: ['MbrContains', 'ST_Contains'], within: ['MbrWithin', 'ST_Within'] }[
          p.predicate
        ];
        on = `${test[0]}(${g}, ${jg}) AND ${test[1]}(${g}, ${jg}) = 1`;
      }
      const distanceField = p.predicate === 'nearest' && p.distance_column ? p.distance_column : null;
      if (distanceField && [...rel.fields, ...added.map((a) => a.spec)].some((f) => f.name.toLowerCase() === distanceField.toLowerCase())) {
        throw invalid(`spatial_join: a column named ${JSON.stringify(distanceField)} already exists`);
      }
      const extra = distanceField ? [`CASE WHEN j.fid IS NULL THEN NULL ELSE ${distance(g, jg)} END AS ${quoteIdent(distanceField)}`] : [];
      const fields = [...rel.fields, ...added.map((a) => a.spec), ...(distanceField ? [{ name: distanceField, type: 'Real', width: 0, precision: 0 }] : [])];
      return { rel: { ...rel, fields, sql: joinSql(rel, other, added, on, extra, p.keep_unmatched, p.one_to_many, nearest) } };
    },
  }),
  define({
    id: 'attribute_join',
    label: 'Join attributes',
    description:
      'Adds the columns of a table (a layer of the same dataset, or of another Workspace: a CSV, a spreadsheet) to the rows whose key matches; one row per row (the first match) or per match.',
    category: 'attribute',
    requiresGeometry: false,
    parameters: z.object({
      join_layer: otherLayer,
      workspace_id: workspaceId,
      key: column.describe('Key column of this layer'),
      join_key: column.optional().describe('Key column of the joined table; the same name by default'),
      columns: z.array(column).optional().describe('Columns of the joined table to add; all but its key by default'),
      one_to_many: z.enum(['first', 'all']).default('first').describe('first: one row per row, with its first match; all: one row per match'),
      keep_unmatched: z.boolean().default(true).describe('Keep rows without a match (joined columns null)'),
    }),
    example: { type: 'attribute_join', join_layer: 'owners', key: 'owner_id' },
    async compile(p, given, ctx) {
      const key = findColumn(given, p.key, 'attribute_join');
      const {
        rel,
        layers: [other],
      } = await ctx.attach(given, [p.join_layer], p.workspace_id, 'attribute_join');
      if (!other) throw invalid('attribute_join: no join layer');
      const otherKey = findColumn({ ...rel, fields: other.fields }, p.join_key ?? p.key, 'attribute_join (join_key)');
      const chosen = p.columns ?? other.fields.filter((f) => f !== otherKey).map((f) => f.name);
      const added = joinedColumns(rel, other, chosen, 'attribute_join');
      // Keys of different kinds (a CSV's text against integers) compare as trimmed text.
      const numeric = (f: FieldSpec) => /^(Integer|Integer64|Real)$/.test(f.type);
      const a = `t.${quoteIdent(key.name)}`;
      const b = `j.${quoteIdent(otherKey.name)}`;
      const on = numeric(key) === numeric(otherKey) ? `${a} = ${b}` : `trim(CAST(${a} AS TEXT)) = trim(CAST(${b} AS TEXT))`;
      const fields = [...rel.fields, ...added.map((x) => x.spec)];
      return { rel: { ...rel, fields, sql: joinSql(rel, other, added, on, [], p.keep_unmatched, p.one_to_many) } };
    },
  }),
  define({
    id: 'merge',
    label: 'Merge layers',
    description:
      'Appends the features of other layers (of the same dataset, or of another Workspace) to this one: columns matched by name, missing ones null, types widened where they differ, geometries reprojected to this layer CRS.',
    category: 'attribute',
    requiresGeometry: false,
    parameters: z.object({
      merge_layers: z.array(otherLayer).min(1).max(50).describe('Layers whose features are appended, in order'),
      workspace_id: workspaceId,
      source_column: z.string().min(1).max(255).nullable().default(null).describe('Name of a column receiving each row’s layer name; none by default'),
    }),
    example: { type: 'merge', merge_layers: ['roads_north', 'roads_south'], source_column: 'source' },
    async compile(p, given, ctx) {
      const { rel, layers: others } = await ctx.attach(given, p.merge_layers, p.workspace_id, 'merge');
      // The columns: this layer's, then new ones in the order the others bring them.
      const fields: FieldSpec[] = rel.fields.map((f) => ({ ...f }));
      for (const other of others) {
        for (const f of other.fields) {
          const same = fields.find((x) => x.name.toLowerCase() === f.name.toLowerCase());
          if (same) Object.assign(same, { type: widerType(same.type, f.type), width: 0, precision: 0 });
          else fields.push({ ...f });
        }
      }
      if (p.source_column && fields.some((f) => f.name.toLowerCase() === p.source_column!.toLowerCase())) {
        throw invalid(`merge: a column named ${JSON.stringify(p.source_column)} already exists`);
      }
      const all = p.source_column ? [...fields, { name: p.source_column, type: 'String', width: 0, precision: 0 }] : fields;
      const g = geomOf(rel);
      const pick = (have: FieldSpec[], layerName: string, geometry: string | null) => [
        ...fields.map((f) => {
          const own = have.find((x) => x.name.toLowerCase() === f.name.toLowerCase());
          return `${own ? quoteIdent(own.name) : 'NULL'} AS ${quoteIdent(f.name)}`;
        }),
        ...(p.source_column ? [`${quoteString(layerName)} AS ${quoteIdent(p.source_column)}`] : []),
        ...(rel.geom ? [`${geometry ?? 'NULL'} AS ${g}`] : []),
      ];
      const parts = [
        `SELECT ${pick(rel.fields, ctx.layer, rel.geom ? g : null).join(', ')} FROM (${rel.sql})`,
        ...others.map((o) => `SELECT ${pick(o.fields, o.name, o.geomName ? quoteIdent(o.geomName) : null).join(', ')} FROM ${o.table}`),
      ];
      const families = new Set([rel.geom?.family, ...others.filter((o) => o.geom).map((o) => o.geom!.family)]);
      const geom = rel.geom ? { ...rel.geom, family: families.size === 1 ? rel.geom.family : null } : null;
      return { rel: { ...rel, fields: all, geom, sql: `SELECT * FROM (${parts.join(' UNION ALL ')})` } };
    },
  }),
  define({
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
  }),
  define({
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
  }),
  define({
    id: 'deduplicate',
    label: 'Remove duplicates',
    description:
      'Keeps the first of rows that are equal in the given columns (all attribute columns by default) and, unless told otherwise, in their geometry.',
    category: 'filter',
    requiresGeometry: false,
    parameters: z.object({
      columns: z.array(column).default([]).describe('Columns compared; all attribute columns when empty'),
      compare_geometry: z.boolean().default(true).describe('Compare geometries too (equal vertices in the same order)'),
    }),
    example: { type: 'deduplicate', columns: ['region'], compare_geometry: false },
    compile({ columns, compare_geometry }, rel) {
      const by = (columns.length ? [...new Set(columns.map((c) => findColumn(rel, c, 'deduplicate')))] : rel.fields).map((f) => quoteIdent(f.name));
      if (compare_geometry && rel.geom) by.push(`AsBinary(${geomOf(rel)})`);
      if (by.length === 0) throw invalid('deduplicate: nothing to compare: the layer has no columns; name some, or compare geometries');
      const numbered = `SELECT *, ROW_NUMBER() OVER () AS "_dedup_row" FROM (${rel.sql})`;
      const ranked = `SELECT *, ROW_NUMBER() OVER (PARTITION BY ${by.join(', ')} ORDER BY "_dedup_row") AS "_dedup_rank" FROM (${numbered})`;
      return { rel: { ...rel, sql: `SELECT ${selectAll(rel).join(', ')} FROM (${ranked}) WHERE "_dedup_rank" = 1 ORDER BY "_dedup_row"` } };
    },
  }),
  define({
    id: 'sort',
    label: 'Sort',
    description: 'Orders the rows by columns (empty values last); the output keeps that order.',
    category: 'attribute',
    requiresGeometry: false,
    parameters: z.object({
      by: z
        .array(z.object({ column, descending: z.boolean().default(false) }).strict())
        .min(1)
        .max(20)
        .describe('Sort keys, most significant first'),
    }),
    example: { type: 'sort', by: [{ column: 'population', descending: true }, { column: 'NAME_EN' }] },
    compile({ by }, rel) {
      const keys = by.map((k) => `${quoteIdent(findColumn(rel, k.column, 'sort').name)} ${k.descending ? 'DESC' : 'ASC'} NULLS LAST`);
      return { rel: { ...rel, sql: wrap(rel, selectAll(rel), ` ORDER BY ${keys.join(', ')}`) } };
    },
  }),
] as const;

export const operationById = new Map<string, CatalogEntry>(operationCatalog.map((d) => [d.id, d]));

/** Compiles one validated operation against the relation so far (its catalogue entry does the work). */
export async function compileOperation(op: ValidatedOperation, rel: Relation, ctx: CompileContext): Promise<Compiled> {
  const entry = operationById.get(op.type);
  if (!entry) throw invalid(`Unknown operation ${op.type}`);
  return entry.apply(op, rel, ctx);
}

/** One validated operation: the id plus its parsed parameters (defaults filled in). */
export type ValidatedOperation = { type: string } & Record<string, unknown>;

export interface OperationIssue {
  path: (string | number)[];
  message: string;
}

/**
 * Validates a list of operation objects against the catalog. Issues name the field
 * (operations.2.distance) so the API can answer 422 with the exact place.
 */
export function validateOperations(
  operations: unknown[],
  basePath: (string | number)[] = ['operations'],
): { ok: true; operations: ValidatedOperation[] } | { ok: false; issues: OperationIssue[] } {
  const issues: OperationIssue[] = [];
  const out: ValidatedOperation[] = [];
  operations.forEach((raw, index) => {
    const path = [...basePath, index];
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      issues.push({ path, message: 'must be an object with a type' });
      return;
    }
    const { type, ...params } = raw as Record<string, unknown>;
    const definition = typeof type === 'string' ? operationById.get(type) : undefined;
    if (!definition) {
      issues.push({
        path: [...path, 'type'],
        message: `unknown operation type ${JSON.stringify(type)}; GET /api/v1/transformations lists the valid ones`,
      });
      return;
    }
    if ('layer' in params) {
      issues.push({ path: [...path, 'layer'], message: 'operations carry no layer key; choose layers on the pipeline' });
      return;
    }
    const parsed = definition.parameters.strict().safeParse(params);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) issues.push({ path: [...path, ...(issue.path as (string | number)[])], message: issue.message });
      return;
    }
    out.push({ type: definition.id, ...(parsed.data as Record<string, unknown>) });
  });
  return issues.length ? { ok: false, issues } : { ok: true, operations: out };
}

/** The public view of the catalog (GET /api/v1/transformations). */
export function publicCatalog() {
  return operationCatalog.map((d) => ({
    id: d.id,
    label: d.label,
    description: d.description,
    category: d.category,
    requires_geometry: d.requiresGeometry,
    parameters: z.toJSONSchema(d.parameters, { io: 'input' }),
    example: d.example,
  }));
}
