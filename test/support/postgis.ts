import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { adminUrl } from './database.js';
import { until } from './until.js';

/**
 * A throwaway PostGIS database on the suite's cluster, owned by a fresh login role with a
 * password (so wrong passwords are really refused: the cluster authenticates TCP with
 * scram-sha-256). `config` is a postgis connector configuration for that role.
 */
export interface PostgisDatabase {
  config: { host: string; port: number; database: string; username: string; password: string; ssl_mode: 'disable' | 'prefer' | 'require' };
  /** A superuser connection to the database, for arranging and checking. */
  admin(): Promise<pg.Client>;
  /** Runs SQL as the superuser in the database. */
  sql<T extends pg.QueryResultRow = Record<string, unknown>>(text: string, values?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

async function asAdmin<T>(database: string | null, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const url = new URL(adminUrl!);
  if (database) url.pathname = `/${database}`;
  const c = new pg.Client({ connectionString: url.toString() });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** `postgis: false` leaves the extension out: a plain PostgreSQL database. */
export async function createPostgisDatabase(options: { postgis?: boolean } = {}): Promise<PostgisDatabase> {
  if (!adminUrl) throw new Error('SVC_TEST_DATABASE_URL is not set');
  const suffix = randomBytes(5).toString('hex');
  const database = `gis_${suffix}`;
  const username = `loader_${suffix}`;
  const password = `pw-${randomBytes(12).toString('hex')}`;
  await asAdmin(null, async (c) => {
    await c.query(`CREATE ROLE ${username} LOGIN PASSWORD '${password}'`);
    await c.query(`CREATE DATABASE ${database} OWNER ${username}`);
  });
  if (options.postgis !== false) await asAdmin(database, (c) => c.query('CREATE EXTENSION postgis'));
  const url = new URL(adminUrl);
  return {
    config: { host: url.hostname, port: Number(url.port || 5432), database, username, password, ssl_mode: 'disable' },
    async admin() {
      const u = new URL(adminUrl!);
      u.pathname = `/${database}`;
      const c = new pg.Client({ connectionString: u.toString() });
      await c.connect();
      return c;
    },
    async sql<T extends pg.QueryResultRow>(text: string, values: unknown[] = []) {
      return asAdmin(database, async (c) => (await c.query<T>(text, values)).rows);
    },
    async drop() {
      await asAdmin(null, async (c) => {
        await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
        await c.query(`DROP ROLE IF EXISTS ${username}`);
      });
    },
  };
}

/**
 * Waits (up to 10 s) until a delivery's staging table exists in a database: its load is under way.
 * `query` runs SQL there (a target's or a test database's own helper); true when one was seen.
 */
export function untilStagingTable(query: (text: string) => Promise<unknown[]>): Promise<boolean> {
  return until(
    'a staging table',
    async () => (await query("SELECT 1 FROM pg_class WHERE relname LIKE '\\_geoflow\\_stage%' AND relkind = 'r'")).length > 0,
    10_000,
    25,
  ).catch(() => false);
}

/**
 * Loads a layer into the database with ogr2ogr (table `table`, geometry column `geom`, FID `fid`),
 * for tests that compare results with what PostGIS computes from the same data.
 */
export function loadLayer(db: PostgisDatabase, file: string, layer: string, table: string, extra: string[] = []): void {
  const c = db.config;
  const target = `PG:host=${c.host} port=${c.port} dbname=${c.database} user=${c.username} password=${c.password}`;
  execFileSync('ogr2ogr', ['-f', 'PostgreSQL', target, file, layer, '-nln', table, '-lco', 'GEOMETRY_NAME=geom', '-lco', 'FID=fid', '-overwrite', ...extra], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}
