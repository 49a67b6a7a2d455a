import { createPool, SchemaValidationError, sql, type DatabasePool, type DatabasePoolConnection, type Interceptor, type FragmentSqlToken } from 'slonik';
import type pg from 'pg';
import { z } from 'zod';

/**
 * slonik only validates rows against `sql.type(schema)` through an interceptor; this is it.
 * A row that does not match its schema is a bug on our side and surfaces as a 500.
 */
const resultParser: Interceptor = {
  name: 'result-parser',
  transformRowAsync: async (context, query, row) => {
    const parser = context.resultParser;
    if (!parser) return row;
    const result = await parser.safeParseAsync(row);
    if (!result.success) throw new SchemaValidationError(query, row, result.error.issues as never);
    return result.data as typeof row;
  },
};

/**
 * How long PostgreSQL lets a session sit idle inside a transaction before it ends the session.
 * Every transaction here is a few statements back to back, so a session idle that long lost its
 * process: a replica cut off by a network partition leaves its session idle in transaction on
 * the server, still holding what it locked (a projection pass locks the checkpoints), and every
 * other replica's projections wait behind it until the server gives up (slonik's default is a
 * minute; TCP on its own, a quarter of an hour). Ten seconds bounds that wait well inside the
 * API's read-your-writes wait (projections/runner.ts, waitFor).
 */
export const IDLE_IN_TRANSACTION_MS = 10_000;

export async function createDatabasePool(url: string, maximumPoolSize = 10, options: { idleInTransactionMs?: number } = {}): Promise<DatabasePool> {
  // resetConnection: slonik runs DISCARD ALL each time a connection goes back to the pool, an
  // extra round trip per query. Nothing here leaves session state on a pooled connection (no SET,
  // no session advisory locks, no temporary tables, no named statements), so there is nothing to reset.
  return createPool(url, {
    interceptors: [resultParser],
    maximumPoolSize,
    captureStackTrace: false,
    resetConnection: async () => undefined,
    idleInTransactionSessionTimeout: options.idleInTransactionMs ?? IDLE_IN_TRANSACTION_MS,
  });
}

/**
 * Closes a pg client's socket at once, so its pending connect or query fails now rather than when
 * the server answers (`end()` waits for the server; pg keeps the socket on a private field).
 */
export function destroySocket(client: pg.Client): void {
  (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
}

/** slonik parses timestamptz to epoch milliseconds; the API speaks ISO 8601. */
export const isoTime = z.number().transform((ms) => new Date(ms).toISOString());
export const isoTimeOrNull = z
  .number()
  .nullable()
  .transform((ms) => (ms === null ? null : new Date(ms).toISOString()));

/** PostgreSQL rolled the transaction back for a serialization failure or a deadlock (SQLSTATE class 40): run it again. */
const retryable = (error: unknown) => /^40/.test(String((error as { code?: unknown }).code ?? ''));

/**
 * BEGIN … COMMIT on one pooled connection, run again (up to 5 times) when PostgreSQL rolls it
 * back for a serialization failure or a deadlock, as slonik's own `pool.transaction` does.
 * Not slonik's own: it enters an AsyncLocalStorage for each transaction, and on Node 20 an
 * AsyncLocalStorage once entered makes every promise of the process pay an init hook from then
 * on: the projection runner's transactions made every API request pay it (bench/api/NOTES.md).
 */
export async function inTransaction<T>(pool: DatabasePool, work: (tx: DatabasePoolConnection) => Promise<T>): Promise<T> {
  return pool.connect(async (connection) => {
    for (let attempt = 0; ; attempt++) {
      await connection.query(sql.unsafe`BEGIN`);
      try {
        const result = await work(connection);
        await connection.query(sql.unsafe`COMMIT`);
        return result;
      } catch (error) {
        await connection.query(sql.unsafe`ROLLBACK`).catch(() => undefined);
        if (attempt < 5 && retryable(error)) continue;
        throw error;
      }
    }
  });
}

/**
 * Creates one of the application's own tables (schema `app`: browser sessions, request progress),
 * which are not read models of events. The lock makes replicas starting together take turns.
 */
export async function createAppTable(pool: DatabasePool, ddl: FragmentSqlToken): Promise<void> {
  await inTransaction(pool, async (tx) => {
    await tx.query(sql.unsafe`SELECT pg_advisory_xact_lock(hashtext('app-schema'))`);
    await tx.query(sql.unsafe`CREATE SCHEMA IF NOT EXISTS app`);
    await tx.query(sql.unsafe`${ddl}`);
  });
}
