import { z } from 'zod';
import { invalid, type CompileContext, type Compiled, type Relation } from './relation.js';
import type { CatalogEntry, ValidatedOperation } from './families/definition.js';
import { castColumn, computeColumn, dropColumns, renameColumn, selectColumns, sort } from './families/attributes.js';
import { deduplicate, filter } from './families/filters.js';
import { assignCrs, reproject } from './families/coordinate-systems.js';
import {
  buffer,
  calculateGeometry,
  centroid,
  densify,
  dissolve,
  explodeMultipart,
  force2d,
  makeValid,
  pointOnSurface,
  promoteToMulti,
  simplify,
} from './families/geometry.js';
import { clip, clipBbox } from './families/clipping.js';
import { attributeJoin, merge, spatialJoin } from './families/joins.js';

export type { CatalogEntry, OperationCategory, OperationDefinition, ValidatedOperation } from './families/definition.js';

/**
 * The transformation catalog: every operation the service runs, with its parameters as a zod
 * schema and its behaviour: how it compiles into the SELECT that wraps the previous one
 * (geo/operations/execute runs the chain). Recipes, Jobs and Workspace pipelines validate
 * against it; GET /api/v1/transformations publishes it (parameters as JSON Schema). One place,
 * so a new operation is one entry here: defined in its family's module (families/),
 * listed below.
 */
export const operationCatalog = [
  renameColumn,
  selectColumns,
  dropColumns,
  castColumn,
  computeColumn,
  filter,
  reproject,
  assignCrs,
  buffer,
  simplify,
  makeValid,
  centroid,
  pointOnSurface,
  explodeMultipart,
  promoteToMulti,
  force2d,
  dissolve,
  clipBbox,
  clip,
  spatialJoin,
  attributeJoin,
  merge,
  calculateGeometry,
  densify,
  deduplicate,
  sort,
] as const;

export const operationById = new Map<string, CatalogEntry>(operationCatalog.map((d) => [d.id, d]));

/** Compiles one validated operation against the relation so far (its catalogue entry does the work). */
export async function compileOperation(op: ValidatedOperation, rel: Relation, ctx: CompileContext): Promise<Compiled> {
  const entry = operationById.get(op.type);
  if (!entry) throw invalid(`Unknown operation ${op.type}`);
  return entry.apply(op, rel, ctx);
}

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
