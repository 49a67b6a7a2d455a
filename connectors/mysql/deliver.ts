import type mysql from 'mysql2/promise';
import { ConnectorError, type DeliveryResult } from '../../domain/transfers.js';
import {
  DELETE_MARKER_VALUES,
  deliveryMark,
  effectiveWriteMode,
  keysMissing,
  LEDGER,
  requireColumns,
  runStagedDelivery,
  stagingLoadArgs,
  stagingNames,
  targetExists,
  upsertColumns,
  upsertSpecOf,
  type UpsertSpec,
  type WriteMode,
} from '../shared/sql/sql-delivery.js';
import { freeColumnName, vectorInput } from '../shared/files/vector-input.js';
import type { ConnectorContext, DeliverInput } from '../types.js';
import { cleanupConnection, describeServer, ident, withConnection, type MysqlConfig } from './client.js';
import { mysqlDataset, ogr2ogrMysql, refuseTls } from './ogr.js';
import type { SqlUpsertTarget } from '../shared/sql/definition.js';

/*
 * Delivery into a MySQL / MariaDB table. The output is first loaded by ogr2ogr (GDAL's MySQL
 * driver) into a staging table of its own, then:
 *   replace  RENAME TABLE target TO old, staging TO target: one atomic statement, so readers see
 *            the old table or the new one, never none; then the old one is dropped;
 *   append   the staging rows are inserted into the target in one InnoDB transaction that also
 *            records the delivery id (a missing target is created like `create`);
 *   create   RENAME TABLE staging TO target; an existing target is target_exists.
 * A failed load never touches the target. DDL commits on its own in MySQL, so a rename cannot
 * share a transaction with the delivery ledger: the swapped-in table carries the delivery's mark
 * in its table comment instead, and a retry that finds its own mark on the target knows the
 * rename happened and only records it.
 */

export type { WriteMode };
export type MysqlTarget = SqlUpsertTarget;

const geometryDataTypes = [
  'point',
  'linestring',
  'polygon',
  'multipoint',
  'multilinestring',
  'multipolygon',
  'geometrycollection',
  'geomcollection',
  'geometry',
];

/** The delivery ledger: InnoDB, so an append and its record commit together. */
const CREATE_LEDGER = `CREATE TABLE IF NOT EXISTS ${ident(LEDGER)} (delivery_id VARCHAR(255) PRIMARY KEY, target_table VARCHAR(64) NOT NULL, write_mode VARCHAR(16) NOT NULL, rows_written BIGINT NOT NULL, delivered_at TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP) ENGINE=InnoDB`;

type Row = Record<string, unknown>;
const rows = async (c: mysql.Connection, sql: string, values: unknown[] = []) => (await c.query(sql, values))[0] as Row[];

async function tableInfo(c: mysql.Connection, table: string): Promise<{ comment: string } | null> {
  const r = await rows(c, 'SELECT table_comment AS comment FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?', [table]);
  return r[0] ? { comment: String(r[0].comment ?? '') } : null;
}

async function recorded(c: mysql.Connection, deliveryId: string): Promise<{ rows_written: number; write_mode: WriteMode } | null> {
  if (!(await tableInfo(c, LEDGER))) return null;
  const r = await rows(c, `SELECT rows_written, write_mode FROM ${ident(LEDGER)} WHERE delivery_id = ?`, [deliveryId]);
  return r[0] ? { rows_written: Number(r[0].rows_written), write_mode: r[0].write_mode as WriteMode } : null;
}

const record = (c: mysql.Connection, deliveryId: string, table: string, mode: WriteMode, count: number) =>
  c.query(`INSERT INTO ${ident(LEDGER)} (delivery_id, target_table, write_mode, rows_written) VALUES (?, ?, ?, ?)`, [deliveryId, table, mode, count]);

const countRows = async (c: mysql.Connection, table: string) => Number((await rows(c, `SELECT COUNT(*) AS n FROM ${ident(table)}`))[0]!.n);

async function columnsOf(c: mysql.Connection, table: string): Promise<{ name: string; type: string }[]> {
  const r = await rows(
    c,
    'SELECT column_name AS name, data_type AS type FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position',
    [table],
  );
  return r.map((x) => ({ name: String(x.name), type: String(x.type).toLowerCase() }));
}

/**
 * On MariaDB (and MySQL < 8) GDAL's MySQL driver writes its own spatial_ref_sys ids as SRIDs (1, 2
 * …), which no other tool understands: the staged geometries get the EPSG code instead. MySQL 8
 * gets EPSG codes from GDAL already, so nothing is rewritten there.
 */
async function useEpsg(c: mysql.Connection, stage: string, column: string, epsg: number | null): Promise<void> {
  if (!epsg) return;
  const [found] = await rows(c, `SELECT ST_SRID(${ident(column)}) AS srid FROM ${ident(stage)} WHERE ${ident(column)} IS NOT NULL LIMIT 1`);
  if (!found || Number(found.srid) === epsg) return;
  await c.query(`UPDATE ${ident(stage)} SET ${ident(column)} = ST_GeomFromWKB(ST_AsWKB(${ident(column)}), ?) WHERE ${ident(column)} IS NOT NULL`, [epsg]);
  if (await tableInfo(c, 'geometry_columns')) await c.query('UPDATE geometry_columns SET srid = ? WHERE f_table_name = ?', [epsg, stage]);
}

/** GDAL's MySQL driver keeps a geometry_columns table on MariaDB and MySQL < 8: keep it naming the target. */
async function renameMetadata(c: mysql.Connection, stage: string, table: string): Promise<void> {
  if (!(await tableInfo(c, 'geometry_columns'))) return;
  await c.query('DELETE FROM geometry_columns WHERE f_table_name = ?', [table]);
  await c.query('UPDATE geometry_columns SET f_table_name = ? WHERE f_table_name = ?', [table, stage]);
}

const quote = (m: string) => `\`${m}\``;

/** Whether a staging row's marker says "delete", as SQL (false without a marker). */
const markedSql = (spec: UpsertSpec, alias: string) =>
  spec.deleteMarker
    ? `COALESCE(LOWER(CAST(${alias}.${ident(spec.deleteMarker)} AS CHAR)) IN (${DELETE_MARKER_VALUES.map((v) => `'${v}'`).join(', ')}), 0)`
    : '0';

/**
 * Prepares the staging table of an upsert: refuses rows without a key and keeps the last row of
 * each key (the highest staging id). Returns the columns the target receives.
 */
async function prepareUpsertStage(c: mysql.Connection, stage: string, fid: string, spec: UpsertSpec, where: string, targetColumns: string[] | null) {
  const stageColumns = (await columnsOf(c, stage)).map((col) => col.name).filter((n) => n !== fid);
  const written = upsertColumns(where, spec, stageColumns, targetColumns, quote);
  const [row] = await rows(c, `SELECT COUNT(*) AS n FROM ${ident(stage)} WHERE ${spec.keys.map((k) => `${ident(k)} IS NULL`).join(' OR ')}`);
  if (Number(row?.n) > 0) throw keysMissing(where, Number(row!.n), spec.keys, quote);
  // A derived table inside a derived table: MySQL does not delete from a table its own subquery reads otherwise.
  await c.query(
    `DELETE FROM ${ident(stage)} WHERE ${ident(fid)} IN (SELECT ${ident(fid)} FROM (SELECT ${ident(fid)}, ROW_NUMBER() OVER (PARTITION BY ${spec.keys.map(ident).join(', ')} ORDER BY ${ident(fid)} DESC) AS n FROM ${ident(stage)}) AS r WHERE n > 1)`,
  );
  return written;
}

/**
 * Upserts the staging rows into an existing target inside the caller's transaction: marked rows
 * delete the target rows with their key, the others update those rows or are inserted.
 */
async function upsertRows(c: mysql.Connection, table: string, stage: string, fid: string, spec: UpsertSpec) {
  const where = `\`${table}\``;
  const written = await prepareUpsertStage(
    c,
    stage,
    fid,
    spec,
    where,
    (await columnsOf(c, table)).map((col) => col.name),
  );
  const match = spec.keys.map((k) => `t.${ident(k)} = s.${ident(k)}`).join(' AND ');
  const marked = markedSql(spec, 's');
  const affected = async (text: string) => ((await c.query(text))[0] as { affectedRows: number }).affectedRows;
  const deleted = spec.deleteMarker ? await affected(`DELETE t FROM ${ident(table)} AS t JOIN ${ident(stage)} AS s ON ${match} WHERE ${marked}`) : 0;
  const assigned = written.filter((col) => !spec.keys.includes(col));
  const updated = assigned.length
    ? await affected(
        `UPDATE ${ident(table)} AS t JOIN ${ident(stage)} AS s ON ${match} SET ${assigned.map((col) => `t.${ident(col)} = s.${ident(col)}`).join(', ')} WHERE NOT ${marked}`,
      )
    : 0;
  const list = written.map(ident).join(', ');
  const inserted = await affected(
    `INSERT INTO ${ident(table)} (${list}) SELECT ${written.map((col) => `s.${ident(col)}`).join(', ')} FROM ${ident(stage)} AS s WHERE NOT ${marked} AND NOT EXISTS (SELECT 1 FROM ${ident(table)} AS t WHERE ${match})`,
  );
  return { inserted, updated, deleted };
}

/** A first upsert: the staging table, without its deleted rows and marker column and with one row per key, becomes the target. */
async function upsertStageAsTable(c: mysql.Connection, table: string, stage: string, fid: string, spec: UpsertSpec): Promise<void> {
  await prepareUpsertStage(c, stage, fid, spec, `\`${table}\``, null);
  if (spec.deleteMarker) {
    await c.query(`DELETE s FROM ${ident(stage)} AS s WHERE ${markedSql(spec, 's')}`);
    await c.query(`ALTER TABLE ${ident(stage)} DROP COLUMN ${ident(spec.deleteMarker)}`);
  }
}

export async function deliverMysql(config: MysqlConfig, target: MysqlTarget, input: DeliverInput, ctx: ConnectorContext): Promise<DeliveryResult> {
  refuseTls(config);
  const { table } = target;
  const mode = effectiveWriteMode(target.write_mode, input);
  const upsert = upsertSpecOf({ ...target, write_mode: mode });
  const where = `\`${table}\``;
  const what = describeServer(config);
  const { stage, old } = stagingNames(input.deliveryId);
  const mark = deliveryMark(input.deliveryId);
  const result = (count: number, m: WriteMode, counts?: Record<string, number>): DeliveryResult => ({
    target: { database: config.database, table, write_mode: m, ...(counts ?? {}) },
    rows_written: count,
  });

  // MySQL's SPATIAL index needs NOT NULL geometries: ask whether some rows have none.
  const layer = await vectorInput(input, ctx.workDir, { nullGeometries: true });
  // The staging table's key: not a name an attribute already has (GDAL would take it as the key).
  const fid = freeColumnName(layer.fields, 'ogc_fid', 'fid');
  return runStagedDelivery<{ geometryName: string }>({
    prepare: () =>
      withConnection(config, ctx, async (c) => {
        const done = await recorded(c, input.deliveryId);
        if (done) return { done: result(done.rows_written, done.write_mode) };
        const existing = await tableInfo(c, table);
        if (existing?.comment === mark && mode !== 'append') {
          // The rename of an earlier attempt of this delivery happened; its record did not.
          const count = await countRows(c, table);
          await c.query(CREATE_LEDGER);
          await record(c, input.deliveryId, table, mode, count);
          return { done: result(count, mode) };
        }
        if (mode === 'create' && existing) throw targetExists(where, config.database, { table });
        await c.query(CREATE_LEDGER);
        await c.query(`DROP TABLE IF EXISTS ${ident(stage)}`);
        const geometry = existing ? (await columnsOf(c, table)).find((col) => geometryDataTypes.includes(col.type)) : undefined;
        return { done: null, plan: { geometryName: geometry?.name ?? freeColumnName(layer.fields, 'geom', 'geometry') } };
      }),
    load: ({ geometryName }) =>
      ogr2ogrMysql(config, ctx, `Loading ${where}`, [
        '-f',
        'MySQL',
        mysqlDataset(config, [LEDGER]),
        ...stagingLoadArgs(layer, stage, geometryName, fid),
        '-lco',
        'ENGINE=InnoDB',
        // A spatial index needs every geometry present (NOT NULL).
        '-lco',
        `SPATIAL_INDEX=${layer.nullGeometries || layer.nlt === 'NONE' ? 'NO' : 'YES'}`,
      ]),
    swap: ({ geometryName }) =>
      withConnection(config, ctx, async (c) => {
        // One change of this target at a time (two Jobs, or a retry racing its first attempt).
        const lock = `geoflow:${config.database}.${table}`.slice(0, 64);
        const [got] = await rows(c, 'SELECT GET_LOCK(?, 60) AS ok', [lock]);
        if (Number(got?.ok) !== 1) throw new ConnectorError('timeout', `${what}: another delivery to ${where} held it for 60 s`, { table });
        try {
          const done = await recorded(c, input.deliveryId);
          if (done) return result(done.rows_written, done.write_mode);
          if (layer.nlt !== 'NONE') await useEpsg(c, stage, geometryName, layer.epsg);
          const existing = await tableInfo(c, table);
          if (upsert && existing) {
            await c.query('START TRANSACTION');
            try {
              const counts = await upsertRows(c, table, stage, fid, upsert);
              const count = counts.inserted + counts.updated;
              await record(c, input.deliveryId, table, mode, count);
              await c.query('COMMIT');
              return result(count, mode, counts);
            } catch (error) {
              await c.query('ROLLBACK').catch(() => undefined);
              throw error;
            }
          }
          if (mode === 'append' && existing) {
            const stageColumns = (await columnsOf(c, stage)).map((col) => col.name).filter((n) => n !== fid);
            requireColumns(
              where,
              stageColumns,
              (await columnsOf(c, table)).map((col) => col.name),
              (m) => `\`${m}\``,
            );
            await c.query('START TRANSACTION');
            try {
              const list = stageColumns.map(ident).join(', ');
              const [inserted] = await c.query(`INSERT INTO ${ident(table)} (${list}) SELECT ${list} FROM ${ident(stage)}`);
              const count = (inserted as { affectedRows: number }).affectedRows;
              await record(c, input.deliveryId, table, mode, count);
              await c.query('COMMIT');
              return result(count, mode);
            } catch (error) {
              await c.query('ROLLBACK').catch(() => undefined);
              throw error;
            }
          }
          if (mode === 'create' && existing) throw targetExists(where, config.database, { table }, true);
          if (upsert) await upsertStageAsTable(c, table, stage, fid, upsert);
          const count = await countRows(c, stage);
          await c.query(`ALTER TABLE ${ident(stage)} COMMENT = ?`, [mark]);
          if (existing) {
            await c.query(`RENAME TABLE ${ident(table)} TO ${ident(old)}, ${ident(stage)} TO ${ident(table)}`);
            await c.query(`DROP TABLE ${ident(old)}`);
          } else {
            await c.query(`RENAME TABLE ${ident(stage)} TO ${ident(table)}`);
          }
          await renameMetadata(c, stage, table);
          await record(c, input.deliveryId, table, mode, count);
          return result(count, mode, upsert ? { inserted: count, updated: 0, deleted: 0 } : undefined);
        } finally {
          await c.query('SELECT RELEASE_LOCK(?)', [lock]).catch(() => undefined);
        }
      }),
    dropStage: () => cleanupConnection(config, ctx, (c) => c.query(`DROP TABLE IF EXISTS ${ident(stage)}`)),
  });
}
