import { sql, type DatabaseTransactionConnection, type FragmentSqlToken } from 'slonik';
import type { StoredEvent } from '../eventstore/port.js';

/**
 * A projector owns a few read-model tables. Its tables live in a schema given at run time, so
 * the same code fills the live schema and, on rebuild, a fresh one from position zero.
 */
export interface Projector {
  name: string;
  /** Bump when the tables or the way events map to rows change: the projector is then replayed from zero at start. */
  version: number;
  /** DDL creating the projector's tables inside `schema` (idempotent). */
  createTables(tx: DatabaseTransactionConnection, schema: string): Promise<void>;
  /** Applies one event; events of other types are ignored. Runs inside the checkpoint's transaction. */
  apply(tx: DatabaseTransactionConnection, schema: string, event: StoredEvent): Promise<void>;
  /** Table names, used to compare a rebuild with the live tables. */
  tables: string[];
  /**
   * Projectors whose read models must show an event before this one does: this projector never
   * applies past their checkpoints. The runs projector follows the jobs projector, so a Run seen
   * ended has its Job's last Run and sync cursor updated, whichever process projects what.
   */
  follows?: string[];
}

/**
 * Creates (if missing) a table of rows that an owner has, as most read models keep them: `id`,
 * `owner_id`, the table's own `columns`, `created_at` and `updated_at`, with the index its
 * newest-first pages read (projections/pagination.ts readPage): `<table>_owner` on owner_id,
 * `indexBy` when given, created_at DESC, id DESC.
 */
export async function createOwnedTable(
  tx: DatabaseTransactionConnection,
  schema: string,
  table: string,
  columns: FragmentSqlToken,
  indexBy?: string,
): Promise<void> {
  const name = sql.identifier([schema, table]);
  await tx.query(sql.unsafe`CREATE TABLE IF NOT EXISTS ${name} (
      id text PRIMARY KEY,
      owner_id text NOT NULL,
      ${columns},
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL)`);
  const by = indexBy ? sql.fragment`${sql.identifier([indexBy])}, ` : sql.fragment``;
  await tx.query(sql.unsafe`CREATE INDEX IF NOT EXISTS ${sql.identifier([`${table}_owner`])} ON ${name} (owner_id, ${by}created_at DESC, id DESC)`);
}
