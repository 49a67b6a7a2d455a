import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bigQueryClient } from '../../connectors/bigquery/client.js';
import { bigQueryColumnNames } from '../../connectors/bigquery/deliver.js';
import { bigquery as connector } from '../../connectors/bigquery/index.js';
import { gdal } from '../../geo/gdal/gdal.js';
import { fixtureDir } from '../support/fixtures.js';
import { bigQueryPython, bigQueryServerUnavailable, startBigQueryServer, type BigQueryServer } from '../../devservers/bigquery/server.js';
import { closedPort, connectorContext, deliverInput, expectConnectorError, filesIn, pollUntilStopped } from './support.js';
import { boroughsGpkg, countriesGpkg, LONG_FIELD, nullGeometriesGpkg } from './warehouse-fixtures.js';

const unavailable = bigQueryServerUnavailable();

/**
 * The bigquery connector against the BigQuery REST stand-in (devservers/bigquery), whose
 * answers are first checked with Google's own Python client (check.py).
 */
describe.skipIf(unavailable)(`bigquery connector (REST stand-in)${unavailable ? ` — skipped: ${unavailable}` : ''}`, () => {
  let server: BigQueryServer;
  let config: { project_id: string; dataset: string; credentials_json: string; api_endpoint: string; location: string };
  let dir: string;

  beforeAll(async () => {
    server = await startBigQueryServer();
    config = {
      project_id: server.project,
      dataset: 'gis',
      credentials_json: JSON.stringify(server.keys.writer),
      api_endpoint: server.endpoint,
      location: 'EU',
    };
    await bigQueryClient(config).createDataset('gis', { location: 'EU' });
    dir = fixtureDir();
  });
  afterAll(async () => {
    await server?.stop();
  });

  const rows = async (query: string) => {
    const [result] = await bigQueryClient(config).query({ query, useLegacySql: false });
    return result as Record<string, any>[];
  };
  const numRows = async (table: string) => Number((await bigQueryClient(config).dataset('gis').table(table).getMetadata())[0].numRows);
  const read = async (file: string) => {
    const ds = await gdal.openAsync(file);
    try {
      const layer = ds.layers.get(0);
      const out = [];
      for await (const f of layer.features) out.push({ ...f.fields.toObject(), wkt: f.getGeometry()?.toWKT() ?? null });
      return { name: layer.name, srs: layer.srs?.getAuthorityCode(null) ?? null, fields: layer.fields.map((f) => `${f.name}:${f.type}`), rows: out };
    } finally {
      ds.close();
    }
  };

  it("answers Google's Python client as BigQuery does (datasets, load upload, tabledata.list, query jobs, copy, errors)", async () => {
    const child = execFile(bigQueryPython, [path.resolve('devservers/bigquery/check.py'), server.endpoint, server.project]);
    child.stdin!.end(JSON.stringify({ writer: server.keys.writer, nobody: server.keys.nobody }));
    const [stdout, stderr] = await new Promise<[string, string]>((resolve, reject) => {
      let out = '';
      let err = '';
      child.stdout!.on('data', (c) => (out += c));
      child.stderr!.on('data', (c) => (err += c));
      child.once('exit', (code) => (code === 0 ? resolve([out, err]) : reject(new Error(`check.py exited with ${code}\n${err}`))));
    });
    expect(JSON.parse(stdout.trim().split('\n').pop()!), stderr).toMatchObject({
      load_state: 'DONE',
      tables: ['points'],
      query_rows: 1,
      duplicate_job: 'Conflict',
      missing_table: 'NotFound',
      out_of_range_geography: 'BadRequest',
      no_permission: 'Forbidden',
      dry_runs: ['SELECT', 'SCRIPT'],
      script: [{ left_rows: 1 }],
    });
  });

  it('test: ok, then a key the server never issued, an account without permission, a missing dataset, a bad key and a closed port, classified and secret-free', async () => {
    const ok = await connector.test!(config, connectorContext());
    expect(ok).toMatchObject({ ok: true, status: 'ok', tried: { project: server.project, dataset: 'gis' } });
    expect(ok.message).toMatch(/writer@.*dataset gis \(location EU\)/);
    const results = [
      await connector.test!({ ...config, credentials_json: JSON.stringify(server.keys.stranger) }, connectorContext()),
      await connector.test!({ ...config, credentials_json: JSON.stringify(server.keys.nobody) }, connectorContext()),
      await connector.test!({ ...config, dataset: 'missing' }, connectorContext()),
      await connector.test!(
        { ...config, credentials_json: '{"type": "service_account", "client_email": "x@y", "private_key": "not a key"}' },
        connectorContext(),
      ),
      await connector.test!({ ...config, api_endpoint: `http://127.0.0.1:${await closedPort()}` }, connectorContext({ signal: AbortSignal.timeout(8_000) })),
    ];
    expect(results.map((r) => r.status)).toEqual([
      'authentication_failed',
      'permission_denied',
      'not_found',
      'authentication_failed',
      expect.stringMatching(/^(unreachable|timeout)$/),
    ]);
    for (const r of [ok, ...results]) {
      const text = JSON.stringify(r);
      for (const key of Object.values(server.keys)) expect(text).not.toContain(key.private_key.split('\n')[1]);
    }
  });

  it('delivers NYC boroughs (EPSG:2263) reprojected to WGS 84 GEOGRAPHY, says so, and maps the long non-ASCII field name', async () => {
    const result = await connector.destination!.deliver(
      config,
      { table: 'boroughs', write_mode: 'create' },
      deliverInput(boroughsGpkg(dir), randomUUID()),
      connectorContext(),
    );
    expect(result).toMatchObject({
      rows_written: 3,
      target: { table: 'boroughs', crs: 'EPSG:4326', geometry_type: 'GEOGRAPHY', reprojected: { from: 'EPSG:2263', to: 'EPSG:4326' } },
    });
    const [mapped] = bigQueryColumnNames([LONG_FIELD]);
    expect(mapped).toBe('Poblacion_segun_el_censo_de_2020_del_distrito_municipal_de_Nueva');
    const [metadata] = await bigQueryClient(config).dataset('gis').table('boroughs').getMetadata();
    expect(metadata.schema.fields.map((f: { name: string; type: string }) => `${f.name}:${f.type}`)).toEqual([
      'geom:GEOGRAPHY',
      'BoroCode:INTEGER',
      'BoroName:STRING',
      `${mapped}:INTEGER`,
      'Shape_Area:FLOAT',
    ]);
    const manhattan = (await rows('SELECT geom, BoroName FROM gis.boroughs WHERE BoroCode = 1'))[0]!;
    // Lower Manhattan, longitude first.
    expect(String(manhattan.geom.value)).toMatch(/^MULTIPOLYGON \(\(\(-74\.0\d+ 40\.\d+/);
    await expectConnectorError(
      connector.destination!.deliver(config, { table: 'boroughs', write_mode: 'create' }, deliverInput(boroughsGpkg(dir), randomUUID()), connectorContext()),
      'target_exists',
    );
  });

  it('replace twice while a reader polls: never empty; append once per delivery id; the staging tables are gone', async () => {
    const countries = countriesGpkg(dir);
    await connector.destination!.deliver(config, { table: 'countries', write_mode: 'replace' }, deliverInput(countries, randomUUID()), connectorContext());
    const reader = pollUntilStopped(() => numRows('countries'));
    for (let i = 0; i < 2; i++) {
      const r = await connector.destination!.deliver(
        config,
        { table: 'countries', write_mode: 'replace' },
        deliverInput(countries, randomUUID()),
        connectorContext(),
      );
      expect(r).toMatchObject({ rows_written: 3, target: { write_mode: 'replace' } });
      expect(r.target).not.toHaveProperty('reprojected');
    }
    const { seen, errors } = await reader.stop();
    expect(errors).toEqual([]);
    expect([...seen.keys()]).toEqual([3]);
    const id = randomUUID();
    for (let i = 0; i < 2; i++)
      await connector.destination!.deliver(config, { table: 'countries', write_mode: 'append' }, deliverInput(countries, id), connectorContext());
    expect(await numRows('countries')).toBe(6);
    expect((await rows("SELECT NAME_ZH FROM gis.countries WHERE ADMIN = 'Côte d''Ivoire'")).map((r) => r.NAME_ZH)).toEqual(['科特迪瓦', '科特迪瓦']);
    const [tables] = await bigQueryClient(config).dataset('gis').getTables();
    expect(tables.map((t) => t.id).filter((t) => t!.startsWith('_geoflow_'))).toEqual([]);
  });

  it('a retried delivery finds its own jobs (ids from the delivery id) and loads nothing twice', async () => {
    const id = randomUUID();
    const first = await connector.destination!.deliver(
      config,
      { table: 'retried', write_mode: 'replace' },
      deliverInput(countriesGpkg(dir), id),
      connectorContext(),
    );
    await rows("INSERT INTO gis.retried (ADMIN) VALUES ('written by someone after the copy')");
    const again = await connector.destination!.deliver(
      config,
      { table: 'retried', write_mode: 'replace' },
      deliverInput(countriesGpkg(dir), id),
      connectorContext(),
    );
    expect(again).toEqual(first);
    expect(await numRows('retried')).toBe(4);
  });

  it('a layer with null geometries loads them as NULL and reads them back as features without geometry', async () => {
    await connector.destination!.deliver(
      config,
      { table: 'addresses', write_mode: 'replace' },
      deliverInput(nullGeometriesGpkg(dir), randomUUID()),
      connectorContext(),
    );
    expect((await rows('SELECT id FROM gis.addresses WHERE geom IS NULL ORDER BY id')).map((r) => r.id)).toEqual([2, 4]);
    const back = await read((await connector.source!.extract(config, { table: 'addresses' }, connectorContext(), {})).file);
    expect(back.rows.map((r) => [r.id, r.wkt])).toEqual([
      [1, 'POINT (8.54 47.37)'],
      [2, null],
      [3, 'POINT (6.15 46.2)'],
      [4, null],
    ]);
    expect(back.rows[3]!.address).toBeNull();
  });

  it('discover lists datasets, then tables with their GEOGRAPHY columns in the PostGIS shape', async () => {
    await bigQueryClient(config)
      .dataset('gis')
      .createTable('plain', { schema: [{ name: 'a', type: 'INT64' }] });
    const top = await connector.discover!(config, {}, connectorContext());
    expect(top).toEqual({ host: new URL(server.endpoint).host, database: server.project, schemas: ['gis'] });
    const found = await connector.discover!(config, { schema: 'gis' }, connectorContext());
    expect(found.tables).toEqual(
      expect.arrayContaining([
        { schema: 'gis', name: 'boroughs', has_geometry: true, geometry_type: 'GEOGRAPHY' },
        { schema: 'gis', name: 'plain', has_geometry: false, geometry_type: null },
      ]),
    );
    await expectConnectorError(connector.discover!(config, { schema: 'nope' }, connectorContext()), 'not_found');
  });

  it('extracts a table (types, WGS 84), a query, and a cursor column across Runs', async () => {
    const table = await read((await connector.source!.extract(config, { table: 'countries' }, connectorContext(), {})).file);
    expect(table).toMatchObject({ name: 'countries', srs: '4326' });
    expect(table.fields).toEqual(['ADMIN:string', 'NAME_ZH:string', 'POP_EST:integer64', 'GDP_MD:real']);
    expect(table.rows).toHaveLength(6);
    const query = await connector.source!.extract(config, { query: "SELECT ADMIN, geom FROM gis.countries WHERE ADMIN = 'Fiji';" }, connectorContext(), {});
    expect(query).toMatchObject({ filename: 'query.gpkg', features: 2 });
    const first = await connector.source!.extract(config, { table: 'boroughs', cursor_column: 'BoroCode' }, connectorContext(), { sync: null });
    expect(first).toMatchObject({ features: 3, sync: { cursor: { column: 'BoroCode', type: 'INT64', value: '3' } } });
    const again = await connector.source!.extract(config, { table: 'boroughs', cursor_column: 'BoroCode' }, connectorContext(), { sync: first.sync! });
    expect(again.unchanged).toBe(true);
    await rows("INSERT INTO gis.boroughs (BoroCode, BoroName) VALUES (4, 'Queens')");
    const next = await connector.source!.extract(config, { table: 'boroughs', cursor_column: 'BoroCode' }, connectorContext(), { sync: first.sync! });
    expect(next).toMatchObject({ features: 1, sync: { cursor: { value: '4' } } });
  });

  it('a query that closes its subquery and goes on as a script is refused by a dry run; nothing runs (issue 32)', async () => {
    const before = await numRows('countries');
    for (const query of [
      'SELECT 1 AS x); DELETE FROM gis.countries WHERE TRUE; SELECT (1',
      "SELECT 1 AS x)\n; INSERT INTO gis.countries (ADMIN) VALUES ('Atlantis'); SELECT (1",
    ]) {
      const ctx = connectorContext();
      const attempt = connector.source!.extract(config, { query }, ctx, {});
      await attempt.catch(() => undefined);
      // First what matters: the table is as it was (before the fix, the DELETE ran).
      expect(await numRows('countries'), query).toBe(before);
      const error = await expectConnectorError(attempt, 'invalid_data');
      expect(error.message).toContain('statementType SCRIPT');
      expect(error.details).toMatchObject({ statement_type: 'SCRIPT' });
      expect(filesIn(ctx.workDir)).toEqual([]);
    }
  });

  it('a missing table, a bad query and a size limit fail classified and leave no files', async () => {
    for (const [resource, reason] of [
      [{ table: 'missing' }, 'not_found'],
      [{ query: 'SELECT * FROM gis.missing' }, 'not_found'],
      [{ query: 'SELEC 1' }, 'invalid_data'],
    ] as const) {
      const ctx = connectorContext();
      await expectConnectorError(connector.source!.extract(config, resource, ctx, {}), reason);
      expect(filesIn(ctx.workDir)).toEqual([]);
    }
    const ctx = connectorContext({ maxBytes: 200 });
    await expectConnectorError(connector.source!.extract(config, { table: 'countries' }, ctx, {}), 'too_large');
    expect(filesIn(ctx.workDir)).toEqual([]);
  });
});
