import path from 'node:path';
import { rm, stat } from 'node:fs/promises';
import { safeFilename } from '../../geo/datasets/dataset-files.js';
import { ConnectorError } from '../../domain/transfers.js';
import { asSubquery } from '../shared/sql/sql.js';
import { csvToGeoPackage, RowsCsv, type ColumnKind, type CsvColumnKind } from '../shared/sql/table-csv.js';
import type { ConnectorContext, ExtractOptions, ExtractResult } from '../types.js';
import { describeServer, ident, withSession, type Session, type SnowflakeConfig } from './client.js';
import type { SqlResource } from '../shared/sql/definition.js';

/*
 * A Snowflake table or query into one GeoPackage layer. The result's columns are described first
 * (the query with LIMIT 0); the geometry (the GEOGRAPHY or GEOMETRY column named, else the first)
 * is read as WKT with ST_ASWKT, in EPSG:4326 for GEOGRAPHY and in its SRID (ST_SRID of the first
 * value) for GEOMETRY; other values arrive as text. Rows are streamed by the driver into a CSV
 * with GDAL types, and ogr2ogr makes the GeoPackage.
 */

export type SnowflakeResource = SqlResource<{ geometry_column?: string | undefined }, { geometry_column?: string | undefined }>;

/** What a Snowflake Source remembers between Runs: the cursor column, its type and the largest value read. */
export interface SnowflakeCursor {
  column: string;
  /** The column's SQL type, to compare the kept value in it. */
  type: string;
  value: string | null;
}

interface Column {
  name: string;
  type: string;
  scale: number;
}

const spatial = (c: Column) => c.type === 'geography' || c.type === 'geometry';

/** The driver's column types (Snowflake's rowtype) → column kinds of the CSV. */
export function kindOfSnowflake(c: Column): ColumnKind {
  switch (c.type) {
    case 'fixed':
      return c.scale > 0 ? 'real' : 'integer';
    case 'real':
      return 'real';
    case 'boolean':
      return 'boolean';
    case 'date':
      return 'date';
    case 'timestamp_ntz':
    case 'timestamp_ltz':
    case 'timestamp_tz':
      return 'datetime';
    case 'time':
      return 'time';
    default:
      return 'string';
  }
}

/** The SQL type a kept cursor value is cast to before it is compared. */
export function cursorType(c: Column): string {
  switch (c.type) {
    case 'fixed':
      return `NUMBER(38, ${c.scale})`;
    case 'real':
      return 'FLOAT';
    case 'date':
    case 'time':
    case 'timestamp_ntz':
    case 'timestamp_ltz':
    case 'timestamp_tz':
      return c.type.toUpperCase();
    default:
      return 'VARCHAR';
  }
}

const qualified = (config: SnowflakeConfig, table: string) => `${ident(config.database)}.${ident(config.schema)}.${ident(table)}`;

async function firstSrid(s: Session, from: string, column: string): Promise<number | null> {
  const [row] = await s.query(`SELECT ST_SRID(${ident(column)}) AS SRID FROM ${from} WHERE ${ident(column)} IS NOT NULL LIMIT 1`);
  const srid = Number(row?.SRID ?? 0);
  return srid > 0 ? srid : null;
}

/**
 * The cursor column among a table's columns (named without regard to case; else not_found), the
 * type its values are compared in, and the last Run's value when it was kept for this same column
 * and type (a Job that changed its column starts over).
 */
function cursorOf(config: SnowflakeConfig, table: string, name: string, columns: Column[], previous: SnowflakeCursor | null) {
  const column = columns.find((c) => c.name.toLowerCase() === name.toLowerCase());
  if (!column) {
    throw new ConnectorError('not_found', `${describeServer(config)}: table ${config.schema}.${table} has no column ${name}`, { column: name }, false);
  }
  const type = cursorType(column);
  return { column, type, last: previous?.column === column.name && previous.type === type ? previous.value : null };
}

/**
 * On-change: whether the cursor column holds a value above the last Run's: the column looked up
 * as the read looks it up, then one `LIMIT 1` probe (no rows leave the warehouse).
 */
export async function snowflakeChanged(config: SnowflakeConfig, resource: SnowflakeResource, ctx: ConnectorContext, kept: unknown): Promise<boolean> {
  if (!('table' in resource) || !resource.cursor_column) return true;
  const previous = (kept ?? null) as SnowflakeCursor | null;
  return withSession(config, ctx, async (s) => {
    const from = qualified(config, resource.table);
    const { column, type, last } = cursorOf(config, resource.table, resource.cursor_column!, await s.describe(from), previous);
    if (last === null) return true;
    const rows = await s.query(`SELECT 1 AS NEWER FROM ${from} WHERE ${ident(column.name)} > CAST(? AS ${type}) LIMIT 1`, [last]);
    return rows.length > 0;
  });
}

export async function extractSnowflake(
  config: SnowflakeConfig,
  resource: SnowflakeResource,
  ctx: ConnectorContext,
  options: ExtractOptions,
): Promise<ExtractResult> {
  const previous = (options.sync?.cursor ?? null) as SnowflakeCursor | null;
  const name = 'query' in resource ? 'query' : resource.table;
  const base = safeFilename(name).replace(/\.[^.]*$/, '') || 'data';
  const csv = path.join(ctx.workDir, `${base}.csv`);
  const file = path.join(ctx.workDir, `${base}.gpkg`);
  const what = 'query' in resource ? 'the query' : `table ${config.schema}.${resource.table}`;

  const read = await withSession(config, ctx, async (s) => {
    const from = 'query' in resource ? `${asSubquery(resource.query)} AS "geoflow_query"` : qualified(config, resource.table);
    let columns: Column[];
    try {
      columns = await s.describe(from);
    } catch (error) {
      if (!('query' in resource)) {
        const e = error as { code?: unknown; data?: { errorCode?: unknown } };
        if (String(e.data?.errorCode ?? e.code ?? '') === '002003') {
          throw new ConnectorError(
            'not_found',
            `${describeServer(config)}: no table or view ${config.schema}.${resource.table} (or no privilege on it)`,
            { table: resource.table },
            false,
          );
        }
      }
      throw error;
    }
    const named = resource.geometry_column?.toLowerCase();
    const geometryIndex = columns.findIndex((c) => spatial(c) && (!named || c.name.toLowerCase() === named));
    if (named && geometryIndex < 0)
      throw new ConnectorError(
        'not_found',
        `${describeServer(config)}: no GEOGRAPHY or GEOMETRY column ${resource.geometry_column} in ${what}`,
        { geometry_column: resource.geometry_column },
        false,
      );
    const geometry = geometryIndex >= 0 ? columns[geometryIndex]! : null;
    const epsg = !geometry ? null : geometry.type === 'geography' ? 4326 : await firstSrid(s, from, geometry.name);

    // With cursor_column: the rows above the last Run's value, up to the largest value now.
    const where: string[] = [];
    const binds: string[] = [];
    let cursor: SnowflakeCursor | undefined;
    if ('table' in resource && resource.cursor_column) {
      const { column, type, last } = cursorOf(config, resource.table, resource.cursor_column, columns, previous);
      if (last !== null) {
        where.push(`${ident(column.name)} > CAST(? AS ${type})`);
        binds.push(last);
      }
      const [max] = await s.query(
        `SELECT TO_VARCHAR(MAX(${ident(column.name)})) AS MAX FROM ${from}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`,
        binds,
      );
      const value = (max?.MAX ?? null) as string | null;
      if (last !== null && value === null) return { unchanged: true as const };
      if (value !== null) {
        where.push(`${ident(column.name)} <= CAST(? AS ${type})`);
        binds.push(value);
      }
      cursor = { column: column.name, type, value: value ?? last };
    }

    // The geometry first, so GDAL takes it as the layer's geometry.
    const order = geometryIndex >= 0 ? [geometryIndex, ...columns.map((_, i) => i).filter((i) => i !== geometryIndex)] : columns.map((_, i) => i);
    const select = order.map((i) => (spatial(columns[i]!) ? `ST_ASWKT(${ident(columns[i]!.name)})` : ident(columns[i]!.name))).join(', ');
    const kinds = order.map((i) => (i === geometryIndex ? ('wkt' as const) : spatial(columns[i]!) ? ('string' as const) : kindOfSnowflake(columns[i]!)));
    const writer = new RowsCsv(
      csv,
      order.map((i, n) => ({ name: columns[i]!.name, kind: kinds[n]! })),
      ctx,
    );
    try {
      const { rows } = await s.stream(`SELECT ${select} FROM ${from}${where.length ? ` WHERE ${where.join(' AND ')}` : ''}`, binds.length ? binds : undefined);
      for await (const row of rows as AsyncIterable<unknown[]>) {
        await writer.row(row.map((v, n) => text(kinds[n]!, v)));
        if (writer.rows % 10_000 === 0) ctx.progress?.({ features: writer.rows });
      }
      await writer.close();
    } catch (error) {
      await writer.destroy();
      throw error;
    }
    return { unchanged: false as const, writer, rows: writer.rows, geometry: geometry ? { name: geometry.name, epsg } : null, cursor };
  }).catch(async (error) => {
    await rm(csv, { force: true });
    throw error;
  });
  if (read.unchanged) return { file: '', filename: '', bytes: 0, features: 0, sync: options.sync!, unchanged: true };

  try {
    await csvToGeoPackage(read.writer, file, name, read.geometry, ctx, `Reading ${what} (${describeServer(config)})`);
  } catch (error) {
    await rm(file, { force: true });
    throw error;
  } finally {
    await rm(csv, { force: true });
    await rm(read.writer.csvt, { force: true });
  }
  return {
    file,
    filename: path.basename(file),
    bytes: (await stat(file)).size,
    features: read.rows,
    ...(read.cursor ? { sync: { cursor: read.cursor } } : {}),
  };
}

/** A value as the driver gives it (text with fetchAsString) as CSV text for its kind. */
function text(kind: CsvColumnKind, v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (kind === 'boolean') return /^(true|1)$/i.test(String(v)) ? '1' : '0';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
