import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mysql as mysqlConnector } from '../../connectors/mysql/index.js';
import { postgis } from '../../connectors/postgis/index.js';
import type { ConnectorContext, DeliverInput } from '../../connectors/types.js';
import type { DeliveryResult } from '../../domain/transfers.js';
import { connectorContext, expectConnectorError } from './support.js';
import { skipWithoutDatabase } from '../support/database.js';
import { fixtureDir } from '../support/fixtures.js';
import { createPostgisDatabase, type PostgisDatabase } from '../support/postgis.js';
import { mariadbMissing, startMariadb, type LocalMariadb } from '../servers/mariadb/server.js';
import { geoJsonFile, layerInput, mariadbAccess } from './sql-fixtures.js';

/*
 * write_mode "upsert" against the real servers: PostgreSQL 15 + PostGIS 3 and MariaDB. An
 * incremental Job's Runs deliver the rows that changed since the last one; upsert keeps one row
 * per key, and a delete marker removes rows.
 */

interface Row {
  id: number | null;
  name: string;
  deleted?: boolean;
  x: number;
}

/** A GeoJSON file of point rows (`id`, `name`, optional `deleted`), as a Source's changed rows arrive. */
function rowsFile(dir: string, rows: Row[]): string {
  const features = rows.map((r) => ({
    type: 'Feature',
    properties: { id: r.id, name: r.name, ...(r.deleted === undefined ? {} : { deleted: r.deleted }) },
    geometry: { type: 'Point', coordinates: [r.x, 46] },
  }));
  return geoJsonFile(dir, `rows-${randomUUID()}.geojson`, features);
}

const input = (file: string, extra: Partial<DeliverInput> = {}) => layerInput(file, { format: 'GeoJSON', ...extra });

type Deliver<C, T> = { deliver(config: C, target: T, input: DeliverInput, ctx: ConnectorContext): Promise<DeliveryResult> };

/** Delivers point `rows` to `target`, as an incremental Run hands a Destination its changed rows. */
function deliverRows<C, T>(destination: Deliver<C, T>, config: C, target: T, dir: string, rows: Row[]): Promise<DeliveryResult> {
  return destination.deliver(config, target, input(rowsFile(dir, rows)), connectorContext());
}

describe.skipIf(skipWithoutDatabase)('upsert into PostGIS', () => {
  let db: PostgisDatabase;
  let dir: string;
  beforeAll(async () => {
    db = await createPostgisDatabase();
    dir = fixtureDir();
  });
  afterAll(async () => {
    await db?.drop();
  });
  const rowsOf = (table: string) => db.sql<{ id: number; name: string }>(`SELECT id, name FROM public."${table}" ORDER BY id`);
  const target = (table: string, marker = true) => ({
    schema: 'public',
    table,
    write_mode: 'upsert' as const,
    upsert_keys: ['id'],
    ...(marker ? { delete_marker: 'deleted' } : {}),
  });

  it('creates the table on the first delivery, then updates, inserts and deletes by key, one row per key', async () => {
    const first = await deliverRows(postgis.destination!, db.config, target('places'), dir, [
      { id: 1, name: 'Bern', x: 7.4, deleted: false },
      { id: 2, name: 'Basel', x: 7.6, deleted: false },
      { id: 3, name: 'gone before it came', x: 8, deleted: true },
    ]);
    expect(first).toMatchObject({ target: { write_mode: 'upsert', inserted: 2, updated: 0, deleted: 0 }, rows_written: 2 });
    expect(await rowsOf('places')).toEqual([
      { id: 1, name: 'Bern' },
      { id: 2, name: 'Basel' },
    ]);
    // The marker column is not written, and the keys got a unique index for the upserts that follow.
    const columns = (await db.sql<{ c: string }>(`SELECT column_name AS c FROM information_schema.columns WHERE table_name = 'places'`)).map((r) => r.c);
    expect(columns).not.toContain('deleted');
    expect((await db.sql(`SELECT 1 FROM pg_indexes WHERE tablename = 'places' AND indexdef LIKE 'CREATE UNIQUE INDEX%(id)'`)).length).toBe(1);

    // The next Run's changed rows: Basel renamed (twice: the last wins), Bern deleted, Chur new.
    const second = await deliverRows(postgis.destination!, db.config, target('places'), dir, [
      { id: 2, name: 'Basel (old news)', x: 7.6, deleted: false },
      { id: 1, name: 'Bern', x: 7.4, deleted: true },
      { id: 4, name: 'Chur', x: 9.5, deleted: false },
      { id: 2, name: 'Basel-Stadt', x: 7.6, deleted: false },
    ]);
    expect(second).toMatchObject({ target: { inserted: 1, updated: 1, deleted: 1 }, rows_written: 2 });
    expect(await rowsOf('places')).toEqual([
      { id: 2, name: 'Basel-Stadt' },
      { id: 4, name: 'Chur' },
    ]);
  });

  it('a retried delivery writes nothing twice; reinitialize rebuilds the table', async () => {
    const file = rowsFile(dir, [
      { id: 1, name: 'a', x: 1 },
      { id: 2, name: 'b', x: 2 },
    ]);
    const once = input(file);
    await postgis.destination!.deliver(db.config, target('retried', false), once, connectorContext());
    await db.sql(`UPDATE public.retried SET name = 'changed by hand' WHERE id = 1`);
    // The same delivery id again (a resumed Run): the ledger answers, the row changed by hand stays.
    const again = await postgis.destination!.deliver(db.config, target('retried', false), once, connectorContext());
    expect(again.rows_written).toBe(2);
    expect(await rowsOf('retried')).toEqual([
      { id: 1, name: 'changed by hand' },
      { id: 2, name: 'b' },
    ]);
    const rebuilt = await postgis.destination!.deliver(
      db.config,
      target('retried', false),
      input(rowsFile(dir, [{ id: 7, name: 'only', x: 1 }]), { reinitialize: true }),
      connectorContext(),
    );
    expect(rebuilt.target).toMatchObject({ write_mode: 'replace' });
    expect(await rowsOf('retried')).toEqual([{ id: 7, name: 'only' }]);
  });

  it('refuses rows without a key value and keys the target lacks, leaving the target as it was', async () => {
    await deliverRows(postgis.destination!, db.config, target('strict', false), dir, [{ id: 1, name: 'a', x: 1 }]);
    const noKey = await expectConnectorError(
      deliverRows(postgis.destination!, db.config, target('strict', false), dir, [
        { id: 1, name: 'changed', x: 1 },
        { id: null, name: 'nobody', x: 2 },
      ]),
      'invalid_data',
    );
    expect(noKey.message).toMatch(/1 row\(s\) of the output have no value in "id"/);
    await db.sql('ALTER TABLE public.strict RENAME COLUMN name TO label');
    const absent = await expectConnectorError(
      deliverRows(postgis.destination!, db.config, { ...target('strict', false), upsert_keys: ['id', 'name'] }, dir, [{ id: 1, name: 'x', x: 1 }]),
      'invalid_data',
    );
    expect(absent.message).toMatch(/has no column "name"/);
    expect(await db.sql(`SELECT id, label FROM public.strict`)).toEqual([{ id: 1, label: 'a' }]);
    expect(await db.sql(`SELECT relname FROM pg_class WHERE relname LIKE '\\_geoflow\\_stage%'`)).toEqual([]);
  });

  it('the target schema asks for upsert_keys with upsert, and only there', () => {
    const schema = postgis.destination!.target;
    expect(schema.safeParse({ table: 't', write_mode: 'upsert' }).success).toBe(false);
    expect(schema.safeParse({ table: 't', write_mode: 'append', upsert_keys: ['id'] }).success).toBe(false);
    expect(schema.safeParse({ table: 't', write_mode: 'upsert', upsert_keys: ['id'], delete_marker: 'id' }).success).toBe(false);
    expect(schema.safeParse({ table: 't', write_mode: 'upsert', upsert_keys: ['id'], delete_marker: 'gone' }).success).toBe(true);
  });
});

describe.skipIf(mariadbMissing)('upsert into MariaDB', () => {
  let server: LocalMariadb;
  let config: ReturnType<typeof mariadbAccess>['config'];
  let dir: string;
  const sql = (text: string) => mariadbAccess(server).sql(text);
  beforeAll(async () => {
    server = await startMariadb();
    config = mariadbAccess(server).config;
    dir = fixtureDir();
  });
  afterAll(async () => {
    await server?.stop();
  });
  const target = { table: 'places', write_mode: 'upsert' as const, upsert_keys: ['id'], delete_marker: 'deleted' };
  const rowsOf = async () => (await sql('SELECT id, name FROM places ORDER BY id')).map((r) => ({ id: Number(r.id), name: String(r.name) }));

  it('creates the table, then updates, inserts and deletes by key in one transaction with the ledger', async () => {
    const first = await deliverRows(mysqlConnector.destination!, config, target, dir, [
      { id: 1, name: 'Bern', x: 7.4, deleted: false },
      { id: 2, name: 'Basel', x: 7.6, deleted: false },
      { id: 3, name: 'never', x: 8, deleted: true },
    ]);
    expect(first).toMatchObject({ target: { write_mode: 'upsert', inserted: 2 }, rows_written: 2 });
    expect(await rowsOf()).toEqual([
      { id: 1, name: 'Bern' },
      { id: 2, name: 'Basel' },
    ]);
    expect((await sql(`SHOW COLUMNS FROM places LIKE 'deleted'`)).length).toBe(0);

    const once = input(
      rowsFile(dir, [
        { id: 2, name: 'Basel (old)', x: 7.6, deleted: false },
        { id: 1, name: 'Bern', x: 7.4, deleted: true },
        { id: 4, name: 'Chur', x: 9.5, deleted: false },
        { id: 2, name: 'Basel-Stadt', x: 7.6, deleted: false },
      ]),
    );
    const second = await mysqlConnector.destination!.deliver(config, target, once, connectorContext());
    expect(second).toMatchObject({ target: { inserted: 1, updated: 1, deleted: 1 }, rows_written: 2 });
    expect(await rowsOf()).toEqual([
      { id: 2, name: 'Basel-Stadt' },
      { id: 4, name: 'Chur' },
    ]);
    // The same delivery again: recorded in the ledger with the rows, so nothing changes.
    await sql(`UPDATE places SET name = 'by hand' WHERE id = 4`);
    await mysqlConnector.destination!.deliver(config, target, once, connectorContext());
    expect(await rowsOf()).toEqual([
      { id: 2, name: 'Basel-Stadt' },
      { id: 4, name: 'by hand' },
    ]);
    const ledger = await sql(`SELECT write_mode, rows_written FROM _geoflow_deliveries WHERE delivery_id = '${once.deliveryId}'`);
    expect(ledger).toEqual([{ write_mode: 'upsert', rows_written: 2 }]);
  });

  it('refuses rows without a key value before the target changes', async () => {
    const refused = await expectConnectorError(
      deliverRows(mysqlConnector.destination!, config, target, dir, [
        { id: 2, name: 'would change', x: 1, deleted: false },
        { id: null, name: 'nobody', x: 2, deleted: false },
      ]),
      'invalid_data',
    );
    expect(refused.message).toMatch(/no value in `id`/);
    expect((await rowsOf()).find((r) => r.id === 2)?.name).toBe('Basel-Stadt');
  });
});
