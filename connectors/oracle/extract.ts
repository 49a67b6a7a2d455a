import path from 'node:path';
import oracledb from 'oracledb';
import { safeFilename } from '../../geo/datasets/dataset-files.js';
import { ConnectorError } from '../../domain/transfers.js';
import { asSubquery } from '../shared/sql/sql.js';
import { cursorColumnMissing, readWindow, windowedRead } from '../shared/sql/sql-cursor.js';
import { extractedGeoPackage, unchangedExtract } from '../shared/sql/sql-extract.js';
import { writeRowsAsGeoPackage, type RowColumn } from '../shared/sql/sql-rows.js';
import type { ConnectorContext, ExtractOptions, ExtractResult } from '../types.js';
import { describeServer, rows, withConnection, type OracleConfig } from './client.js';
import { epsgOfOracleSrid } from './sdo.js';
import { cursorMaxExpression, ident, kindOfColumn, literal, qualified, selectExpression } from './sql.js';
import type { SqlResource } from '../shared/sql/definition.js';

/*
 * A table, view or synonym, or one SELECT, read through node-oracledb (Thin) into one GeoPackage
 * layer. The columns are described first (no rows), so a missing table or privilege is named by
 * its ORA- code before anything moves; then the rows stream from a result set into typed CSV that
 * ogr2ogr turns into the GeoPackage (connectors/shared/sql/sql-rows.ts). SDO_GEOMETRY comes as WKB
 * from Oracle's own SDO_UTIL.TO_WKBGEOMETRY; its SRID from the first row that has one (Oracle's
 * own geodetic SRIDs such as 8307 read as their EPSG codes). Dates and timestamps are fetched as
 * ISO 8601 text (the session's formats, UTC), LOBs as text or bytes.
 */

export type OracleResource = SqlResource<{ schema?: string | undefined; geometry_column?: string | undefined }>;

/** Fetch dates as the session's ISO text, LOBs whole. */
const fetchTypeHandler = (meta: oracledb.Metadata<unknown>): oracledb.FetchTypeResponse | undefined => {
  const type = String(meta.dbTypeName ?? '').toUpperCase();
  if (type === 'DATE' || type.startsWith('TIMESTAMP') || type.startsWith('INTERVAL') || type === 'CLOB' || type === 'NCLOB' || type === 'ROWID')
    return { type: oracledb.STRING };
  if (type === 'BLOB') return { type: oracledb.BUFFER };
  return undefined;
};

async function* resultRows(c: oracledb.Connection, sql: string): AsyncGenerator<unknown[]> {
  const result = await c.execute<unknown[]>(sql, [], {
    resultSet: true,
    outFormat: oracledb.OUT_FORMAT_ARRAY,
    fetchArraySize: 1000,
    fetchTypeHandler,
  });
  const rs = result.resultSet!;
  try {
    for (let batch = await rs.getRows(1000); batch.length; batch = await rs.getRows(1000)) yield* batch;
  } finally {
    await rs.close().catch(() => undefined);
  }
}

/**
 * A user's query runs in a read-only transaction (Oracle refuses DML there: ORA-01456); the
 * driver sends one statement per execute, and the query is wrapped in a SELECT.
 */
async function readOnly(resource: OracleResource, c: oracledb.Connection): Promise<void> {
  if ('query' in resource) await c.execute('SET TRANSACTION READ ONLY');
}

/** What a read will select (columns, geometry, the cursor window), decided by metadata queries only; the change check asks it too. */
async function plan(config: OracleConfig, resource: OracleResource, ctx: ConnectorContext, kept: unknown) {
  const what = describeServer(config);
  return withConnection(config, ctx, async (c) => {
    await readOnly(resource, c);
    let from: string;
    let layer: string;
    if ('query' in resource) {
      from = `${asSubquery(resource.query)} geoflow_query`;
      layer = 'query';
    } else {
      const owner = resource.schema ?? String((await rows(c, 'SELECT USER FROM dual'))[0]![0]);
      const found = await rows(
        c,
        `SELECT 1 FROM all_objects WHERE owner = :o AND object_name = :t AND object_type IN ('TABLE', 'VIEW', 'MATERIALIZED VIEW', 'SYNONYM')`,
        { o: owner, t: resource.table },
      );
      if (!found.length)
        throw new ConnectorError('not_found', `${what}: no table or view ${qualified(owner, resource.table)} the user may read`, {
          schema: owner,
          table: resource.table,
        });
      from = `${qualified(owner, resource.table)} t`;
      layer = resource.table;
    }
    const alias = 'query' in resource ? 'geoflow_query' : 't';
    const described = await c.execute(`SELECT * FROM ${from} WHERE 1 = 0`, [], { outFormat: oracledb.OUT_FORMAT_ARRAY });
    const meta = (described.metaData ?? []).map((m) => ({
      name: m.name,
      kind: kindOfColumn({ dbTypeName: String(m.dbTypeName ?? ''), precision: m.precision, scale: m.scale }),
    }));
    const named = 'query' in resource ? undefined : resource.geometry_column;
    const spatial = meta.filter((m) => m.kind === null);
    const geometry = named ? spatial.find((s) => s.name === named) : spatial[0];
    if (named && !geometry)
      throw new ConnectorError('not_found', `${what}: ${ident(named)} is not an SDO_GEOMETRY column of ${layer}`, { geometry_column: named });
    // Columns that cannot travel (other object types, other geometry columns) are left out.
    const attributes = meta.filter((m): m is { name: string; kind: NonNullable<typeof m.kind> } => m.kind !== null && m.kind !== undefined);
    const select = [...attributes.map((a) => selectExpression(a.name, alias, false)), ...(geometry ? [selectExpression(geometry.name, alias, true)] : [])];
    let srid: number | null = null;
    if (geometry) {
      const g = `${alias}.${ident(geometry.name)}`;
      const r = await rows(c, `SELECT ${g}.SDO_SRID FROM ${from} WHERE ${g} IS NOT NULL AND ROWNUM = 1`);
      srid = r[0]?.[0] === null || r[0]?.[0] === undefined ? null : epsgOfOracleSrid(Number(r[0][0]));
    }
    const columns: RowColumn[] = attributes.map((a) => ({ name: a.name, kind: a.kind }));
    const base = { layer, columns, geometry: geometry ? { name: geometry.name, epsg: srid } : null };
    const column = 'query' in resource ? undefined : resource.cursor_column;
    if (!column) return { ...base, sql: `SELECT ${select.join(', ')} FROM ${from}` };
    if (!meta.some((m) => m.name === column)) throw cursorColumnMissing(what, layer, ident(column), column);
    const quoted = `${alias}.${ident(column)}`;
    const window = await readWindow(column, quoted, kept, literal, async (where) => {
      const r = await rows(c, `SELECT ${cursorMaxExpression(quoted)} FROM ${from}${where}`);
      return (r[0]?.[0] ?? null) as string | null;
    });
    return { ...base, ...windowedRead(`SELECT ${select.join(', ')} FROM ${from}`, window) };
  });
}

/** On-change: whether the cursor column holds a value above the last Run's. */
export async function oracleChanged(config: OracleConfig, resource: OracleResource, ctx: ConnectorContext, kept: unknown): Promise<boolean> {
  const planned = await plan(config, resource, ctx, kept);
  return !('unchanged' in planned && planned.unchanged);
}

export async function extractOracle(config: OracleConfig, resource: OracleResource, ctx: ConnectorContext, options: ExtractOptions): Promise<ExtractResult> {
  const what = describeServer(config);
  const planned = await plan(config, resource, ctx, options.sync?.cursor);
  if ('unchanged' in planned && planned.unchanged) return unchangedExtract(options);
  const filename = `${safeFilename(planned.layer)}.gpkg`;
  const file = path.join(ctx.workDir, filename);
  await withConnection(config, ctx, async (c) => {
    await readOnly(resource, c);
    await writeRowsAsGeoPackage(
      {
        file,
        layer: planned.layer,
        columns: planned.columns,
        geometry: planned.geometry,
        rows: resultRows(c, planned.sql),
        label: `Reading ${planned.layer} (${what})`,
      },
      ctx,
    );
  });
  return extractedGeoPackage(file, filename, 'sync' in planned ? planned.sync : undefined);
}
