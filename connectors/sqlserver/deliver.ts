import path from 'node:path';
import { TYPES, type Connection } from 'tedious';
import { ConnectorError, type DeliveryResult } from '../../domain/transfers.js';
import {
  effectiveWriteMode,
  INTERNAL_PREFIX,
  LEDGER,
  requireColumns,
  runStagedDelivery,
  stagingNames,
  targetExists,
  type WriteMode,
} from '../shared/sql/sql-delivery.js';
import { mapColumnNames } from '../shared/sql/sql-names.js';
import { layerColumns, layerExtent, layerRows } from '../shared/sql/sql-rows.js';
import type { ColumnKind } from '../shared/sql/table-csv.js';
import { runOgr2ogr, transferFailure } from '../shared/files/ogr2ogr.js';
import { freeColumnName, vectorInput, type VectorInput } from '../shared/files/vector-input.js';
import type { ConnectorContext, DeliverInput } from '../types.js';
import { classifySqlServer, cleanupConnection, describeServer, inTransaction, query, triedOf, withConnection, type SqlServerConfig } from './client.js';
import {
  appendStatement,
  applock,
  createLedger,
  createLoadTable,
  createSpatialIndex,
  createStageTable,
  dropIfExists,
  fillStage,
  grantsQuery,
  grantStatement,
  ident,
  qualified,
  renameStatement,
  spatialColumnsQuery,
  swapStatements,
  type SpatialType,
  type StageColumn,
} from './sql.js';
import type { SqlTarget } from '../shared/sql/definition.js';

/*
 * Delivery into a SQL Server table. The output is bulk-loaded (tedious' BulkLoad: the TDS bulk
 * insert that bcp and SqlBulkCopy use) into a load table with the geometry as WKB, turned by the
 * server into the staging table with the database's own `geometry` (or `geography`) type in one
 * set-based INSERT, and indexed; then one transaction changes the target:
 *   replace  sp_rename target → old, sp_rename staging → target, the old grants given to the new
 *            table, the old one dropped, the delivery recorded: all or nothing;
 *   append   the staging rows inserted into the target and the delivery recorded;
 *   create   sp_rename staging → target; an existing target is target_exists.
 * SQL Server's DDL is transactional and sp_rename holds a schema-modification lock until the
 * commit: a reader's query waits for the swap and then reads the new table, so it never sees the
 * target empty, missing or half-written. A failed load never touches the target.
 */

export type SqlServerTarget = SqlTarget<{ schema: string; spatial_type: SpatialType }>;

const bulkType: Record<ColumnKind, { type: (typeof TYPES)[keyof typeof TYPES]; length?: number; scale?: number }> = {
  integer: { type: TYPES.BigInt },
  real: { type: TYPES.Float },
  boolean: { type: TYPES.Bit },
  date: { type: TYPES.Date },
  datetime: { type: TYPES.DateTime2, scale: 3 },
  time: { type: TYPES.Time, scale: 3 },
  binary: { type: TYPES.VarBinary, length: Infinity },
  string: { type: TYPES.NVarChar, length: 4000 },
};

/** Bulk-loads rows into a table through TDS bulk insert; resolves with the rows written. */
function bulkLoad(c: Connection, table: string, columns: StageColumn[], wkb: string | null, rows: AsyncIterable<unknown[]>): Promise<number> {
  return new Promise((resolve, reject) => {
    const load = c.newBulkLoad(table, { keepNulls: true, lockTable: true }, (error, rowCount) => (error ? reject(error) : resolve(rowCount ?? 0)));
    for (const col of columns) {
      const t = bulkType[col.kind];
      load.addColumn(col.name, t.type, {
        nullable: true,
        ...(col.kind === 'string' && col.maxLength > 4000 ? { length: Infinity } : t.length !== undefined ? { length: t.length } : {}),
        ...(t.scale !== undefined ? { scale: t.scale } : {}),
      });
    }
    if (wkb) load.addColumn(wkb, TYPES.VarBinary, { nullable: true, length: Infinity });
    c.execBulkLoad(load, rows);
  });
}

/** Rows of a layer without geometry: the trailing (null) WKB is not a column of the load table. */
async function* withoutGeometry(rows: AsyncIterable<unknown[]>): AsyncGenerator<unknown[]> {
  for await (const row of rows) yield row.slice(0, -1);
}

/** The output reprojected to WGS 84 (lon/lat) for a geography column, by ogr2ogr; the same input when it already is. */
async function inWgs84(layer: VectorInput, ctx: ConnectorContext): Promise<VectorInput> {
  if (layer.epsg === 4326 || layer.nlt === 'NONE') return layer;
  const file = path.join(ctx.workDir, 'wgs84.gpkg');
  await runOgr2ogr(
    {
      args: ['-f', 'GPKG', file, layer.ref.path, layer.layer, ...layer.ref.openOptions.flatMap((o) => ['-oo', o]), '-t_srs', 'EPSG:4326', '-nln', 'wgs84'],
      label: 'Reprojecting to WGS 84 for geography',
    },
    ctx,
    transferFailure([], 'Reprojecting to WGS 84 for geography', {}),
  );
  return { ...layer, ref: { ...layer.ref, path: file, openOptions: [], driver: 'GPKG' }, layer: 'wgs84', epsg: 4326 };
}

interface Existing {
  geometry: string | null;
  spatial: SpatialType | null;
  srid: number | null;
}

export async function deliverSqlServer(config: SqlServerConfig, target: SqlServerTarget, input: DeliverInput, ctx: ConnectorContext): Promise<DeliveryResult> {
  const { schema, table } = target;
  const mode = effectiveWriteMode(target.write_mode, input);
  const where = qualified(schema, table);
  const what = describeServer(config);
  const { tag, stage, old } = stagingNames(input.deliveryId);
  const load = `${INTERNAL_PREFIX}load_${tag}`;
  const result = (rows: number, m: WriteMode, extra: Record<string, unknown> = {}): DeliveryResult => ({
    target: { schema, table, write_mode: m, ...extra },
    rows_written: rows,
  });

  const recorded = async (c: Connection) => {
    const ledger = qualified(schema, LEDGER);
    if ((await query(c, "SELECT OBJECT_ID(@o, N'U')", { o: ledger })).rows[0]?.[0] === null) return null;
    const r = await query(c, `SELECT rows_written, write_mode FROM ${ledger} WHERE delivery_id = @id`, { id: input.deliveryId });
    return r.rows[0] ? result(Number(r.rows[0][0]), r.rows[0][1] as WriteMode) : null;
  };
  const exists = async (c: Connection) => (await query(c, 'SELECT OBJECT_ID(@o)', { o: where })).rows[0]?.[0] !== null;

  let layer = await vectorInput(input, ctx.workDir);
  const outputEpsg = layer.epsg;
  const fields = await layerColumns(layer);
  const fid = freeColumnName(layer.fields, 'fid', 'ogc_fid');

  return runStagedDelivery<{ existing: Existing; geometry: string; spatial: SpatialType; columns: StageColumn[] }>({
    prepare: () =>
      withConnection(config, ctx, async (c) => {
        if ((await query(c, 'SELECT SCHEMA_ID(@s)', { s: schema })).rows[0]?.[0] === null) {
          throw new ConnectorError(
            'not_found',
            `${what}: schema ${ident(schema)} does not exist in database ${config.database}`,
            { schema, database: config.database },
            false,
          );
        }
        const done = await recorded(c);
        if (done) return { done };
        const found = await exists(c);
        if (mode === 'create' && found) throw targetExists(where, config.database, { schema, table });
        await query(c, createLedger(schema, LEDGER));
        await query(c, `${dropIfExists(schema, stage)}; ${dropIfExists(schema, load)}`);
        const existing: Existing = { geometry: null, spatial: null, srid: null };
        if (found) {
          const spatial = (await query(c, spatialColumnsQuery, { object: where })).rows[0];
          if (spatial) {
            existing.geometry = String(spatial[0]);
            existing.spatial = String(spatial[1]).toLowerCase() as SpatialType;
            const r = await query(c, `SELECT TOP 1 ${ident(existing.geometry)}.STSrid FROM ${where} WHERE ${ident(existing.geometry)} IS NOT NULL`);
            existing.srid = r.rows[0] ? Number(r.rows[0][0]) : null;
          }
        }
        // A replaced or appended table keeps its geometry column and spatial type.
        const spatial: SpatialType = existing.spatial ?? target.spatial_type;
        const geometry = existing.geometry ?? freeColumnName(layer.fields, 'geom', 'geometry');
        const names = mapColumnNames(
          fields.map((f) => f.name),
          { maxLength: 128, unit: 'chars' },
          [fid, geometry],
        );
        return {
          done: null,
          plan: { existing, geometry, spatial, columns: fields.map((f, i) => ({ name: names[i]!, kind: f.kind, maxLength: f.maxLength })) },
        };
      }),
    load: async ({ geometry, spatial, columns }) => {
      if (spatial === 'geography') layer = await inWgs84(layer, ctx);
      const hasGeometry = layer.nlt !== 'NONE';
      const srid = spatial === 'geography' ? 4326 : (layer.epsg ?? 0);
      const wkb = hasGeometry
        ? freeColumnName(
            columns.map((c) => c.name),
            'wkb',
          )
        : null;
      await withConnection(config, ctx, async (c) => {
        await query(c, createLoadTable(schema, load, columns, wkb));
        await bulkLoad(c, qualified(schema, load), columns, wkb, wkb ? layerRows(layer, fields) : withoutGeometry(layerRows(layer, fields)));
        await query(c, createStageTable(schema, stage, tag, fid, columns, hasGeometry ? { name: geometry, spatial } : null));
        await query(c, fillStage(schema, stage, load, columns, hasGeometry && wkb ? { name: geometry, spatial, wkb, srid } : null));
        await query(c, dropIfExists(schema, load));
        if (hasGeometry) {
          const index = createSpatialIndex(schema, stage, tag, geometry, spatial, spatial === 'geometry' ? await layerExtent(layer) : null);
          if (index) await query(c, index);
        }
      });
    },
    swap: ({ existing, geometry, spatial, columns }) =>
      withConnection(config, ctx, (c) =>
        inTransaction(c, async () => {
          // One change of this target at a time (two Jobs, or a retry racing its first attempt).
          await query(c, applock, { resource: `geoflow:${schema}.${table}` });
          const done = await recorded(c);
          if (done) return done;
          const found = await exists(c);
          let rows: number;
          if (mode === 'append' && found) {
            const stageColumns = [...columns.map((col) => col.name), ...(layer.nlt !== 'NONE' ? [geometry] : [])];
            const targetColumns = (await query(c, 'SELECT name FROM sys.columns WHERE object_id = OBJECT_ID(@o)', { o: where })).rows.map((r) => String(r[0]));
            requireColumns(where, stageColumns, targetColumns, ident);
            const srid = spatial === 'geography' ? 4326 : layer.epsg;
            if (existing.srid !== null && srid !== null && existing.srid !== srid && layer.nlt !== 'NONE') {
              throw new ConnectorError(
                'invalid_data',
                `${where} holds SRID ${existing.srid} and the output EPSG:${srid}; SQL Server cannot reproject: reproject the output to EPSG:${existing.srid} (a reproject operation) or use replace`,
                { schema, table },
                false,
              );
            }
            rows = (await query(c, appendStatement(schema, table, stage, stageColumns))).rowCount;
          } else {
            if (mode === 'create' && found) throw targetExists(where, config.database, { schema, table }, true);
            rows = Number((await query(c, `SELECT COUNT_BIG(*) FROM ${qualified(schema, stage)}`)).rows[0]![0]);
            if (found) {
              for (const statement of swapStatements(schema, table, stage, old)) await query(c, statement);
              const grants = await query(c, grantsQuery, { object: qualified(schema, old) });
              for (const [state, permission, grantee] of grants.rows)
                await query(c, grantStatement(String(state), String(permission), String(grantee), schema, table));
              await query(c, `DROP TABLE ${qualified(schema, old)}`);
            } else {
              await query(c, renameStatement(schema, stage, table));
            }
          }
          await query(c, `INSERT INTO ${qualified(schema, LEDGER)} (delivery_id, target_table, write_mode, rows_written) VALUES (@id, @t, @m, @n)`, {
            id: input.deliveryId,
            t: table,
            m: mode,
            n: rows,
          });
          // geography holds WGS 84 only: say when the output was reprojected to it.
          return result(rows, mode, {
            spatial_type: spatial,
            ...(spatial === 'geography' && layer.nlt !== 'NONE' && outputEpsg !== 4326 ? { reprojected_to: 'EPSG:4326' } : {}),
          });
        }),
      ).catch((error) => {
        const number = (error as ConnectorError).details?.error_number;
        if (number === 3729 || number === 3732) {
          throw new ConnectorError(
            'invalid_data',
            `${what}: ${where} cannot be replaced while other objects (schema-bound views, foreign keys) depend on it; drop them or use write_mode append`,
            { ...triedOf(config), schema, table },
            false,
          );
        }
        throw classifySqlServer(error, `${what}: delivering to ${where}`, { schema, table });
      }),
    dropStage: () => cleanupConnection(config, ctx, (c) => query(c, `${dropIfExists(schema, stage)}; ${dropIfExists(schema, load)}`)),
  });
}
