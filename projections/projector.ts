import { sql, type DatabaseTransactionConnection, type FragmentSqlToken, type ValueExpression } from 'slonik';
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

/** An owned table whose rows follow one aggregate's lifecycle events (ownedRowsProjector). */
export interface OwnedRows {
  name: string;
  version: number;
  table: string;
  /** The table's own columns (createOwnedTable), and the column its pages are also indexed by. */
  columns: FragmentSqlToken;
  indexBy?: string;
  /** The event types that create, update and delete a row. */
  created: string[];
  updated: string[];
  deleted: string[];
  /** The event field that holds the row's id. */
  id: string;
  /** The row's own column values from a created or updated event's data. */
  values(data: Record<string, any>): Record<string, ValueExpression>;
  /** Columns set only when the row is created (a connection's kind). */
  createdOnly?: (data: Record<string, any>) => Record<string, ValueExpression>;
}

/**
 * The projector of an owned table whose rows are an aggregate's one to one (connections,
 * notification channels, Recipes): a created event inserts the row (owner, values, created_at
 * and updated_at from the event's `at`; one already there is kept), an updated event sets the
 * values and updated_at again, a deleted event removes the row.
 */
export function ownedRowsProjector(o: OwnedRows): Projector {
  const names = (row: Record<string, ValueExpression>) => Object.keys(row).map((k) => sql.identifier([k]));
  return {
    name: o.name,
    version: o.version,
    tables: [o.table],
    createTables: (tx, schema) => createOwnedTable(tx, schema, o.table, o.columns, o.indexBy),
    async apply(tx, schema, event) {
      const t = sql.identifier([schema, o.table]);
      const d = event.data as Record<string, any>;
      if (o.created.includes(event.type)) {
        const row = { id: d[o.id], ...o.createdOnly?.(d), owner_id: d.owner_id, ...o.values(d), created_at: d.at, updated_at: d.at };
        await tx.query(sql.unsafe`INSERT INTO ${t} (${sql.join(names(row), sql.fragment`, `)}) VALUES (${sql.join(Object.values(row), sql.fragment`, `)})
          ON CONFLICT (id) DO NOTHING`);
      } else if (o.updated.includes(event.type)) {
        const sets = Object.entries({ ...o.values(d), updated_at: d.at }).map(([k, v]) => sql.fragment`${sql.identifier([k])} = ${v}`);
        await tx.query(sql.unsafe`UPDATE ${t} SET ${sql.join(sets, sql.fragment`, `)} WHERE id = ${d[o.id]}`);
      } else if (o.deleted.includes(event.type)) {
        await tx.query(sql.unsafe`DELETE FROM ${t} WHERE id = ${d[o.id]}`);
      }
    },
  };
}
