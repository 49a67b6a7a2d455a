import { DomainError } from '../../domain/errors.js';
import { operationById, validateOperations, type ValidatedOperation } from './catalog.js';
import { checkSelectSql } from './sql-guard.js';

/*
 * The one check of a pipeline against the dataset it will run on, before anything runs: the
 * Workspace route calls it when a pipeline is stored, applyPipeline when it runs, and a Job will
 * call it against its Source's layers. One check, one answer (docs/api-conventions.md):
 * - operations that do not fit the catalog, or operations and sql together: 422 validation_error
 *   naming the field in details.issues;
 * - a layer the dataset does not have, or no layers on a multi-layer dataset: 400
 *   invalid_parameter with the dataset's layers in details.layers (as previews and convert
 *   answer for layer names);
 * - geometry operations on a table without geometry, vector work on a raster, SQL the guard
 *   refuses: 422 invalid_transformation.
 */

/** The pipeline body (spec: "Pipeline body of a Workspace"). */
export interface PipelineSpec {
  layers?: string[] | null;
  operations?: unknown[] | null;
  sql?: string | null;
  python?: { script: string; filename?: string } | null;
}

/** What the check needs to know of a layer: an inspection entry fits. */
export interface LayerFacts {
  name: string;
  has_geometry: boolean;
}

export interface DatasetFacts {
  kind: 'vector' | 'raster';
  layers: LayerFacts[];
}

export interface CheckedPipeline {
  operations: ValidatedOperation[];
  /** The SQL as the guard accepted it, or null. */
  sql: string | null;
  /** Layers the operations or the SQL apply to (none when there are neither). */
  targets: string[];
}

export interface CheckOptions {
  /** Where the pipeline sits in the request, for details.issues paths (default `body`). */
  at?: string;
}

export function isEmptyPipeline(spec: PipelineSpec): boolean {
  return !(spec.operations && spec.operations.length > 0) && !spec.sql && !spec.python;
}

const join = (at: string, ...parts: (string | number)[]) => [at, ...parts].filter((p) => p !== '').join('.');

/** Refuses geometry operations on a layer without geometry (the spec's invalid_transformation). */
export function refuseGeometryOperations(operations: { type: string }[], layer: LayerFacts): void {
  if (layer.has_geometry) return;
  const op = operations.find((o) => operationById.get(o.type)?.requiresGeometry);
  if (op) {
    throw new DomainError('invalid_transformation', `${op.type} needs geometries, but layer ${JSON.stringify(layer.name)} is a non-spatial table`, {
      operation: op.type,
      layer: layer.name,
    });
  }
}

export function checkPipeline(spec: PipelineSpec, dataset: DatasetFacts, options: CheckOptions = {}): CheckedPipeline {
  const at = options.at ?? 'body';
  const raw = spec.operations ?? [];
  if (raw.length > 0 && spec.sql) {
    throw new DomainError('validation_error', 'operations and sql are mutually exclusive: send one of them', {
      issues: [{ path: join(at, 'sql'), message: 'excludes operations' }],
    });
  }
  const validated = validateOperations(raw);
  if (!validated.ok) {
    const issues = validated.issues.map((i) => ({ path: join(at, ...i.path), message: i.message }));
    throw new DomainError('validation_error', `The operations are not valid: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
  }
  const operations = validated.operations;
  const active = operations.length > 0 || !!spec.sql;
  if (dataset.kind === 'raster' && active) {
    throw new DomainError('invalid_transformation', 'Operations and SQL apply to vector layers; this dataset is a raster (a Python step can process it)');
  }

  const names = dataset.layers.map((l) => l.name);
  const listed = [...new Set(spec.layers ?? [])];
  const unknown = listed.filter((l) => !names.includes(l));
  if (unknown.length) {
    throw new DomainError('invalid_parameter', `No layer named ${unknown.map((u) => JSON.stringify(u)).join(', ')}; the layers are: ${names.join(', ')}`, {
      parameter: 'layers',
      layers: names,
    });
  }
  let targets: string[] = [];
  if (listed.length > 0) targets = listed;
  else if (active && names.length === 1) targets = [names[0]!];
  else if (active) {
    throw new DomainError(
      'invalid_parameter',
      `The dataset has ${names.length} layers; say which ones the pipeline applies to with layers: ${names.join(', ')}`,
      {
        parameter: 'layers',
        layers: names,
      },
    );
  }
  if (active) for (const name of targets) refuseGeometryOperations(operations, dataset.layers.find((l) => l.name === name)!);
  return { operations, sql: spec.sql ? checkSelectSql(spec.sql).sql : null, targets: active ? targets : [] };
}
