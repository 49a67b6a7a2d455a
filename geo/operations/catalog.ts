import { z } from 'zod';

/**
 * The transformation catalog: every operation the service runs, with its parameters as a zod
 * schema. Recipes, Jobs and Workspace pipelines validate against it; GET /api/v1/transformations
 * publishes it (parameters as JSON Schema); geo/operations/execute runs it. One place, so a new
 * operation is one entry here plus its executor.
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
}

const column = z.string().min(1).max(255).describe('Name of an existing column');
const columns = z.array(column).min(1).describe('Names of existing columns');
const crs = z
  .string()
  .min(1)
  .max(2000)
  .describe('A CRS GDAL understands: EPSG:4326, EPSG:3857, a PROJ string or WKT');
/** Distances on geographic (degree) data are measured in metres unless `source` is asked for. */
const units = z
  .enum(['source', 'meters', 'kilometers', 'feet', 'miles'])
  .default('source')
  .describe('source: the units of the layer CRS (degrees on geographic data); otherwise a length unit, honoured on any CRS');
const sqlExpression = z
  .string()
  .min(1)
  .max(4000)
  .describe('An expression in the SQLite dialect over the layer columns, e.g. population > 1000');

function define<P extends z.ZodObject>(d: OperationDefinition<P>): OperationDefinition<P> {
  return d;
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
  }),
  define({
    id: 'select_columns',
    label: 'Keep columns',
    description: 'Keeps only the listed attribute columns (and the geometry), in that order.',
    category: 'attribute',
    requiresGeometry: false,
    parameters: z.object({ columns }),
    example: { type: 'select_columns', columns: ['id', 'name'] },
  }),
  define({
    id: 'drop_columns',
    label: 'Drop columns',
    description: 'Removes the listed attribute columns.',
    category: 'attribute',
    requiresGeometry: false,
    parameters: z.object({ columns }),
    example: { type: 'drop_columns', columns: ['tmp', 'shape_area'] },
  }),
  define({
    id: 'cast_column',
    label: 'Change column type',
    description: 'Converts a column to another type; values that do not convert become null.',
    category: 'attribute',
    requiresGeometry: false,
    parameters: z.object({ column, to: z.enum(['integer', 'integer64', 'real', 'string', 'date', 'datetime']) }),
    example: { type: 'cast_column', column: 'population', to: 'integer' },
  }),
  define({
    id: 'compute_column',
    label: 'Calculate column',
    description: 'Adds or replaces a column with the value of an expression.',
    category: 'attribute',
    requiresGeometry: false,
    parameters: z.object({ column: z.string().min(1).max(255).describe('Column to write'), expression: sqlExpression }),
    example: { type: 'compute_column', column: 'density', expression: 'population / area_km2' },
  }),
  define({
    id: 'filter',
    label: 'Filter rows',
    description: 'Keeps the rows for which the expression is true.',
    category: 'filter',
    requiresGeometry: false,
    parameters: z.object({ where: sqlExpression }),
    example: { type: 'filter', where: "status = 'active' AND population > 1000" },
  }),
  define({
    id: 'reproject',
    label: 'Reproject',
    description: 'Transforms the geometries to another coordinate reference system.',
    category: 'crs',
    requiresGeometry: true,
    parameters: z.object({ target_crs: crs }),
    example: { type: 'reproject', target_crs: 'EPSG:3857' },
  }),
  define({
    id: 'buffer',
    label: 'Buffer',
    description: 'Replaces each geometry with the area within a distance of it.',
    category: 'geometry',
    requiresGeometry: true,
    parameters: z.object({
      distance: z.number().finite().describe('Buffer distance; negative shrinks polygons'),
      units,
      segments: z.number().int().min(1).max(64).default(8).describe('Segments per quarter circle'),
    }),
    example: { type: 'buffer', distance: 100, units: 'meters' },
  }),
  define({
    id: 'simplify',
    label: 'Simplify',
    description: 'Removes vertices within a tolerance (Douglas-Peucker), keeping polygons valid by default.',
    category: 'geometry',
    requiresGeometry: true,
    parameters: z.object({
      tolerance: z.number().finite().positive().describe('Maximum distance a vertex may move'),
      units,
      preserve_topology: z.boolean().default(true),
    }),
    example: { type: 'simplify', tolerance: 10, units: 'meters' },
  }),
  define({
    id: 'make_valid',
    label: 'Repair geometries',
    description: 'Repairs invalid geometries (self-intersections, bad rings) without losing vertices.',
    category: 'geometry',
    requiresGeometry: true,
    parameters: z.object({}),
    example: { type: 'make_valid' },
  }),
  define({
    id: 'centroid',
    label: 'Centroids',
    description: 'Replaces each geometry with its centroid.',
    category: 'geometry',
    requiresGeometry: true,
    parameters: z.object({}),
    example: { type: 'centroid' },
  }),
  define({
    id: 'point_on_surface',
    label: 'Point on surface',
    description: 'Replaces each geometry with a point guaranteed to lie on it (labels on odd shapes).',
    category: 'geometry',
    requiresGeometry: true,
    parameters: z.object({}),
    example: { type: 'point_on_surface' },
  }),
  define({
    id: 'explode_multipart',
    label: 'Multipart to singlepart',
    description: 'Splits each multi-geometry into one feature per part, attributes copied.',
    category: 'geometry',
    requiresGeometry: true,
    parameters: z.object({}),
    example: { type: 'explode_multipart' },
  }),
  define({
    id: 'promote_to_multi',
    label: 'Promote to multi',
    description: 'Turns single geometries into multi-geometries, so mixed Polygon/MultiPolygon layers get one type.',
    category: 'geometry',
    requiresGeometry: true,
    parameters: z.object({}),
    example: { type: 'promote_to_multi' },
  }),
  define({
    id: 'force_2d',
    label: 'Drop Z and M',
    description: 'Removes Z and M coordinates.',
    category: 'geometry',
    requiresGeometry: true,
    parameters: z.object({}),
    example: { type: 'force_2d' },
  }),
  define({
    id: 'dissolve',
    label: 'Dissolve',
    description: 'Merges geometries that share the values of the given columns (all of them when none is given).',
    category: 'geometry',
    requiresGeometry: true,
    parameters: z.object({ by: z.array(column).default([]).describe('Group-by columns; empty merges everything') }),
    example: { type: 'dissolve', by: ['region'] },
  }),
  define({
    id: 'clip_bbox',
    label: 'Clip to box',
    description: 'Cuts geometries to a bounding box and drops those outside it.',
    category: 'geometry',
    requiresGeometry: true,
    parameters: z.object({
      bbox: z
        .tuple([z.number().finite(), z.number().finite(), z.number().finite(), z.number().finite()])
        .describe('[min_x, min_y, max_x, max_y]'),
      crs: crs.default('EPSG:4326').describe('CRS of the box coordinates'),
    }),
    example: { type: 'clip_bbox', bbox: [5.9, 45.8, 10.5, 47.8], crs: 'EPSG:4326' },
  }),
] as const;

export type OperationId = (typeof operationCatalog)[number]['id'];
export const operationById = new Map<string, OperationDefinition>(operationCatalog.map((d) => [d.id, d]));

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
