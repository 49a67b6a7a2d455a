import { createHash } from 'node:crypto';
import type { DeliverInput } from '../../types.js';
import { type DeliveryResult, ConnectorError } from '../../../domain/transfers.js';
import type { VectorInput } from '../files/vector-input.js';

/*
 * The staged delivery every database Destination performs (PostGIS, MySQL, SQL Server, Oracle):
 * the output is first loaded into a staging table of its own, committed before the target is
 * touched; then one short step changes the target (swap for replace, insert for append, rename for
 * create) and records the delivery id, so a retried or resumed delivery writes nothing twice. A
 * failed load never touches the target, and the staging table is always dropped. What each
 * database can do atomically differs (a transactional rename, an atomic multi-table rename, a
 * synonym switch): that part stays in each connector, the sequence and the names are here.
 */

export type WriteMode = 'replace' | 'append' | 'create' | 'upsert';

/**
 * An upsert: the rows of the output whose key columns match a target row replace it, the others
 * are inserted, and rows whose delete marker is true delete the target row with their key. Within
 * one output, the last row of a key wins (an incremental read can see a row change twice).
 */
export interface UpsertSpec {
  keys: string[];
  /** A column of the output whose true values delete; never written to the target. */
  deleteMarker: string | null;
}

/** The upsert of a target (`write_mode: "upsert"` with `upsert_keys`), or null for the other modes. */
export function upsertSpecOf(target: { write_mode: WriteMode; upsert_keys?: string[] | undefined; delete_marker?: string | undefined }): UpsertSpec | null {
  if (target.write_mode !== 'upsert') return null;
  return { keys: target.upsert_keys ?? [], deleteMarker: target.delete_marker ?? null };
}

/** Values of a delete marker that mean "delete", compared in lower case as text (a boolean, 1, 'yes' …). */
export const DELETE_MARKER_VALUES = ['true', 't', '1', 'yes', 'y'] as const;

/**
 * An upsert's columns: the keys (and the marker) must be columns of the output, and every key a
 * column of an existing target; what is written is the output's columns without the marker.
 */
export function upsertColumns(
  where: string,
  spec: UpsertSpec,
  outputColumns: string[],
  targetColumns: string[] | null,
  quote: (name: string) => string,
): string[] {
  const missing = [...spec.keys, ...(spec.deleteMarker ? [spec.deleteMarker] : [])].filter((c) => !outputColumns.includes(c));
  if (missing.length) {
    throw new ConnectorError(
      'invalid_data',
      `The output has no column ${missing.map(quote).join(', ')}: upsert_keys and delete_marker name columns of the data delivered`,
      { missing_columns: missing },
      false,
    );
  }
  const written = outputColumns.filter((c) => c !== spec.deleteMarker);
  if (targetColumns) {
    const absent = spec.keys.filter((k) => !targetColumns.includes(k));
    if (absent.length) {
      throw new ConnectorError(
        'invalid_data',
        `${where} has no column ${absent.map(quote).join(', ')}: upsert matches rows by upsert_keys, which the target must have`,
        { missing_columns: absent },
        false,
      );
    }
    requireColumns(where, written, targetColumns, quote);
  }
  return written;
}

/** Rows of the output without a value in a key column cannot be matched: refused before the target changes. */
export function keysMissing(where: string, count: number, keys: string[], quote: (name: string) => string): ConnectorError {
  return new ConnectorError(
    'invalid_data',
    `${count} row(s) of the output have no value in ${keys.map(quote).join(' or ')}: an upsert into ${where} needs every key column filled`,
    { rows_without_key: count, upsert_keys: keys },
    false,
  );
}

/** Tables the service keeps beside a delivery target (staging, old, ledger): hidden by discovery. */
export const INTERNAL_PREFIX = '_geoflow_';

/** The ledger table of delivery ids, one per schema (or database). */
export const LEDGER = `${INTERNAL_PREFIX}deliveries`;

/** A short stable tag of a delivery id, for staging-table names that a retry finds again. */
export const deliveryTag = (deliveryId: string) => createHash('sha256').update(deliveryId).digest('hex').slice(0, 16);

/**
 * The mark a swapped-in table carries in its comment where DDL commits on its own (MySQL,
 * Snowflake): a retry that finds its own mark on the target knows the swap happened and only
 * records it.
 */
export const deliveryMark = (deliveryId: string) => `geoflow delivery ${deliveryTag(deliveryId)}`;

/** The staging and old-table names of one delivery. */
export function stagingNames(deliveryId: string): { tag: string; stage: string; old: string } {
  const tag = deliveryTag(deliveryId);
  return { tag, stage: `${INTERNAL_PREFIX}stage_${tag}`, old: `${INTERNAL_PREFIX}old_${tag}` };
}

/** Reinitialising an incremental Job rebuilds the table (staged and swapped) instead of appending or upserting. */
export const effectiveWriteMode = (mode: WriteMode, input: Pick<DeliverInput, 'reinitialize'>): WriteMode =>
  input.reinitialize && (mode === 'append' || mode === 'upsert') ? 'replace' : mode;

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
