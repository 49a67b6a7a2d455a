import path from 'node:path';
import { ConnectorError, type DeliveryResult } from '../../domain/transfers.js';
import { writeLayerCsv, type ColumnKind } from '../shared/sql/table-csv.js';
import { deliveryMark, deliveryTag, INTERNAL_PREFIX, LEDGER } from '../shared/sql/sql-delivery.js';
import { freeColumnName, vectorInput } from '../shared/files/vector-input.js';
import type { ConnectorContext, DeliverInput } from '../types.js';
import { describeServer, ident, literal, withSession, type Session, type SnowflakeConfig } from './client.js';
import type { SqlTarget } from '../shared/sql/definition.js';

/*
 * Delivery into a Snowflake table, in bulk: the output is written as CSV (geometry as WKT first),
 * PUT to a temporary internal stage and loaded with ONE `COPY INTO` into a raw table, from which
 * `CREATE TABLE … AS SELECT TO_GEOGRAPHY(…) / TO_GEOMETRY(…, srid)` builds the new table. Then:
 *   replace  `ALTER TABLE target SWAP WITH new` (one atomic metadata change: readers see the old
 *            table or the new one, never none) and the old contents are dropped; a missing target
 *            is renamed into place;
 *   append   `INSERT INTO target … SELECT` (columns matched by name) and the delivery's record in
 *            one transaction; a missing target is created;
 *   create   the new table renamed to the target; an existing target is target_exists.
 * DDL commits on its own in Snowflake, so a swapped-in or renamed table carries the delivery's
 * mark in its comment; a retry that finds its mark on the target only records the delivery.
 * `_geoflow_deliveries` in the target schema records every delivery id.
 */

export type WriteMode = 'replace' | 'append' | 'create';
export type SpatialType = 'auto' | 'geography' | 'geometry';
export type SnowflakeTarget = SqlTarget<{ spatial_type: SpatialType }>;

export { INTERNAL_PREFIX };

/** Column kinds → Snowflake types of a new table. */
const snowflakeTypes: Record<ColumnKind, string> = {
  integer: 'NUMBER(38, 0)',
  real: 'FLOAT',
  string: 'VARCHAR',
  boolean: 'BOOLEAN',
  date: 'DATE',
  datetime: 'TIMESTAMP_NTZ',
  time: 'TIME',
  binary: 'VARCHAR',
};

/** Snowflake takes any quoted name of up to 255 characters: longer ones are cut, and names equal after that get `_2`, `_3` … */
export function snowflakeColumnNames(names: string[]): string[] {
  const taken = new Set<string>();
  return names.map((original) => {
    const name = [...original].slice(0, 255).join('');
    let unique = name;
    for (let n = 2; taken.has(unique); n++) unique = `${[...name].slice(0, 255 - String(n).length - 1).join('')}_${n}`;
    taken.add(unique);
    return unique;
  });
}

/** GEOGRAPHY for WGS 84 data (and when asked), GEOMETRY with the layer's SRID otherwise. */
export function spatialColumn(requested: SpatialType, epsg: number | null): { type: 'GEOGRAPHY' | 'GEOMETRY'; srid: number } {
  if (requested === 'geography' || (requested === 'auto' && epsg === 4326)) return { type: 'GEOGRAPHY', srid: 4326 };
  return { type: 'GEOMETRY', srid: epsg ?? 0 };
}

const countRows = async (s: Session, table: string) => Number((await s.query(`SELECT COUNT(*) AS N FROM ${ident(table)}`))[0]!.N);

async function tableInfo(s: Session, config: SnowflakeConfig, table: string): Promise<{ comment: string } | null> {
  const [row] = await s.query('SELECT COMMENT FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?', [config.schema, table]);
  return row ? { comment: String(row.COMMENT ?? '') } : null;
}

async function columnsOf(s: Session, config: SnowflakeConfig, table: string): Promise<string[]> {
  const rows = await s.query('SELECT COLUMN_NAME FROM INFORMATION_SCHEMA.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION', [
    config.schema,
    table,
  ]);
  return rows.map((r) => String(r.COLUMN_NAME));
}

export async function deliverSnowflake(config: SnowflakeConfig, target: SnowflakeTarget, input: DeliverInput, ctx: ConnectorContext): Promise<DeliveryResult> {
  const { table } = target;
  const requested: WriteMode = input.reinitialize && target.write_mode === 'append' ? 'replace' : target.write_mode;
  const id = deliveryTag(input.deliveryId);
  const names = { stage: `${INTERNAL_PREFIX}stage_${id}`, raw: `${INTERNAL_PREFIX}raw_${id}`, next: `${INTERNAL_PREFIX}new_${id}` };
  const mark = deliveryMark(input.deliveryId);
  const where = `${config.schema}.${table}`;

  const layer = await vectorInput(input, ctx.workDir);
  const column = layer.base !== 100 ? spatialColumn(target.spatial_type, layer.epsg) : null;
  const reprojected =
    column?.type === 'GEOGRAPHY' && layer.epsg !== 4326 ? { from: layer.epsg ? `EPSG:${layer.epsg}` : 'the layer CRS', to: 'EPSG:4326' } : null;
  const result = (rows: number, mode: WriteMode): DeliveryResult => ({
    target: {
      database: config.database,
      schema: config.schema,
      table,
      write_mode: mode,
      ...(column ? { geometry_type: column.type, srid: column.srid } : {}),
      ...(reprojected ? { reprojected } : {}),
    },
    rows_written: rows,
  });
  const columnNames = snowflakeColumnNames(layer.fields);
  const geometryName = freeColumnName(columnNames, 'geom', 'geometry');
  const csv = path.join(ctx.workDir, `${id}.csv`);
  const written = await writeLayerCsv(layer, csv, { ...(column?.type === 'GEOGRAPHY' ? { targetEpsg: 4326 } : {}), geometryName }, ctx);

  return withSession(config, ctx, async (s) => {
    await s.query(
      `CREATE TABLE IF NOT EXISTS ${ident(LEDGER)} (delivery_id VARCHAR PRIMARY KEY, target_table VARCHAR NOT NULL, write_mode VARCHAR NOT NULL, rows_written NUMBER(38, 0) NOT NULL, delivered_at TIMESTAMP_NTZ DEFAULT CURRENT_TIMESTAMP())`,
    );
    const record = (mode: WriteMode, rows: number) =>
      s.query(`INSERT INTO ${ident(LEDGER)} (delivery_id, target_table, write_mode, rows_written) VALUES (?, ?, ?, ?)`, [input.deliveryId, table, mode, rows]);
    const [done] = await s.query(`SELECT rows_written AS ROWS_WRITTEN, write_mode AS WRITE_MODE FROM ${ident(LEDGER)} WHERE delivery_id = ?`, [
      input.deliveryId,
    ]);
    if (done) return result(Number(done.ROWS_WRITTEN), String(done.WRITE_MODE) as WriteMode);
    const existing = await tableInfo(s, config, table);
    if (existing?.comment === mark && requested !== 'append') {
      // The swap or rename of an earlier attempt of this delivery happened; its record did not.
      const rows = await countRows(s, table);
      await record(requested, rows);
      return result(rows, requested);
    }
    if (requested === 'create' && existing)
      throw new ConnectorError(
        'target_exists',
        `${where} already exists in database ${config.database} (write_mode create never overwrites)`,
        { table },
        false,
      );
    const mode: WriteMode = requested === 'append' && !existing ? 'create' : requested;

    const attributes = written.columns.map((c, i) => ({ name: columnNames[i]!, type: snowflakeTypes[c.kind] }));
    const cleanup = async () => {
      for (const t of [names.raw, names.next]) await s.query(`DROP TABLE IF EXISTS ${ident(t)}`).catch(() => undefined);
      await s.query(`DROP STAGE IF EXISTS ${ident(names.stage)}`).catch(() => undefined);
    };
    try {
      // Bulk load: PUT to a temporary stage, one COPY INTO the raw table (geometry as text).
      await s.query(`CREATE OR REPLACE TEMPORARY STAGE ${ident(names.stage)}`);
      const put = await s.query(`PUT ${literal(`file://${csv}`)} @${ident(names.stage)} AUTO_COMPRESS = TRUE OVERWRITE = TRUE`);
      const failed = put.find((r) => !['UPLOADED', 'SKIPPED'].includes(String(r.status ?? r.STATUS ?? '').toUpperCase()));
      if (failed)
        throw new ConnectorError(
          'server_error',
          `${describeServer(config)}: uploading the load file to the stage failed (${String(failed.message ?? failed.status ?? 'no status')})`,
          { table },
        );
      const rawColumns = [...(column ? [`${ident(geometryName)} VARCHAR`] : []), ...attributes.map((a) => `${ident(a.name)} ${a.type}`)];
      await s.query(`CREATE OR REPLACE TABLE ${ident(names.raw)} (${rawColumns.join(', ')})`);
      await s.query(
        `COPY INTO ${ident(names.raw)} FROM @${ident(names.stage)} FILE_FORMAT = (TYPE = CSV SKIP_HEADER = 1 FIELD_OPTIONALLY_ENCLOSED_BY = '"' EMPTY_FIELD_AS_NULL = TRUE) ON_ERROR = ABORT_STATEMENT PURGE = TRUE`,
      );
      const spatialValue = column
        ? column.type === 'GEOGRAPHY'
          ? `TO_GEOGRAPHY(${ident(geometryName)})`
          : `TO_GEOMETRY(${ident(geometryName)}, ${column.srid})`
        : null;
      const select = [...(spatialValue ? [`${spatialValue} AS ${ident(geometryName)}`] : []), ...attributes.map((a) => ident(a.name))].join(', ');
      await s.query(`CREATE OR REPLACE TABLE ${ident(names.next)} AS SELECT ${select} FROM ${ident(names.raw)}`);
      const rows = await countRows(s, names.next);

      if (mode === 'append') {
        const have = new Set((await columnsOf(s, config, table)).map((n) => n));
        const mine = [...(column ? [geometryName] : []), ...attributes.map((a) => a.name)];
        const missing = mine.filter((n) => !have.has(n));
        if (missing.length)
          throw new ConnectorError(
            'invalid_data',
            `${where} has no column ${missing.join(', ')} of the output (append matches columns by name, case-sensitively)`,
            { missing },
            false,
          );
        const list = mine.map(ident).join(', ');
        await s.query('BEGIN');
        try {
          await s.query(`INSERT INTO ${ident(table)} (${list}) SELECT ${list} FROM ${ident(names.next)}`);
          await record('append', rows);
          await s.query('COMMIT');
        } catch (error) {
          await s.query('ROLLBACK').catch(() => undefined);
          throw error;
        }
        return result(rows, 'append');
      }

      await s.query(`COMMENT ON TABLE ${ident(names.next)} IS ${literal(mark)}`);
      if (mode === 'replace' && existing) {
        await s.query(`ALTER TABLE ${ident(table)} SWAP WITH ${ident(names.next)}`);
      } else {
        try {
          await s.query(`ALTER TABLE ${ident(names.next)} RENAME TO ${ident(table)}`);
        } catch (error) {
          const code = String((error as { data?: { errorCode?: unknown }; code?: unknown }).data?.errorCode ?? (error as { code?: unknown }).code ?? '');
          if (code === '002002')
            throw new ConnectorError('target_exists', `${where} already exists in database ${config.database} (created meanwhile)`, { table }, false);
          throw error;
        }
      }
      await record(mode, rows);
      return result(rows, mode);
    } finally {
      await cleanup();
    }
  });
}
