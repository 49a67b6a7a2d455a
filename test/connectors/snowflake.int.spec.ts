import { generateKeyPairSync, randomUUID } from 'node:crypto';
import snowflakeSdk from 'snowflake-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snowflakeColumnNames, spatialColumn } from '../../connectors/snowflake/deliver.js';
import { snowflake as connector } from '../../connectors/snowflake/index.js';
import { gdal } from '../../geo/gdal/gdal.js';
import { fixtureDir } from '../support/fixtures.js';
import { fakesnowUnavailable, startFakesnow, type FakesnowServer } from '../../devservers/fakesnow/server.js';
import { closedPort, connectorContext, deliverInput, expectConnectorError, filesIn, pollUntilStopped } from './support.js';
import { boroughsGpkg, countriesGpkg, LONG_FIELD, nullGeometriesGpkg } from './warehouse-fixtures.js';

const unavailable = fakesnowUnavailable();

/**
 * The snowflake connector against fakesnow (DuckDB underneath) in server mode, through the same
 * snowflake-sdk calls. fakesnow accepts any credentials, has no GEOGRAPHY type and keeps no SRID:
 * what these tests can and cannot show is said where it matters.
 */
describe.skipIf(unavailable)(`snowflake connector (fakesnow)${unavailable ? ` — skipped: ${unavailable}` : ''}`, () => {
  let server: FakesnowServer;
  let config: { account: string; username: string; password: string; database: string; schema: string; access_url: string };
  let dir: string;
  let reader: snowflakeSdk.Connection;
  const sql = (sqlText: string) =>
    new Promise<Record<string, any>[]>((resolve, reject) =>
      reader.execute({ sqlText, complete: (e, _s, rows) => (e ? reject(e) : resolve((rows ?? []) as Record<string, any>[])) }),
    );

  beforeAll(async () => {
    server = await startFakesnow();
    config = { account: 'geoflow', username: 'loader', password: 'loader-password', database: 'GIS', schema: 'PUBLIC', access_url: server.accessUrl };
    dir = fixtureDir();
    reader = snowflakeSdk.createConnection({
      account: 'geoflow',
      username: 'reader',
      password: 'x',
      database: 'GIS',
      schema: 'PUBLIC',
      accessUrl: server.accessUrl,
    });
    await new Promise<void>((resolve, reject) => reader.connect((e) => (e ? reject(e) : resolve())));
  });
  afterAll(async () => {
    if (reader?.isUp()) await new Promise((r) => reader.destroy(r));
    await server?.stop();
  });

  const count = async (table: string) => Number((await sql(`SELECT COUNT(*) AS N FROM "${table}"`))[0]!.N);
  const read = async (file: string) => {
    const ds = await gdal.openAsync(file);
    try {
      const layer = ds.layers.get(0);
      const out = [];
      for await (const f of layer.features) out.push({ ...f.fields.toObject(), wkt: f.getGeometry()?.toWKT() ?? null });
      return { name: layer.name, fields: layer.fields.map((f) => `${f.name}:${f.type}`), rows: out };
    } finally {
      ds.close();
    }
  };

  it('test: password and key-pair sessions, then a bad key, no credentials and a closed port, classified and secret-free', async () => {
    const ok = await connector.test!(config, connectorContext());
    expect(ok).toMatchObject({ ok: true, status: 'ok', tried: { account: 'geoflow', auth: 'password', database: 'GIS' } });
    expect(ok.message).toMatch(/Connected to Snowflake account geoflow \(Snowflake [\d.]+\) as loader/);
    const { privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      privateKeyEncoding: { type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'key-passphrase' },
      publicKeyEncoding: { type: 'spki', format: 'pem' },
    });
    // fakesnow accepts any JWT: this shows the driver took the decrypted key and signed, not that Snowflake would accept it.
    const keyPair = await connector.test!(
      { ...config, password: undefined, private_key: privateKey, private_key_passphrase: 'key-passphrase' } as never,
      connectorContext(),
    );
    expect(keyPair).toMatchObject({ ok: true, tried: { auth: 'key_pair' } });
    const results = [
      await connector.test!({ ...config, password: undefined, private_key: privateKey, private_key_passphrase: 'wrong' } as never, connectorContext()),
      await connector.test!({ ...config, password: undefined } as never, connectorContext()),
      await connector.test!({ ...config, access_url: `http://127.0.0.1:${await closedPort()}` }, connectorContext({ signal: AbortSignal.timeout(8_000) })),
    ];
    expect(results.map((r) => r.status)).toEqual(['authentication_failed', 'authentication_failed', expect.stringMatching(/^(unreachable|timeout)$/)]);
    for (const r of [ok, keyPair, ...results]) {
      const text = JSON.stringify(r);
      for (const secret of ['loader-password', 'key-passphrase', privateKey.split('\n')[1]!]) expect(text).not.toContain(secret);
    }
  });

  it('delivers NYC boroughs (EPSG:2263) as GEOMETRY with SRID 2263, keeping the long non-ASCII field name', async () => {
    expect(spatialColumn('auto', 2263)).toEqual({ type: 'GEOMETRY', srid: 2263 });
    expect(spatialColumn('auto', 4326)).toEqual({ type: 'GEOGRAPHY', srid: 4326 });
    expect(snowflakeColumnNames([LONG_FIELD, 'x'.repeat(300), 'x'.repeat(256)])).toEqual([LONG_FIELD, 'x'.repeat(255), `${'x'.repeat(253)}_2`]);
    const result = await connector.destination!.deliver(
      config,
      { table: 'BOROUGHS', write_mode: 'create', spatial_type: 'auto' },
      deliverInput(boroughsGpkg(dir), randomUUID()),
      connectorContext(),
    );
    expect(result).toMatchObject({ rows_written: 3, target: { table: 'BOROUGHS', geometry_type: 'GEOMETRY', srid: 2263 } });
    expect(result.target).not.toHaveProperty('reprojected');
    const rows = await sql(`SELECT "BoroName", "${LONG_FIELD}" AS P, ST_ASWKT("geom") AS W FROM BOROUGHS ORDER BY "BoroCode"`);
    expect(rows.map((r) => [r.BoroName, r.P])).toEqual([
      ['Manhattan', 1694251],
      ['The Brönx', 1472654],
      ['Staten Ísland', 495747],
    ]);
    expect(rows[0]!.W).toMatch(/^MULTIPOLYGON \(\(\(980000 190000/);
    await expectConnectorError(
      connector.destination!.deliver(
        config,
        { table: 'BOROUGHS', write_mode: 'create', spatial_type: 'auto' },
        deliverInput(boroughsGpkg(dir), randomUUID()),
        connectorContext(),
      ),
      'target_exists',
    );
  });

  it('spatial_type geography reprojects NYC boroughs to WGS 84 and says so', async () => {
    const result = await connector.destination!.deliver(
      config,
      { table: 'BOROUGHS_WGS84', write_mode: 'replace', spatial_type: 'geography' },
      deliverInput(boroughsGpkg(dir), randomUUID()),
      connectorContext(),
    );
    expect(result).toMatchObject({ target: { geometry_type: 'GEOGRAPHY', srid: 4326, reprojected: { from: 'EPSG:2263', to: 'EPSG:4326' } } });
    expect((await sql('SELECT ST_ASWKT("geom") AS W FROM BOROUGHS_WGS84 ORDER BY "BoroCode" LIMIT 1'))[0]!.W).toMatch(/^MULTIPOLYGON \(\(\(-74\.0\d+ 40\.\d+/);
  });

  it('replace twice while a reader polls (ALTER TABLE … SWAP WITH): never empty; append once per delivery id; no staging tables left', async () => {
    const countries = countriesGpkg(dir);
    await connector.destination!.deliver(
      config,
      { table: 'COUNTRIES', write_mode: 'replace', spatial_type: 'auto' },
      deliverInput(countries, randomUUID()),
      connectorContext(),
    );
    const poll = pollUntilStopped(() => count('COUNTRIES'));
    for (let i = 0; i < 2; i++) {
      const r = await connector.destination!.deliver(
        config,
        { table: 'COUNTRIES', write_mode: 'replace', spatial_type: 'auto' },
        deliverInput(countries, randomUUID()),
        connectorContext(),
      );
      expect(r).toMatchObject({ rows_written: 3, target: { write_mode: 'replace', geometry_type: 'GEOGRAPHY' } });
    }
    const { seen, errors } = await poll.stop();
    expect(errors).toEqual([]);
    expect([...seen.keys()]).toEqual([3]);
    const id = randomUUID();
    for (let i = 0; i < 2; i++)
      await connector.destination!.deliver(
        config,
        { table: 'COUNTRIES', write_mode: 'append', spatial_type: 'auto' },
        deliverInput(countries, id),
        connectorContext(),
      );
    expect(await count('COUNTRIES')).toBe(6);
    expect((await sql(`SELECT "NAME_ZH" FROM COUNTRIES WHERE "ADMIN" = 'Côte d''Ivoire'`)).map((r) => r.NAME_ZH)).toEqual(['科特迪瓦', '科特迪瓦']);
    const left = await sql("SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_NAME LIKE '_geoflow_%' AND TABLE_NAME <> '_geoflow_deliveries'");
    expect(left).toEqual([]);
  });

  it('a retried replace whose swap happened but whose record did not only records it (the mark in the table comment)', async () => {
    const id = randomUUID();
    const target = { table: 'RETRIED', write_mode: 'replace' as const, spatial_type: 'auto' as const };
    await connector.destination!.deliver(config, target, deliverInput(countriesGpkg(dir), id), connectorContext());
    await sql(`DELETE FROM "_geoflow_deliveries" WHERE delivery_id = '${id}'`);
    await sql(`INSERT INTO RETRIED ("ADMIN") VALUES ('written by someone after the swap')`);
    const again = await connector.destination!.deliver(config, target, deliverInput(countriesGpkg(dir), id), connectorContext());
    // Not loaded again: the table (with the later row) is what the first attempt swapped in.
    expect(again.rows_written).toBe(4);
    expect(await count('RETRIED')).toBe(4);
    expect((await sql(`SELECT COUNT(*) AS N FROM "_geoflow_deliveries" WHERE delivery_id = '${id}'`))[0]!.N).toBe(1);
  });

  it('a layer with null geometries loads them as NULL and reads them back as features without geometry', async () => {
    await connector.destination!.deliver(
      config,
      { table: 'ADDRESSES', write_mode: 'replace', spatial_type: 'auto' },
      deliverInput(nullGeometriesGpkg(dir), randomUUID()),
      connectorContext(),
    );
    expect((await sql('SELECT "id" FROM ADDRESSES WHERE "geom" IS NULL ORDER BY "id"')).map((r) => r.id)).toEqual([2, 4]);
    const back = await read((await connector.source!.extract(config, { table: 'ADDRESSES' }, connectorContext(), {})).file);
    expect(back.rows.map((r) => [r.id, r.wkt])).toEqual([
      [1, 'POINT (8.54 47.37)'],
      [2, null],
      [3, 'POINT (6.15 46.2)'],
      [4, null],
    ]);
  });

  it('discover lists schemas, then tables with their spatial columns in the PostGIS shape', async () => {
    await sql('CREATE TABLE PLAIN (A NUMBER)');
    expect(await connector.discover!(config, {}, connectorContext())).toMatchObject({ database: 'GIS', schemas: ['PUBLIC'] });
    const found = await connector.discover!(config, { schema: 'PUBLIC' }, connectorContext());
    // fakesnow's information schema says GEOMETRY for GEOGRAPHY columns too.
    expect(found.tables).toEqual(
      expect.arrayContaining([
        { schema: 'PUBLIC', name: 'BOROUGHS', has_geometry: true, geometry_type: 'GEOMETRY' },
        { schema: 'PUBLIC', name: 'PLAIN', has_geometry: false, geometry_type: null },
      ]),
    );
    expect(found.tables!.map((t) => t.name)).not.toContain('_geoflow_deliveries');
    await expectConnectorError(connector.discover!(config, { schema: 'NOPE' }, connectorContext()), 'not_found');
  });

  it('extracts a table (types kept), a query, and a cursor column across Runs', async () => {
    const table = await read((await connector.source!.extract(config, { table: 'BOROUGHS' }, connectorContext(), {})).file);
    expect(table.name).toBe('BOROUGHS');
    expect(table.fields).toEqual(['BoroCode:integer64', 'BoroName:string', `${LONG_FIELD}:integer64`, 'Shape_Area:real']);
    expect(table.rows[1]).toMatchObject({
      BoroName: 'The Brönx',
      wkt: 'MULTIPOLYGON (((1000000 240000,1010000 240000,1010000 250000,1000000 250000,1000000 240000)))',
    });
    const query = await connector.source!.extract(
      config,
      { query: 'SELECT "ADMIN", "geom" FROM COUNTRIES WHERE "POP_EST" > 1000000;' },
      connectorContext(),
      {},
    );
    expect(query).toMatchObject({ filename: 'query.gpkg', features: 4 });
    const first = await connector.source!.extract(config, { table: 'BOROUGHS', cursor_column: 'BoroCode' }, connectorContext(), { sync: null });
    expect(first).toMatchObject({ features: 3, sync: { cursor: { column: 'BoroCode', type: 'NUMBER(38, 0)', value: '3' } } });
    expect(
      (await connector.source!.extract(config, { table: 'BOROUGHS', cursor_column: 'BoroCode' }, connectorContext(), { sync: first.sync! })).unchanged,
    ).toBe(true);
    await sql(`INSERT INTO BOROUGHS ("BoroCode", "BoroName") VALUES (5, 'Queens')`);
    const next = await connector.source!.extract(config, { table: 'BOROUGHS', cursor_column: 'BoroCode' }, connectorContext(), { sync: first.sync! });
    expect(next).toMatchObject({ features: 1, sync: { cursor: { value: '5' } } });
  });

  it('a missing table, a bad query and a size limit fail classified and leave no files', async () => {
    for (const [resource, reason] of [
      [{ table: 'MISSING' }, 'not_found'],
      [{ query: 'SELEC 1' }, 'invalid_data'],
    ] as const) {
      const ctx = connectorContext();
      await expectConnectorError(connector.source!.extract(config, resource, ctx, {}), reason);
      expect(filesIn(ctx.workDir)).toEqual([]);
    }
    const ctx = connectorContext({ maxBytes: 200 });
    await expectConnectorError(connector.source!.extract(config, { table: 'COUNTRIES' }, ctx, {}), 'too_large');
    expect(filesIn(ctx.workDir)).toEqual([]);
  });
});
