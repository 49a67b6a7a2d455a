import path from 'node:path';
import type mysql from 'mysql2/promise';
import { safeFilename } from '../../geo/datasets/dataset-files.js';
import { ConnectorError } from '../../domain/transfers.js';
import { asSubquery } from '../shared/sql/sql.js';
import { readWindow, windowedRead, type SqlCursor } from '../shared/sql/sql-cursor.js';
import { extractedGeoPackage, unchangedExtract } from '../shared/sql/sql-extract.js';
import type { ConnectorContext, ExtractOptions, ExtractResult } from '../types.js';
import { describeServer, ident, withConnection, type MysqlConfig } from './client.js';
import { mysqlDataset, ogr2ogrMysql, refuseTls } from './ogr.js';
import type { SqlResource } from '../shared/sql/definition.js';

/*
 * A table or a SELECT, read into one GeoPackage by ogr2ogr with GDAL's MySQL driver. Checks come
 * first over mysql2 (in a read-only transaction), so a missing table, a bad query or a missing
 * privilege is named by the server's error code before any transfer starts. GDAL's driver does
 * not read the CRS of MariaDB columns, so the SRID is read here and assigned.
 */

export type MysqlResource = SqlResource;

/** What a MySQL Source remembers between Runs; the value as the server prints it (`CAST(MAX(col) AS CHAR)`). */
export type MysqlCursor = SqlCursor;

/** The geometry column types of MySQL / MariaDB, as ogr2ogr -nlt names. */
const geometryTypes: Record<string, string> = {
  point: 'POINT',
  linestring: 'LINESTRING',
  polygon: 'POLYGON',
  multipoint: 'MULTIPOINT',
  multilinestring: 'MULTILINESTRING',
  multipolygon: 'MULTIPOLYGON',
  geometrycollection: 'GEOMETRYCOLLECTION',
  geomcollection: 'GEOMETRYCOLLECTION',
  geometry: 'GEOMETRY',
};
/** mysql2's column type number of geometry values (MYSQL_TYPE_GEOMETRY). */
const GEOMETRY_FIELD = 255;

interface Plan {
  sql: string;
  name: string;
  nlt?: string;
  srid: number | null;
  geometry: boolean;
  /** A table GDAL can open so its read-only dataset is not empty (it refuses to open one). */
  anchor: string[];
  /** With cursor_column: the cursor to keep, and whether nothing is newer than the last Run's. */
  cursor?: MysqlCursor;
  unchanged?: boolean;
}

async function firstSrid(c: mysql.Connection, from: string, column: string): Promise<number | null> {
  const [rows] = await c.query(`SELECT ST_SRID(${ident(column)}) AS srid FROM ${from} WHERE ${ident(column)} IS NOT NULL LIMIT 1`);
  const srid = Number((rows as { srid: unknown }[])[0]?.srid ?? 0);
  return srid > 0 ? srid : null;
}

async function plan(config: MysqlConfig, resource: MysqlResource, ctx: ConnectorContext, previous: unknown): Promise<Plan> {
  return withConnection(config, ctx, async (c) => {
    await c.query('START TRANSACTION READ ONLY');
    try {
      if ('query' in resource) {
        const subquery = asSubquery(resource.query);
        const [, fields] = await c.query(`SELECT * FROM ${subquery} AS geoflow_query LIMIT 0`);
        const geometry = (fields ?? []).find((f) => f.columnType === GEOMETRY_FIELD);
        const srid = geometry ? await firstSrid(c, `${subquery} AS geoflow_query`, geometry.name) : null;
        const [tables] = await c.query('SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name LIMIT 20');
        return {
          sql: `SELECT * FROM ${subquery} AS geoflow_query`,
          name: 'query',
          srid,
          geometry: Boolean(geometry),
          anchor: (tables as { name: string }[]).map((t) => t.name),
        };
      }
      const { table } = resource;
      const [found] = await c.query('SELECT table_type FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?', [table]);
      if (!(found as unknown[]).length)
        throw new ConnectorError('not_found', `${describeServer(config)}: no table or view \`${table}\` in database ${config.database}`, { table });
      await c.query(`SELECT * FROM ${ident(table)} LIMIT 0`);
      const [columns] = await c.query(
        `SELECT column_name AS name, data_type AS type FROM information_schema.columns
          WHERE table_schema = DATABASE() AND table_name = ? AND data_type IN (${Object.keys(geometryTypes)
            .map(() => '?')
            .join(', ')})
          ORDER BY ordinal_position LIMIT 1`,
        [table, ...Object.keys(geometryTypes)],
      );
      const geometry = (columns as { name: string; type: string }[])[0];
      const srid = geometry ? await firstSrid(c, ident(table), geometry.name) : null;
      const nlt = geometry && geometryTypes[geometry.type.toLowerCase()] !== 'GEOMETRY' ? geometryTypes[geometry.type.toLowerCase()] : undefined;
      const base = { name: table, srid, geometry: Boolean(geometry), anchor: [table], ...(nlt ? { nlt } : {}) };
      const column = resource.cursor_column;
      if (!column) return { ...base, sql: `SELECT * FROM ${ident(table)}` };
      const window = await readWindow(
        column,
        ident(column),
        previous,
        (v) => c.escape(v),
        async (where) => {
          const [maxRows] = await c.query(`SELECT CAST(MAX(${ident(column)}) AS CHAR) AS max FROM ${ident(table)}${where}`);
          return (maxRows as { max: string | null }[])[0]?.max ?? null;
        },
      );
      const read = windowedRead(`SELECT * FROM ${ident(table)}`, window);
      return { ...base, sql: read.sql, cursor: window.cursor, unchanged: window.unchanged };
    } finally {
      await c.query('ROLLBACK').catch(() => undefined);
    }
  });
}

/** On-change: whether the cursor column holds a value above the last Run's (the read's own metadata queries). */
export async function mysqlChanged(config: MysqlConfig, resource: MysqlResource, ctx: ConnectorContext, kept: unknown): Promise<boolean> {
  refuseTls(config);
  return !(await plan(config, resource, ctx, kept)).unchanged;
}

export async function extractMysql(config: MysqlConfig, resource: MysqlResource, ctx: ConnectorContext, options: ExtractOptions): Promise<ExtractResult> {
  refuseTls(config);
  const p = await plan(config, resource, ctx, options.sync?.cursor);
  if (p.unchanged) return unchangedExtract(options);
  const filename = `${safeFilename(p.name)}.gpkg`;
  const file = path.join(ctx.workDir, filename);
  await ogr2ogrMysql(
    config,
    ctx,
    `Reading ${'query' in resource ? 'the query' : `\`${resource.table}\``}`,
    [
      '-f',
      'GPKG',
      file,
      mysqlDataset(config, p.anchor),
      '-sql',
      p.sql,
      '-nln',
      p.name,
      ...(p.nlt ? ['-nlt', p.nlt] : []),
      // SRID 0 is "no CRS"; GDAL would otherwise label a query's geometry "Undefined geographic SRS".
      ...(p.geometry ? ['-a_srs', p.srid ? `EPSG:${p.srid}` : 'NONE'] : []),
    ],
    file,
  );
  return extractedGeoPackage(file, filename, p.cursor ? { cursor: p.cursor } : undefined);
}
