import type pg from 'pg';
import { DELETE_MARKER_VALUES, keysMissing, requireColumns, upsertColumns, type UpsertSpec } from '../shared/sql/sql-delivery.js';
import { geometryColumnOf } from './catalog.js';
import { ident, literal, pgName, qualified } from './client.js';

/*
 * What a PostGIS delivery does with the staging table's rows when the target exists already:
 * append them, or upsert them by key. Both run inside the swap's transaction (deliver.ts), so the
 * target and the delivery ledger change together or not at all.
 */

interface Column {
  name: string;
  /** format_type() of the column: what a value compared with it is cast to. */
  type: string;
}

export async function columnsOf(client: pg.Client, schema: string, table: string): Promise<Column[]> {
  const r = await client.query<Column>(
    'SELECT attname AS name, format_type(atttypid, atttypmod) AS type FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum',
    [qualified(schema, table)],
  );
  return r.rows;
}

const quote = (m: string) => `"${m}"`;

/** The staging columns as the target takes them: the geometry reprojected to the target's SRID and promoted to multi when the target is. */
async function valuesFor(client: pg.Client, schema: string, table: string, stage: string, columns: string[], alias = ''): Promise<string[]> {
  const targetGeometry = await geometryColumnOf(client, schema, table);
  const stageGeometry = await geometryColumnOf(client, schema, stage);
  const prefix = alias ? `${alias}.` : '';
  return columns.map((c) => {
    let expr = `${prefix}${ident(c)}`;
    if (!stageGeometry || c !== stageGeometry.column || !targetGeometry) return expr;
    if (targetGeometry.srid > 0 && stageGeometry.srid > 0 && targetGeometry.srid !== stageGeometry.srid) expr = `ST_Transform(${expr}, ${targetGeometry.srid})`;
    if (/^MULTI/i.test(targetGeometry.type) && !/^MULTI/i.test(stageGeometry.type)) expr = `ST_Multi(${expr})`;
    return expr;
  });
}

/** INSERT … SELECT from the staging table into an existing target, matching columns by name. */
export async function appendRows(client: pg.Client, schema: string, table: string, stage: string, fid: string): Promise<number> {
  const targetColumns = (await columnsOf(client, schema, table)).map((c) => c.name);
  const stageColumns = (await columnsOf(client, schema, stage)).map((c) => c.name).filter((c) => c !== fid);
  requireColumns(`"${schema}"."${table}"`, stageColumns, targetColumns, quote);
  const select = await valuesFor(client, schema, table, stage, stageColumns);
  const r = await client.query(
    `INSERT INTO ${qualified(schema, table)} (${stageColumns.map(ident).join(', ')}) SELECT ${select.join(', ')} FROM ${qualified(schema, stage)}`,
  );
  return r.rowCount ?? 0;
}

/** Whether a staging row's marker says "delete", as SQL (false without a marker). */
const markedSql = (spec: UpsertSpec, alias: string) =>
  spec.deleteMarker ? `coalesce(lower(${alias}.${ident(spec.deleteMarker)}::text) IN (${DELETE_MARKER_VALUES.map(literal).join(', ')}), false)` : 'false';

/**
 * Prepares the staging table of an upsert: refuses rows without a key, and keeps only the last
 * row of each key (the highest staging id: the latest in the output). Returns the columns the
 * target receives (without the staging id and the marker).
 */
async function prepareUpsertStage(
  client: pg.Client,
  schema: string,
  stage: string,
  fid: string,
  spec: UpsertSpec,
  where: string,
  targetColumns: string[] | null,
) {
  const stageColumns = (await columnsOf(client, schema, stage)).map((c) => c.name).filter((c) => c !== fid);
  const written = upsertColumns(where, spec, stageColumns, targetColumns, quote);
  const st = qualified(schema, stage);
  const noKey = Number(
    (await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${st} WHERE ${spec.keys.map((k) => `${ident(k)} IS NULL`).join(' OR ')}`)).rows[0]!.n,
  );
  if (noKey > 0) throw keysMissing(where, noKey, spec.keys, quote);
  const keys = spec.keys.map(ident).join(', ');
  await client.query(
    `DELETE FROM ${st} WHERE ${ident(fid)} IN (SELECT ${ident(fid)} FROM (SELECT ${ident(fid)}, row_number() OVER (PARTITION BY ${keys} ORDER BY ${ident(fid)} DESC) AS n FROM ${st}) AS r WHERE n > 1)`,
  );
  return written;
}

export interface UpsertCounts {
  inserted: number;
  updated: number;
  deleted: number;
}

/**
 * Upserts the staging rows into an existing target: rows marked deleted remove the target rows
 * with their key, the others update the rows with their key (all of them, should the target
 * hold several) or are inserted. Keys are compared in the target column's type.
 */
export async function upsertRows(client: pg.Client, schema: string, table: string, stage: string, fid: string, spec: UpsertSpec): Promise<UpsertCounts> {
  const where = `"${schema}"."${table}"`;
  const target = await columnsOf(client, schema, table);
  const written = await prepareUpsertStage(
    client,
    schema,
    stage,
    fid,
    spec,
    where,
    target.map((c) => c.name),
  );
  const typeOf = new Map(target.map((c) => [c.name, c.type]));
  const t = qualified(schema, table);
  const st = qualified(schema, stage);
  const match = spec.keys.map((k) => `t.${ident(k)} = (s.${ident(k)})::${typeOf.get(k)}`).join(' AND ');
  const marked = markedSql(spec, 's');
  const values = await valuesFor(client, schema, table, stage, written, 's');
  const deleted = spec.deleteMarker ? ((await client.query(`DELETE FROM ${t} AS t USING ${st} AS s WHERE ${match} AND ${marked}`)).rowCount ?? 0) : 0;
  const assigned = written.map((c, i) => ({ c, v: values[i]! })).filter(({ c }) => !spec.keys.includes(c));
  const updated = assigned.length
    ? ((
        await client.query(
          `UPDATE ${t} AS t SET ${assigned.map(({ c, v }) => `${ident(c)} = ${v}`).join(', ')} FROM ${st} AS s WHERE ${match} AND NOT ${marked}`,
        )
      ).rowCount ?? 0)
    : Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${t} AS t JOIN ${st} AS s ON ${match} WHERE NOT ${marked}`)).rows[0]!.n);
  const inserted =
    (
      await client.query(
        `INSERT INTO ${t} (${written.map(ident).join(', ')}) SELECT ${values.join(', ')} FROM ${st} AS s WHERE NOT ${marked} AND NOT EXISTS (SELECT 1 FROM ${t} AS t WHERE ${match})`,
      )
    ).rowCount ?? 0;
  return { inserted, updated, deleted };
}

/**
 * The staging table of an upsert whose target does not exist yet becomes the target: rows marked
 * deleted go (there is nothing to delete), the marker column goes, one row per key stays, and a
 * unique index on the keys is built for the upserts that follow. Returns the rows left.
 */
export async function upsertIntoNewTable(client: pg.Client, schema: string, table: string, stage: string, fid: string, spec: UpsertSpec): Promise<number> {
  const where = `"${schema}"."${table}"`;
  await prepareUpsertStage(client, schema, stage, fid, spec, where, null);
  const st = qualified(schema, stage);
  if (spec.deleteMarker) {
    await client.query(`DELETE FROM ${st} AS s WHERE ${markedSql(spec, 's')}`);
    await client.query(`ALTER TABLE ${st} DROP COLUMN ${ident(spec.deleteMarker)}`);
  }
  await client.query(`CREATE UNIQUE INDEX ${ident(pgName(`${stage}_key`))} ON ${st} (${spec.keys.map(ident).join(', ')})`);
  return Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${st}`)).rows[0]!.n);
}
