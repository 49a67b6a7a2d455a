import path from 'node:path';
import { safeFilename } from '../../geo/datasets/dataset-files.js';
import { ConnectorError } from '../../domain/transfers.js';
import { asSubquery } from '../shared/sql/sql.js';
import { cursorColumnMissing, readWindow, windowedRead } from '../shared/sql/sql-cursor.js';
import { extractedGeoPackage, unchangedExtract } from '../shared/sql/sql-extract.js';
import { writeRowsAsGeoPackage, type RowColumn } from '../shared/sql/sql-rows.js';
import type { Connection } from 'tedious';
import type { ConnectorContext, ExtractOptions, ExtractResult } from '../types.js';
import { describeServer, query, rolledBack, streamRows, withConnection, type ColumnInfo, type SqlServerConfig } from './client.js';
import { oneSelect } from './one-select.js';
import { cursorMaxExpression, ident, isSpatial, kindOfColumn, literal, qualified, selectExpression } from './sql.js';
import type { SqlResource } from '../shared/sql/definition.js';

/*
 * A table (or view) or one SELECT, read through tedious into one GeoPackage layer: the columns are
 * described first (TOP 0, so a missing table, a bad query or a missing privilege is named by its
 * error number before anything moves), then the rows stream into typed CSV that ogr2ogr turns into
 * the GeoPackage (connectors/shared/sql/sql-rows.ts). The geometry (or geography) column comes as ISO
 * WKB with its Z and M values (AsBinaryZM); its SRID is read from the first row that has one.
 * The read runs at READ COMMITTED in one statement, so it sees one consistent table. A query is
 * checked to be one SELECT before anything is sent (one-select.ts), and read in a transaction
 * that is rolled back.
 */

export type SqlServerResource = SqlResource<{ schema: string; geometry_column?: string | undefined }>;

interface Plan {
  sql: string;
  layer: string;
  columns: (RowColumn & { info: ColumnInfo })[];
  geometry: { name: string; srid: number | null } | null;
  sync?: ExtractResult['sync'];
  unchanged?: boolean;
}

async function describe(c: Parameters<typeof query>[0], from: string): Promise<ColumnInfo[]> {
  return (await query(c, `SELECT TOP 0 * FROM ${from}`)).columns;
}

async function plan(config: SqlServerConfig, resource: SqlServerResource, ctx: ConnectorContext, kept: unknown): Promise<Plan> {
  const what = describeServer(config);
  // Checked before anything is sent: one SELECT that cannot leave its parentheses.
  const checked = 'query' in resource ? oneSelect(resource.query) : null;
  return withConnection(config, ctx, (c) => (checked === null ? planOn(c) : rolledBack(c, () => planOn(c))));

  async function planOn(c: Connection): Promise<Plan> {
    let from: string;
    let layer: string;
    if ('query' in resource) {
      from = `${asSubquery(checked!)} AS geoflow_query`;
      layer = 'query';
    } else {
      const object = qualified(resource.schema, resource.table);
      const found = await query(c, `SELECT OBJECT_ID(@object) AS id`, { object });
      if (found.rows[0]?.[0] === null)
        throw new ConnectorError('not_found', `${what}: no table or view ${object} in database ${config.database}`, {
          schema: resource.schema,
          table: resource.table,
        });
      from = `${object} AS t`;
      layer = resource.table;
    }
    const info = await describe(c, from);
    const alias = 'query' in resource ? 'geoflow_query' : 't';
    const named = 'query' in resource ? undefined : resource.geometry_column;
    const spatial = info.filter(isSpatial);
    const geometryInfo = named ? spatial.find((s) => s.colName === named) : spatial[0];
    if (named && !geometryInfo)
      throw new ConnectorError('not_found', `${what}: ${named} is not a geometry or geography column of ${layer}`, { geometry_column: named });
    // A GeoPackage layer holds one geometry: other spatial columns are left out (select them in a query as WKT).
    const attributes = info.filter((i) => !isSpatial(i));
    const select = [...attributes.map((a) => selectExpression(a, alias)), ...(geometryInfo ? [selectExpression(geometryInfo, alias)] : [])];
    let srid: number | null = null;
    if (geometryInfo) {
      const g = `${alias}.${ident(geometryInfo.colName)}`;
      const r = await query(c, `SELECT TOP 1 ${g}.STSrid FROM ${from} WHERE ${g} IS NOT NULL`);
      const value = Number(r.rows[0]?.[0] ?? 0);
      srid = value > 0 ? value : null;
    }
    const base = {
      layer,
      columns: attributes.map((a) => ({ name: a.colName, kind: kindOfColumn(a)!, info: a })),
      geometry: geometryInfo ? { name: geometryInfo.colName, srid } : null,
    };
    const column = 'query' in resource ? undefined : resource.cursor_column;
    if (!column) return { ...base, sql: `SELECT ${select.join(', ')} FROM ${from}` };
    const cursorInfo = info.find((i) => i.colName === column);
    if (!cursorInfo) throw cursorColumnMissing(what, layer, ident(column), column);
    const quoted = `${alias}.${ident(column)}`;
    const window = await readWindow(column, quoted, kept, literal, async (where) => {
      const r = await query(c, `SELECT ${cursorMaxExpression(cursorInfo, quoted)} FROM ${from}${where}`);
      return (r.rows[0]?.[0] ?? null) as string | null;
    });
    return { ...base, ...windowedRead(`SELECT ${select.join(', ')} FROM ${from}`, window) };
  }
}

/** On-change: whether the cursor column holds a value above the last Run's (the read's own metadata queries). */
export async function sqlServerChanged(config: SqlServerConfig, resource: SqlServerResource, ctx: ConnectorContext, kept: unknown): Promise<boolean> {
  return !(await plan(config, resource, ctx, kept)).unchanged;
}

export async function extractSqlServer(
  config: SqlServerConfig,
  resource: SqlServerResource,
  ctx: ConnectorContext,
  options: ExtractOptions,
): Promise<ExtractResult> {
  const p = await plan(config, resource, ctx, options.sync?.cursor);
  if (p.unchanged) return unchangedExtract(options);
  const filename = `${safeFilename(p.layer)}.gpkg`;
  const file = path.join(ctx.workDir, filename);
  const label = `Reading ${'query' in resource ? 'the query' : qualified(resource.schema, resource.table)} (${describeServer(config)})`;
  const read = (c: Connection) =>
    writeRowsAsGeoPackage(
      {
        file,
        layer: p.layer,
        columns: p.columns.map(({ name, kind }) => ({ name, kind })),
        geometry: p.geometry ? { name: p.geometry.name, epsg: p.geometry.srid } : null,
        rows: streamRows(c, p.sql),
        label,
      },
      ctx,
    );
  // A user's query is read in a transaction that is rolled back (client.ts, rolledBack).
  await withConnection(config, ctx, (c) => ('query' in resource ? rolledBack(c, () => read(c)) : read(c)));
  return extractedGeoPackage(file, filename, p.sync);
}
