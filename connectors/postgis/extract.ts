import path from 'node:path';
import type pg from 'pg';
import { safeFilename } from '../../geo/datasets/dataset-files.js';
import { ConnectorError } from '../../domain/transfers.js';
import { asSubquery } from '../shared/sql/sql.js';
import { readWindow, whereClause, type SqlCursor } from '../shared/sql/sql-cursor.js';
import { extractedGeoPackage, unchangedExtract } from '../shared/sql/sql-extract.js';
import type { ConnectorContext, ExtractOptions, ExtractResult } from '../types.js';
import { geometryColumnOf, geometryLabel } from './catalog.js';
import { describeServer, ident, literal, qualified, withClient, type PostgisConfig } from './client.js';
import { libpqFor, ogr2ogrPg } from './ogr.js';
import type { SqlResource } from '../shared/sql/definition.js';

/*
 * A table (or view) or a SELECT, read into one GeoPackage in the work folder by ogr2ogr. Checks
 * come first, over node-postgres, so a missing table, a bad query or a missing privilege is named
 * precisely (by SQLSTATE) before any transfer starts. The session is read-only: a Source never
 * writes, whatever its query says.
 */

export type PostgisResource = SqlResource<{ schema: string }>;

/** What a PostGIS Source remembers between Runs; the value as PostgreSQL prints it (`max(col)::text`). */
export type PostgisCursor = SqlCursor;

/** A query sent over the extended protocol, which takes one statement (pg's queryMode; @types/pg does not list it). */
const extended = (text: string): pg.QueryConfig => Object.assign({ text }, { queryMode: 'extended' });

type TableResource = Extract<PostgisResource, { table: string }>;

/** A table's checks (it exists, may be read), its geometry column, and the cursor window: metadata queries only. */
async function planTable(config: PostgisConfig, resource: TableResource, ctx: ConnectorContext, kept: unknown) {
  const what = describeServer(config);
  const { schema, table, cursor_column: cursorColumn } = resource;
  const relation = qualified(schema, table);
  return withClient(config, ctx, async (client) => {
    const exists = await client.query('SELECT 1 FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relname = $2', [
      schema,
      table,
    ]);
    if (!exists.rowCount)
      throw new ConnectorError('not_found', `${what}: no table or view "${schema}"."${table}" in database ${config.database}`, { schema, table });
    await client.query(`SELECT * FROM ${relation} LIMIT 0`);
    const geometry = await geometryColumnOf(client, schema, table);
    const window = cursorColumn
      ? await readWindow(cursorColumn, ident(cursorColumn), kept, literal, async (where) => {
          const r = await client.query<{ max: string | null }>(`SELECT max(${ident(cursorColumn)})::text AS max FROM ${relation}${where}`);
          return r.rows[0]?.max ?? null;
        })
      : null;
    return { found: { geometry }, window };
  });
}

/** On-change: whether the cursor column holds a value above the last Run's. */
export async function postgisChanged(config: PostgisConfig, resource: PostgisResource, ctx: ConnectorContext, kept: unknown): Promise<boolean> {
  if ('query' in resource) return true;
  return !(await planTable(config, resource, ctx, kept)).window?.unchanged;
}

export async function extractPostgis(config: PostgisConfig, resource: PostgisResource, ctx: ConnectorContext, options: ExtractOptions): Promise<ExtractResult> {
  const what = describeServer(config);
  let sql: string;
  let layerName: string;
  let nlt: string | undefined;
  let sync: ExtractResult['sync'];

  if ('query' in resource) {
    const subquery = asSubquery(resource.query);
    await withClient(config, ctx, async (client) => {
      // Planned and run with no rows, in a read-only transaction: a single SELECT that can run.
      // The extended protocol takes one statement only: over the simple one, a `)` could close
      // the subquery and `; COMMIT; …` leave the read-only transaction (issue 32).
      await client.query('BEGIN READ ONLY');
      try {
        await client.query(extended(`SELECT * FROM ${subquery} AS geoflow_query LIMIT 0`)).catch((error: { code?: string }) => {
          if (error?.code === '42601' && /multiple commands/i.test(String((error as Error).message)))
            throw new ConnectorError('invalid_data', `${what}: the query must be one SELECT statement: it closes its parentheses and goes on`, {}, false);
          throw error;
        });
      } finally {
        await client.query('ROLLBACK').catch(() => undefined);
      }
    });
    sql = `SELECT * FROM ${subquery} AS geoflow_query`;
    layerName = 'query';
  } else {
    const { schema, table } = resource;
    const relation = qualified(schema, table);
    const { found, window } = await planTable(config, resource, ctx, options.sync?.cursor);
    if (window?.unchanged) return unchangedExtract(options);
    sql = `SELECT * FROM ${relation}${whereClause(window?.where ?? [])}`;
    layerName = table;
    // A query result has no declared geometry type; the table's column has one.
    if (found.geometry && found.geometry.type.toUpperCase() !== 'GEOMETRY') nlt = geometryLabel(found.geometry.type, found.geometry.dims).replace(' ', '');
    if (window) sync = { cursor: window.cursor };
  }

  const filename = `${safeFilename(layerName)}.gpkg`;
  const file = path.join(ctx.workDir, filename);
  const libpq = await libpqFor(config, ctx, { readOnly: true });
  try {
    await ogr2ogrPg(
      config,
      ctx,
      `Reading ${'query' in resource ? 'the query' : `"${resource.schema}"."${resource.table}"`}`,
      ['-f', 'GPKG', file, libpq.dataset, '-sql', sql, '-nln', layerName, ...(nlt ? ['-nlt', nlt] : [])],
      file,
    );
  } finally {
    await libpq.close();
  }
  return extractedGeoPackage(file, filename, sync);
}
