import oracledb from 'oracledb';
import { ConnectorError, type DeliveryResult } from '../../domain/transfers.js';
import { deliveryTag, effectiveWriteMode, requireColumns, runStagedDelivery, targetExists, type WriteMode } from '../shared/sql/sql-delivery.js';
import { mapColumnNames } from '../shared/sql/sql-names.js';
import { layerColumns, layerExtent, layerRows } from '../shared/sql/sql-rows.js';
import { freeColumnName, vectorInput } from '../shared/files/vector-input.js';
import type { ConnectorContext, DeliverInput } from '../types.js';
import { cleanupConnection, describeServer, rows, withConnection, type OracleConfig } from './client.js';
import { wkbToSdo } from './sdo.js';
import {
  appendStatement,
  createLedger,
  createTable,
  dropVersion,
  geomMetadataInsert,
  ident,
  insertStatement,
  LEDGER,
  spatialIndex,
  switchSynonym,
  VERSION_PREFIX,
  versionTable,
  type StageColumn,
} from './sql.js';
import type { SqlTarget } from '../shared/sql/definition.js';

/*
 * Delivery into an Oracle table of the connecting user's schema (USER_SDO_GEOM_METADATA, where
 * Oracle keeps a spatial column's bounds and SRID, is written by a table's owner only). Oracle's
 * DDL commits on its own, so two tables cannot be renamed in one transaction; `replace` therefore
 * switches a synonym instead:
 *   every delivery loads a new table `_GEOFLOW_V_<tag>` (executeMany with array binding, 5,000
 *   rows a round trip, SDO_GEOMETRY objects built from the output's WKB), with its metadata row
 *   and spatial index, before the target is touched;
 *   replace  CREATE OR REPLACE SYNONYM target FOR _GEOFLOW_V_<tag>: one dictionary change, so a
 *            query reads the old version or the new one, both complete and indexed; the grants of
 *            the old version are given to the new one first; the old version is kept until the
 *            next replace (Oracle lets a DROP run under a reading query, which would then fail) and
 *            the versions before it are dropped;
 *   append   the new rows inserted into the target and the delivery recorded in one transaction;
 *   create   the synonym created; an existing target is target_exists.
 * A target that is a table of the user's own (not a synonym made here) can be appended to, not
 * replaced: the first replace would need a moment without the name. A retry finds its work by
 * the delivery ledger, or by the synonym already pointing at its own version.
 */

export type OracleTarget = SqlTarget;

const BATCH = 5_000;

type Kind = 'synonym' | 'table' | null;

export async function deliverOracle(config: OracleConfig, target: OracleTarget, input: DeliverInput, ctx: ConnectorContext): Promise<DeliveryResult> {
  const { table } = target;
  const mode = effectiveWriteMode(target.write_mode, input);
  const what = describeServer(config);
  const where = ident(table);
  const tag = deliveryTag(input.deliveryId);
  const version = versionTable(tag);
  const result = (n: number, m: WriteMode): DeliveryResult => ({ target: { table, write_mode: m }, rows_written: n });

  const kindOf = async (c: oracledb.Connection): Promise<{ kind: Kind; points: string | null }> => {
    const syn = await rows(c, 'SELECT table_name FROM user_synonyms WHERE synonym_name = :t', { t: table });
    if (syn.length) return { kind: 'synonym', points: String(syn[0]![0]) };
    const tab = await rows(c, `SELECT 1 FROM user_objects WHERE object_name = :t AND object_type IN ('TABLE', 'VIEW')`, { t: table });
    return { kind: tab.length ? 'table' : null, points: null };
  };
  const recorded = async (c: oracledb.Connection) => {
    if (!(await rows(c, 'SELECT 1 FROM user_tables WHERE table_name = :t', { t: LEDGER })).length) return null;
    const r = await rows(c, `SELECT rows_written, write_mode FROM ${ident(LEDGER)} WHERE delivery_id = :id`, { id: input.deliveryId });
    return r[0] ? result(Number(r[0][0]), r[0][1] as WriteMode) : null;
  };
  const record = (c: oracledb.Connection, n: number) =>
    c.execute(`INSERT INTO ${ident(LEDGER)} (delivery_id, target_table, write_mode, rows_written) VALUES (:1, :2, :3, :4)`, [input.deliveryId, table, mode, n]);
  const count = async (c: oracledb.Connection, t: string) => Number((await rows(c, `SELECT COUNT(*) FROM ${ident(t)}`))[0]![0]);

  const layer = await vectorInput(input, ctx.workDir);
  const fields = await layerColumns(layer);
  const hasGeometry = layer.nlt !== 'NONE';

  return runStagedDelivery<{ geometry: string; columns: StageColumn[]; targetSrid: number | null }>({
    prepare: () =>
      withConnection(config, ctx, async (c) => {
        const done = await recorded(c);
        if (done) return { done };
        const found = await kindOf(c);
        if (found.kind === 'synonym' && found.points === version && mode !== 'append') {
          // The switch of an earlier attempt of this delivery happened; its record did not.
          const n = await count(c, version);
          await record(c, n);
          await c.commit();
          return { done: result(n, mode) };
        }
        if (mode === 'create' && found.kind) throw targetExists(where, config.service_name ?? config.connect_string ?? '', { table });
        if (mode === 'replace' && found.kind === 'table') {
          throw new ConnectorError(
            'invalid_data',
            `${what}: ${where} is a table of its own, which Oracle cannot swap atomically (its DDL commits statement by statement); replace works on the synonym a first delivery creates: rename or drop ${where} once, or use write_mode append`,
            { table },
            false,
          );
        }
        if (!(await rows(c, 'SELECT 1 FROM user_tables WHERE table_name = :t', { t: LEDGER })).length) {
          await c.execute(createLedger).catch((error: { code?: string }) => {
            // Two first deliveries at once: the other one created it.
            if (error.code !== 'ORA-00955') throw error;
          });
        }
        // Left by an interrupted attempt of this same delivery.
        for (const s of dropVersion(version)) await c.execute(s).catch(() => undefined);
        await c.commit();
        let geometry = freeColumnName(layer.fields, 'GEOM', 'GEOMETRY');
        let targetSrid: number | null = null;
        if (found.kind) {
          const base = found.points ?? table;
          const g = await rows(c, `SELECT column_name FROM user_tab_columns WHERE table_name = :t AND data_type = 'SDO_GEOMETRY' ORDER BY column_id`, {
            t: base,
          });
          if (g[0]) {
            geometry = String(g[0][0]);
            const s = await rows(c, `SELECT t.${ident(geometry)}.SDO_SRID FROM ${ident(base)} t WHERE t.${ident(geometry)} IS NOT NULL AND ROWNUM = 1`);
            targetSrid = s[0]?.[0] === null || s[0]?.[0] === undefined ? null : Number(s[0][0]);
          }
        }
        const names = mapColumnNames(
          fields.map((f) => f.name),
          { maxLength: 128, unit: 'bytes', upperCasePlain: true },
          [geometry],
        );
        return { done: null, plan: { geometry, targetSrid, columns: fields.map((f, i) => ({ name: names[i]!, kind: f.kind, maxBytes: f.maxBytes })) } };
      }),
    load: ({ geometry, columns }) =>
      withConnection(config, ctx, async (c) => {
        await c.execute(createTable(version, columns, hasGeometry ? geometry : null));
        const Sdo = hasGeometry ? await c.getDbObjectClass('MDSYS.SDO_GEOMETRY') : null;
        const bindDefs: oracledb.BindDefinition[] = columns.map((col) => {
          if (col.kind === 'integer' || col.kind === 'real' || col.kind === 'boolean') return { type: oracledb.NUMBER };
          if (col.kind === 'binary') return { type: oracledb.DB_TYPE_RAW, maxSize: 32767 };
          if (col.kind === 'date' || col.kind === 'datetime') return { type: oracledb.STRING, maxSize: 40 };
          return { type: oracledb.STRING, maxSize: Math.max(1, Math.min(col.maxBytes, 32767)) };
        });
        // A DbObject class is node-oracledb's documented bind type for objects; @types/oracledb 7 types only DbType here.
        if (Sdo) bindDefs.push({ type: Sdo as unknown as oracledb.DbType });
        const sql = insertStatement(version, columns, hasGeometry ? geometry : null);
        const bindValue = (value: unknown, kind: StageColumn['kind']): unknown => {
          if (value === null || value === undefined) return null;
          if (kind === 'date') return (value as Date).toISOString().slice(0, 10);
          if (kind === 'datetime') return (value as Date).toISOString().replace('Z', '');
          if (kind === 'time') return (value as Date).toISOString().slice(11, 23);
          if (kind === 'boolean') return value ? 1 : 0;
          if (kind === 'integer') return Number(value);
          return value;
        };
        let batch: unknown[][] = [];
        let loaded = 0;
        const flush = async () => {
          if (!batch.length) return;
          // Committed batch by batch: a direct-path (APPEND_VALUES) insert must commit before the next one
          // touches the table, and the version table is nobody else's until the switch.
          await c.executeMany(sql, batch, { bindDefs, autoCommit: true, batchErrors: false });
          loaded += batch.length;
          batch = [];
          ctx.progress?.({ features: loaded });
        };
        for await (const row of layerRows(layer, fields)) {
          const values = columns.map((col, i) => bindValue(row[i], col.kind));
          if (Sdo) {
            const wkb = row[columns.length] as Buffer | null;
            const sdo = wkb ? wkbToSdo(wkb, layer.epsg) : null;
            values.push(sdo ? new Sdo(sdo) : null);
          }
          batch.push(values);
          if (batch.length >= BATCH) await flush();
        }
        await flush();
        await c.commit();
        if (hasGeometry) {
          const geodetic =
            layer.epsg !== null && (await rows(c, `SELECT 1 FROM mdsys.cs_srs WHERE srid = :s AND wktext LIKE 'GEOGCS%'`, { s: layer.epsg })).length > 0;
          await c.execute(geomMetadataInsert(version, geometry, layer.epsg, geodetic, await layerExtent(layer), layer.z));
          await c.commit();
          await c.execute(spatialIndex(version, geometry, tag, Number(c.oracleServerVersion ?? 0)));
        }
      }),
    swap: ({ geometry, columns, targetSrid }) =>
      withConnection(config, ctx, async (c) => {
        const done = await recorded(c);
        if (done) return done;
        const found = await kindOf(c);
        const n = await count(c, version);
        if (mode === 'append' && found.kind) {
          const base = found.points ?? table;
          const targetColumns = (await rows(c, 'SELECT column_name FROM user_tab_columns WHERE table_name = :t', { t: base })).map((r) => String(r[0]));
          requireColumns(where, [...columns.map((col) => col.name), ...(hasGeometry ? [geometry] : [])], targetColumns, ident);
          const transformTo = hasGeometry && targetSrid !== null && layer.epsg !== null && targetSrid !== layer.epsg ? targetSrid : null;
          const inserted = await c.execute(
            appendStatement(
              table,
              version,
              columns.map((col) => col.name),
              hasGeometry ? { name: geometry, transformTo } : null,
            ),
          );
          await record(c, inserted.rowsAffected ?? n);
          await c.commit();
          return result(inserted.rowsAffected ?? n, mode);
        }
        if (mode === 'create' && found.kind) throw targetExists(where, config.service_name ?? config.connect_string ?? '', { table }, true);
        if (found.kind === 'synonym' && found.points) {
          // The readers of the old version keep reading the new one.
          const grants = await rows(c, 'SELECT grantee, privilege, grantable FROM user_tab_privs_made WHERE table_name = :t', { t: found.points });
          for (const [grantee, privilege, grantable] of grants) {
            await c.execute(`GRANT ${String(privilege)} ON ${ident(version)} TO ${ident(String(grantee))}${grantable === 'YES' ? ' WITH GRANT OPTION' : ''}`);
          }
        }
        await c.execute(switchSynonym(table, version));
        await record(c, n);
        await c.commit();
        // Versions no synonym points to any more, except the one just replaced, go.
        const keep = new Set([version, found.points]);
        const referenced = new Set((await rows(c, 'SELECT table_name FROM user_synonyms')).map((r) => String(r[0])));
        const stale = (await rows(c, `SELECT table_name FROM user_tables WHERE table_name LIKE '\\_GEOFLOW\\_V\\_%' ESCAPE '\\'`)).map((r) => String(r[0]));
        for (const old of stale.filter((t) => !keep.has(t) && !referenced.has(t) && t.startsWith(VERSION_PREFIX))) {
          for (const s of dropVersion(old)) await c.execute(s).catch(() => undefined);
        }
        await c.commit();
        return result(n, mode);
      }),
    // The new version stays when a synonym points to it; otherwise (append, failure) it is dropped.
    dropStage: () =>
      cleanupConnection(config, ctx, async (c) => {
        if ((await rows(c, 'SELECT 1 FROM user_synonyms WHERE table_name = :v', { v: version })).length) return;
        for (const s of dropVersion(version)) await c.execute(s).catch(() => undefined);
        await c.commit();
      }),
  });
}
