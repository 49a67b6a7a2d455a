import pg from 'pg';
import type { z } from 'zod';

/*
 * Hot single-row reads (a resource by id on every GET) straight on `pg`. slonik costs about 2.5×
 * the CPU of `pg` per query (interceptors, async row parsing, its tracing and pool wrappers:
 * bench/api/NOTES.md); for a query that is the whole request, that is most of the API's time.
 * Rows are parsed by the same zod schemas as slonik's (sql.type), and values arrive as slonik
 * delivers them (timestamps as epoch milliseconds, int8 as bigint, numeric as number), so a row
 * schema works with either. Writes, transactions and anything composed stay on slonik.
 */

const OID = { int8: 20, numeric: 1700, timestamp: 1114, timestamptz: 1184 } as const;
const epochMs = (suffix: string) => (value: string) =>
  value === 'infinity' ? Number.POSITIVE_INFINITY : value === '-infinity' ? Number.NEGATIVE_INFINITY : Date.parse(value + suffix);
const parsers = new Map<number, (value: string) => unknown>([
  [OID.int8, (v) => BigInt(v)],
  [OID.numeric, (v) => Number.parseFloat(v)],
  [OID.timestamp, epochMs(' UTC')],
  [OID.timestamptz, epochMs('')],
]);
const types = {
  getTypeParser: (oid: number, format?: string) => parsers.get(oid) ?? (pg.types.getTypeParser as (o: number, f?: string) => unknown)(oid, format),
};

export interface ReadPool {
  /** The one row the query returns, parsed; null when it returns none. */
  maybeOne<S extends z.ZodType>(schema: S, text: string, values: unknown[]): Promise<z.infer<S> | null>;
  end(): Promise<void>;
}

export function createReadPool(url: string, max = 10): ReadPool {
  // A connection that cannot be made in 5 s fails (as slonik's pool does) instead of waiting for TCP to give up.
  const pool = new pg.Pool({ connectionString: url, max, types: types as never, application_name: 'geoflow-reads', connectionTimeoutMillis: 5_000 });
  pool.on('error', () => undefined); // an idle client's error surfaces on the next query
  return {
    async maybeOne(schema, text, values) {
      const { rows } = await pool.query(text, values);
      if (rows.length > 1) throw new Error(`expected at most one row, got ${rows.length}: ${text.slice(0, 80)}`);
      return rows.length ? schema.parse(rows[0]) : null;
    },
    end: () => pool.end(),
  };
}
