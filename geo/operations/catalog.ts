import { z } from 'zod';
import { gdal } from '../datasets/gdal.js';
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
const crs = z.string().min(1).max(2000).describe('A CRS GDAL understands: EPSG:4326, EPSG:3857, a PROJ string or WKT');
/** Distances are metres unless another unit is asked for; `source` is the layer CRS's own unit (degrees on longitude/latitude). */
const units = z
  .enum(['meters', 'kilometers', 'feet', 'miles', 'source'])
  .default('meters')
  .describe(
    'Unit of the distance, honoured on any CRS (on longitude/latitude data, per feature on the ellipsoid); source: the layer CRS unit as it is (degrees on longitude/latitude: a large value warns, more than 20 is refused)',
  );
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
