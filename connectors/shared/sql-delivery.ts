import { createHash } from 'node:crypto';
import type { DeliverInput } from '../types.js';
import { type DeliveryResult, ConnectorError } from '../../domain/transfers.js';
import type { VectorInput } from './vector-input.js';

/*
 * The staged delivery every database Destination performs (PostGIS, MySQL, SQL Server, Oracle):
 * the output is first loaded into a staging table of its own, committed before the target is
 * touched; then one short step changes the target (swap for replace, insert for append, rename for
 * create) and records the delivery id, so a retried or resumed delivery writes nothing twice. A
 * failed load never touches the target, and the staging table is always dropped. What each
 * database can do atomically differs (a transactional rename, an atomic multi-table rename, a
 * synonym switch): that part stays in each connector, the sequence and the names are here.
 */

export type WriteMode = 'replace' | 'append' | 'create';

/** Tables the service keeps beside a delivery target (staging, old, ledger): hidden by discovery. */
export const INTERNAL_PREFIX = '_geoflow_';

/** The ledger table of delivery ids, one per schema (or database). */
export const LEDGER = `${INTERNAL_PREFIX}deliveries`;

/** A short stable tag of a delivery id, for staging-table names that a retry finds again. */
export const deliveryTag = (deliveryId: string) => createHash('sha256').update(deliveryId).digest('hex').slice(0, 16);

/** The staging and old-table names of one delivery. */
export function stagingNames(deliveryId: string): { tag: string; stage: string; old: string } {
  const tag = deliveryTag(deliveryId);
  return { tag, stage: `${INTERNAL_PREFIX}stage_${tag}`, old: `${INTERNAL_PREFIX}old_${tag}` };
}

/** Reinitialising an incremental Job rebuilds the table (staged and swapped) instead of appending. */
export const effectiveWriteMode = (mode: WriteMode, input: Pick<DeliverInput, 'reinitialize'>): WriteMode =>
  input.reinitialize && mode === 'append' ? 'replace' : mode;

/** `create` never overwrites: before the load, or when someone created the target meanwhile. */
export function targetExists(where: string, database: string, details: Record<string, unknown>, meanwhile = false): ConnectorError {
  return new ConnectorError(
    'target_exists',
    meanwhile
      ? `${where} was created by someone else meanwhile (write_mode create never overwrites)`
      : `${where} already exists in database ${database} (write_mode create never overwrites)`,
    details,
  );
}

/** Append matches columns by name: every column of the output must exist in the target. */
export function requireColumns(where: string, outputColumns: string[], targetColumns: Iterable<string>, quote: (name: string) => string): void {
  const present = new Set(targetColumns);
  const missing = outputColumns.filter((c) => !present.has(c));
  if (missing.length) {
    throw new ConnectorError(
      'invalid_data',
      `${where} has no column ${missing.map(quote).join(', ')}: append needs every column of the output in the target (use replace to change the table's columns)`,
      { missing_columns: missing },
      false,
    );
  }
}

export interface StagedDelivery<P> {
  /** Checks before any data moves: an already recorded delivery answers at once, else the plan of the load. */
  prepare(): Promise<{ done: DeliveryResult } | { done: null; plan: P }>;
  /** Loads the output into the staging table (committed on its own). */
  load(plan: P): Promise<void>;
  /** Changes the target from the staging table and records the delivery. */
  swap(plan: P): Promise<DeliveryResult>;
  /** Drops the staging table; never throws, runs after a failure or a cancellation too. */
  dropStage(): Promise<void>;
}

/** prepare → load → swap, the staging table dropped whatever happens after prepare. */
export async function runStagedDelivery<P>(steps: StagedDelivery<P>): Promise<DeliveryResult> {
  const prepared = await steps.prepare();
  if (prepared.done) return prepared.done;
  try {
    await steps.load(prepared.plan);
    return await steps.swap(prepared.plan);
  } finally {
    await steps.dropStage();
  }
}

/**
 * The ogr2ogr arguments of a staging load that every database driven by ogr2ogr shares (PostGIS,
 * MySQL): the input layer, a new staging table with the loader's own columns named, and large
 * transactions. Each connector puts its driver, dataset and table options around them.
 */
export function stagingLoadArgs(layer: VectorInput, stage: string, geometryName: string, fid: string): string[] {
  return [layer.ref.path, ...layer.ref.openOptions.flatMap((o) => ['-oo', o]), ...stagingLayerArgs(layer, stage, geometryName, fid)];
}

/** The same without the source file and its open options: what ogr2ogr's library call takes. */
export function stagingLayerArgs(layer: VectorInput, stage: string, geometryName: string, fid: string): string[] {
  return [
    layer.layer,
    '-nln',
    stage,
    '-nlt',
    layer.nlt,
    '-lco',
    `GEOMETRY_NAME=${geometryName}`,
    '-lco',
    `FID=${fid}`,
    '-lco',
    'LAUNDER=NO',
    // Columns as float8 / unbounded text: shapefiles routinely hold values wider than their DBF
    // declares (N 19.11 with ten integer digits), which a numeric(19,11) column refuses.
    '-lco',
    'PRECISION=NO',
    '-gt',
    '65536',
  ];
}
