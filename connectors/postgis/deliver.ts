import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { ConnectorError, type DeliveryResult } from '../../domain/transfers.js';
import {
  effectiveWriteMode,
  runStagedDelivery,
  stagingLayerArgs,
  stagingLoadArgs,
  stagingNames,
  targetExists,
  upsertSpecOf,
  type WriteMode,
} from '../shared/sql/sql-delivery.js';
import { freeColumnName, vectorInput } from '../shared/files/vector-input.js';
import type { ConnectorContext, DeliverInput } from '../types.js';
import { schemaMissing } from './catalog.js';
import {
  classifyPg,
  CONNECT_TIMEOUT_MS,
  describeServer,
  ident,
  literal,
  onClient,
  pgName,
  qualified,
  triedOf,
  withClient,
  type PostgisConfig,
} from './client.js';
import { deliveryFacts, dropLeftovers, ensureLedger, record, recorded } from './ledger.js';
import { libpqFor, ogr2ogrPg, pgLabel } from './ogr.js';
import { borrow, giveBack } from './pool.js';
import { appendRows, upsertIntoNewTable, upsertRows, type UpsertCounts } from './rows.js';
import { copyGrants, relationExists, renameDependents, spatialIndexSql } from './swap.js';
import { translateHere } from '../shared/files/translate-here.js';
import type { SqlUpsertTarget } from '../shared/sql/definition.js';

/*
 * Delivery into a PostGIS table. Every write mode first loads the output into a staging table of
 * its own in the target schema (ogr2ogr, committed before anything else happens), then changes the
 * target in ONE short transaction:
 *   replace  the target is renamed away, the staging table renamed in its place, the old one
 *            dropped (its privileges are granted to the new one first);
 *   append   the staging rows are inserted into the target (created like `create` when missing);
 *   create   the staging table is renamed to the target; an existing target is target_exists.
 * Readers therefore never see an empty, missing or half-written target: a rename waits for running
 * readers, and a reader queued behind it reads the new table once the swap commits. A failed load
 * never touches the target. The same transaction records the delivery id in
 * "<schema>"."_geoflow_deliveries", so a retried or resumed delivery finds its id and writes
 * nothing twice.
 *
 * Each attempt of a delivery loads into a staging table of its own (the delivery's tag plus a
 * suffix of the attempt): an earlier attempt whose worker was cut off the network mid-load may
 * still hold its table (PostgreSQL keeps the cut-off session, and its locks, until TCP gives up,
 * hours later), and a retry loading under the same name would wait for it that long. Leftovers of
 * earlier attempts are dropped when nothing holds them.
 */

export type { WriteMode };

/**
 * Up to this many features (as the input says), the checks' connection stays open through the
 * load for the swap and the cleanup: a one-row delivery connected three times (about a tenth of
 * its time, docs/decisions.md "cheaper Runs"). A larger load hands it back to the idle ones
 * (./pool.ts: another delivery may use it meanwhile) and takes one again afterwards, rather than
 * hold a connection idle for as long as the load takes.
 */
const KEEP_CONNECTION_FEATURES = 100_000;
export type PostgisTarget = SqlUpsertTarget<{ schema: string }>;

export { pgName };

export async function deliverPostgis(config: PostgisConfig, target: PostgisTarget, input: DeliverInput, ctx: ConnectorContext): Promise<DeliveryResult> {
  const { schema, table } = target;
  // Reinitialising an incremental Job rebuilds the table (staged and swapped) instead of appending.
  const mode = effectiveWriteMode(target.write_mode, input);
  const upsert = upsertSpecOf({ ...target, write_mode: mode });
  const where = `"${schema}"."${table}"`;
  const what = describeServer(config);
  const { stage: stagePrefix, old } = stagingNames(input.deliveryId);
  // This attempt's own staging table (see the comment at the top).
  const stage = `${stagePrefix}_${randomBytes(3).toString('hex')}`;
  const result = (rows: number, m: WriteMode, counts?: UpsertCounts): DeliveryResult => ({
    target: { schema, table, write_mode: m, ...(counts ?? {}) },
    rows_written: rows,
  });

  const layer = await vectorInput(input, ctx.workDir);
  // The staging table's key: not a name an attribute already has (GDAL would take it as the key).
  const fid = freeColumnName(layer.fields, 'ogc_fid', 'fid');
  const small = layer.features !== null && layer.features <= KEEP_CONNECTION_FEATURES;
  let kept: pg.Client | null = null;
  /** The server process of a statement a cancellation cut off (its socket closed; the server may not notice). */
  let orphan: number | null = null;
  /** Closes the kept connection: a statement on it failed or was cut off. */
  const release = async () => {
    const client = kept;
    kept = null;
    await client?.end().catch(() => undefined);
  };
  /** The kept connection, clean (every statement on it succeeded), back for the next delivery into this database. */
  const handBack = async () => {
    if (ctx.signal.aborted) return release();
    const client = kept;
    kept = null;
    if (client) giveBack(config, client);
  };
  /** fn on the kept connection, or an idle or new one (kept for the next call of a small delivery). */
  const session = async <T>(fn: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = kept ?? (await borrow(config, ctx));
    kept = client;
    try {
      return await onClient(config, ctx, client, fn);
    } catch (error) {
      const pid = (client as pg.Client & { processID?: number }).processID;
      if (ctx.signal.aborted && pid) orphan = pid;
      await release();
      throw error;
    }
  };
  let swapped = false;
  try {
    return await runStagedDelivery<{ geometryName: string; indexed: boolean }>({
      // Checks, and the geometry column name to keep, before any data moves.
      prepare: () =>
        session(async (client) => {
          const facts = await deliveryFacts(client, schema, table, input.deliveryId, stagePrefix);
          if (!facts.schema) throw schemaMissing(schema, config.database);
          if (facts.leftovers.length) await dropLeftovers(client, schema, facts.leftovers);
          if (facts.done) return { done: result(facts.done.rows_written, facts.done.write_mode) };
          // Without PostGIS, GDAL would quietly write the geometry as bytea, which no GIS reads as a layer.
          if (layer.nlt !== 'NONE' && !facts.postgis) {
            throw new ConnectorError(
              'not_found',
              `${what}: PostGIS is not installed in database ${config.database}, and the layer has geometry; install it there (CREATE EXTENSION postgis, as a role allowed to) or deliver to a database that has it`,
              { ...triedOf(config), schema, table },
              false,
            );
          }
          if (mode === 'create' && facts.exists) throw targetExists(where, config.database, { schema, table });
          if (!facts.ledger) await ensureLedger(client, schema);
          const geometryName = facts.geometry?.column ?? freeColumnName(layer.fields, 'geom', 'geometry');
          // Rows appended to an existing target go through its own index; a staging table that
          // becomes the target gets one.
          const indexed = layer.nlt !== 'NONE' && !((mode === 'append' || mode === 'upsert') && facts.exists);
          return { done: null, plan: { geometryName, indexed } };
        }),
      load: async ({ geometryName, indexed }) => {
        if (!small) await handBack();
        const libpq = await libpqFor(config, ctx);
        const loading = `Loading ${where}`;
        // GDAL creates the spatial index with the table, before the rows, and every row then
        // updates it: 1M points took 5.6 s that way, 1.5 s without the index and 0.9 s to build
        // it afterwards (docs/decisions.md). So the index comes after the rows.
        const tableOptions = ['-lco', `SCHEMA=${schema}`, '-lco', 'SPATIAL_INDEX=NONE'];
        try {
          // A small layer is loaded by ogr2ogr's library call in this process: no program to start.
          const here = {
            destination: libpq.dataset,
            source: layer.ref,
            features: layer.features,
            args: ['-f', 'PostgreSQL', ...stagingLayerArgs(layer, stage, geometryName, fid), ...tableOptions],
            label: pgLabel(config, loading),
          };
          const outcome = await translateHere(here, ctx);
          if (outcome !== 'done') {
            // After a failed call the program loads again, over what the call left, and says why it fails.
            const again = outcome === 'failed' ? ['-overwrite'] : [];
            const args = ['-f', 'PostgreSQL', libpq.dataset, ...stagingLoadArgs(layer, stage, geometryName, fid), ...tableOptions, ...again];
            await ogr2ogrPg(config, ctx, loading, args);
          }
        } catch (error) {
          // A CRS without an EPSG code (a custom projection from an ESRI .prj) needs a new row in
          // spatial_ref_sys, which a loading role usually may not write: say what to do about it.
          if (error instanceof ConnectorError && /spatial_ref_sys/.test(error.message) && layer.epsg === null) {
            throw new ConnectorError(
              'permission_denied',
              `${what}: the layer's CRS has no EPSG code, so PostGIS needs a new entry in spatial_ref_sys, which ${config.username} may not add; reproject the layer to an EPSG CRS (a reproject operation) or let a database owner GRANT INSERT ON spatial_ref_sys TO ${config.username}`,
              { ...triedOf(config), schema, table },
              false,
            );
          }
          throw error;
        } finally {
          await libpq.close();
        }
        if (indexed) await session((client) => client.query(spatialIndexSql(schema, stage, geometryName)));
      },
      swap: (plan) =>
        session(async (client) => {
          try {
            // One change of this target at a time (two Jobs, or a retry racing its first attempt);
            // one round trip with the BEGIN (simple protocol, so the key is a quoted literal).
            await client.query(`BEGIN; SELECT pg_advisory_xact_lock(hashtext(${literal(`geoflow:${schema}.${table}`)}))`);
            const done = await recorded(client, schema, input.deliveryId);
            if (done) {
              await client.query('ROLLBACK');
              return result(done.rows_written, done.write_mode);
            }
            const exists = await relationExists(client, schema, table);
            let rows: number;
            let counts: UpsertCounts | undefined;
            if (upsert && exists) {
              counts = await upsertRows(client, schema, table, stage, fid, upsert);
              rows = counts.inserted + counts.updated;
              await client.query(`DROP TABLE ${qualified(schema, stage)}`);
            } else if (mode === 'append' && exists) {
              rows = await appendRows(client, schema, table, stage, fid);
              await client.query(`DROP TABLE ${qualified(schema, stage)}`);
            } else {
              if (mode === 'create' && exists) throw targetExists(where, config.database, { schema, table }, true);
              // ogr2ogr loads every feature or fails, so the layer's count is the staging table's
              // (counting 4M rows again cost about a second inside the swap's transaction).
              // A first upsert keeps one row per key of what it loaded, without the deleted ones.
              rows = upsert
                ? await upsertIntoNewTable(client, schema, table, stage, fid, upsert)
                : (layer.features ?? Number((await client.query<{ n: string }>(`SELECT count(*) AS n FROM ${qualified(schema, stage)}`)).rows[0]!.n));
              if (upsert) counts = { inserted: rows, updated: 0, deleted: 0 };
              if (exists) {
                await client.query(`ALTER TABLE ${qualified(schema, table)} RENAME TO ${ident(old)}`);
                await client.query(`ALTER TABLE ${qualified(schema, stage)} RENAME TO ${ident(table)}`);
                await copyGrants(client, schema, old, table);
                await client.query(`DROP TABLE ${qualified(schema, old)}`);
              } else {
                // An append whose target was dropped meanwhile: its staging table has no index yet.
                if (!plan.indexed && layer.nlt !== 'NONE') await client.query(spatialIndexSql(schema, stage, plan.geometryName));
                await client.query(`ALTER TABLE ${qualified(schema, stage)} RENAME TO ${ident(table)}`);
              }
              await renameDependents(client, schema, table, stage);
            }
            await record(client, schema, input.deliveryId, table, mode, rows);
            await client.query('COMMIT');
            // The staging table is the target now (or was dropped by append): nothing to clean up.
            swapped = true;
            return result(rows, mode, counts);
          } catch (error) {
            await client.query('ROLLBACK').catch(() => undefined);
            if ((error as { code?: string }).code === '2BP01') {
              throw new ConnectorError(
                'invalid_data',
                `${what}: ${where} cannot be replaced while other objects (views, foreign keys) depend on it; drop them or use write_mode append`,
                { ...triedOf(config), schema, table, sqlstate: '2BP01' },
                false,
              );
            }
            throw classifyPg(error, `${what}: delivering to ${where}`, { schema, table });
          }
        }),
      // Cleanup runs after a cancellation too, so it has a deadline of its own (and a connection of
      // its own when the kept one went with the cancellation).
      dropStage: async () => {
        if (swapped) return;
        const drop = async (client: pg.Client) => {
          // A server process still building the staging table's index (PostgreSQL notices a closed
          // connection only when it next talks to it) would hold the table past this deadline.
          if (orphan) await client.query('SELECT pg_cancel_backend($1)', [orphan]).catch(() => undefined);
          await client.query(`DROP TABLE IF EXISTS ${qualified(schema, stage)}`);
        };
        const cleanup = { ...ctx, signal: AbortSignal.timeout(2 * CONNECT_TIMEOUT_MS) };
        await (kept && !ctx.signal.aborted ? onClient(config, cleanup, kept, drop) : withClient(config, cleanup, drop)).catch(release);
      },
    });
  } finally {
    await handBack();
  }
}
