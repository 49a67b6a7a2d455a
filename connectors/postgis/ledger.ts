import type pg from 'pg';
import { LEDGER, type WriteMode } from '../shared/sql/sql-delivery.js';
import { geometryColumnsOf, geometryColumnsSql } from './catalog.js';
import { literal, qualified } from './client.js';

/*
 * The delivery ledger of a schema ("<schema>"."_geoflow_deliveries": one row per delivery id,
 * written in the swap's transaction, so a retried or resumed delivery finds its id and writes
 * nothing twice), and what a delivery checks before any data moves.
 */

interface Recorded {
  rows_written: number;
  write_mode: WriteMode;
}

/** The ledger's row of a delivery; `deliveryId` as a parameter ($1) or a quoted literal. */
const recordedSql = (schema: string, deliveryId = '$1') =>
  `SELECT rows_written, write_mode FROM ${qualified(schema, LEDGER)} WHERE delivery_id = ${deliveryId}`;

const recordedOf = (rows: { rows_written: string; write_mode: WriteMode }[]): Recorded | null =>
  rows[0] ? { rows_written: Number(rows[0].rows_written), write_mode: rows[0].write_mode } : null;

export async function recorded(client: pg.Client, schema: string, deliveryId: string): Promise<Recorded | null> {
  const exists = await client.query('SELECT to_regclass($1) IS NOT NULL AS ok', [qualified(schema, LEDGER)]);
  if (!exists.rows[0]?.ok) return null;
  return recordedOf((await client.query(recordedSql(schema), [deliveryId])).rows);
}

export async function ensureLedger(client: pg.Client, schema: string): Promise<void> {
  try {
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${qualified(schema, LEDGER)} (
         delivery_id text PRIMARY KEY, target_table text NOT NULL, write_mode text NOT NULL,
         rows_written bigint NOT NULL, delivered_at timestamptz NOT NULL DEFAULT now())`,
    );
  } catch (error) {
    // Two first deliveries into one schema at once: the other one created it.
    if (!['23505', '42P07'].includes((error as { code?: string }).code ?? '')) throw error;
  }
}

/**
 * What a delivery checks before any data moves, in two round trips instead of nine (issue 20):
 * whether the schema, PostGIS, the target and the ledger exist, and which staging tables earlier
 * attempts of this delivery left; then, in one batch of statements, whether this delivery was
 * recorded already and the target's geometry column.
 */
export async function deliveryFacts(client: pg.Client, schema: string, table: string, deliveryId: string, stagePrefix: string) {
  const first = await client.query<{ schema: boolean; postgis: boolean; exists: boolean; ledger: boolean; leftovers: string[] }>(
    `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS schema,
            EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'postgis') AS postgis,
            EXISTS (SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2) AS exists,
            to_regclass($3) IS NOT NULL AS ledger,
            ARRAY(SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                   WHERE n.nspname = $1 AND c.relkind = 'r' AND starts_with(c.relname, $4)) AS leftovers`,
    [schema, table, qualified(schema, LEDGER), stagePrefix],
  );
  const facts = first.rows[0]!;
  if (!facts.schema) return { ...facts, done: null, geometry: null };
  // Statements without parameters travel together (simple protocol), values as quoted literals;
  // each answer is read at the position its statement has.
  const statements: string[] = [];
  const ledgerAt = facts.ledger ? statements.push(recordedSql(schema, literal(deliveryId))) - 1 : -1;
  const geometryAt = facts.exists && facts.postgis ? statements.push(geometryColumnsSql(literal(schema), `${literal(table)}::text`)) - 1 : -1;
  if (!statements.length) return { ...facts, done: null, geometry: null };
  const answers = await client.query(statements.join(';\n'));
  const results = Array.isArray(answers) ? (answers as pg.QueryResult[]) : [answers];
  const done = ledgerAt >= 0 ? recordedOf(results[ledgerAt]!.rows) : null;
  const geometry = geometryAt >= 0 ? (geometryColumnsOf(results[geometryAt]!.rows).get(table) ?? null) : null;
  return { ...facts, done, geometry };
}

/**
 * Drops staging tables earlier attempts of this delivery left, each only if nothing holds it
 * within a second: one that a cut-off attempt still loads is left to that attempt (which drops it
 * when it ends) or to the next delivery's cleanup.
 */
export async function dropLeftovers(client: pg.Client, schema: string, tables: string[]): Promise<void> {
  for (const name of tables) {
    try {
      await client.query(`BEGIN; SET LOCAL lock_timeout = '1s'; DROP TABLE IF EXISTS ${qualified(schema, name)}; COMMIT`);
    } catch (error) {
      await client.query('ROLLBACK');
      if ((error as { code?: string }).code !== '55P03') throw error;
    }
  }
}

/** Records the delivery, in the transaction of its swap. */
export async function record(client: pg.Client, schema: string, deliveryId: string, table: string, mode: WriteMode, rows: number): Promise<void> {
  await client.query(`INSERT INTO ${qualified(schema, LEDGER)} (delivery_id, target_table, write_mode, rows_written) VALUES ($1, $2, $3, $4)`, [
    deliveryId,
    table,
    mode,
    rows,
  ]);
}
