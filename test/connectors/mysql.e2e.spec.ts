import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, createToken, login, type TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { fixtureDir, mixedPolygonsGeoJson } from '../support/fixtures.js';
import { multipartFile } from '../support/multipart.js';
import { startTestWorker, temporalAddress } from '../support/worker.js';
import { mariadbMissing, startMariadb, type LocalMariadb } from '../servers/mariadb/server.js';

const skip = skipWithoutDatabase || mariadbMissing || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');

/** MySQL (MariaDB) Sources and Destinations through /api/v1, with the real worker and Temporal. */
describe.skipIf(skip)('MySQL through the API: import into a Workspace, deliver from one', () => {
  let sut: TestApp;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let token: string;
  let server: LocalMariadb;
  let configuration: Record<string, unknown>;

  beforeAll(async () => {
    server = await startMariadb();
    configuration = { host: server.host, port: server.port, database: server.database, username: server.username, password: server.password };
    const c = await server.root(server.database);
    await c.query(`CREATE TABLE stations (id INT PRIMARY KEY AUTO_INCREMENT, name VARCHAR(50), geom POINT REF_SYSTEM_ID=4326 NOT NULL);
      INSERT INTO stations (name, geom) VALUES ('Bern', ST_GeomFromText('POINT(7.44 46.95)', 4326)), ('Chur', ST_GeomFromText('POINT(9.53 46.85)', 4326)), ('Genève', ST_GeomFromText('POINT(6.14 46.2)', 4326));`);
    await c.end();
    sut = await createTestApp({ temporal: true });
    worker = await startTestWorker(sut.services.config);
    token = await createToken(sut.app, await login(sut.app), [
      'workspaces:read',
      'workspaces:write',
      'workspaces:run',
      'sources:read',
      'sources:write',
      'destinations:read',
      'destinations:write',
    ]);
  });
  afterAll(async () => {
    try {
      await worker?.stop();
      await sut?.close();
    } finally {
      await server?.stop();
    }
  });

  const send = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
    sut.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });

  it('tests a saved Source, imports a table and a query, previews and converts', async () => {
    const src = (await send('POST', '/api/v1/sources', { name: 'Stations', type: 'mysql', configuration })).json();
    expect((await send('POST', `/api/v1/sources/${src.id}/test`)).json()).toMatchObject({ ok: true, status: 'ok' });
    const created = await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: 'stations' });
    expect(created.statusCode, created.body).toBe(201);
    const ws = created.json();
    expect(ws).toMatchObject({ filename: 'stations.gpkg', driver: 'GPKG' });
    expect(ws.layers[0]).toMatchObject({ name: 'stations', feature_count: 3, geometry_type: 'POINT', crs: 'EPSG:4326' });
    expect((await send('GET', `/api/v1/workspaces/${ws.id}/data-preview?limit=2`)).json().preview_row_count).toBe(2);
    expect((await send('GET', `/api/v1/workspaces/${ws.id}/spatial-preview`)).json().returned_count).toBe(3);
    const converted = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GeoJSON' });
    expect(converted.statusCode, converted.body).toBe(200);

    const query = await send('POST', '/api/v1/workspaces', {
      source_id: src.id,
      source_resource: { query: "SELECT name, geom FROM stations WHERE name LIKE 'B%'" },
    });
    expect(query.statusCode, query.body).toBe(201);
    expect(query.json().layers[0]).toMatchObject({ name: 'query', feature_count: 1 });
    const missing = await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: { table: 'nowhere' } });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().error).toMatchObject({ code: 'source_failed', details: { reason: 'not_found' } });
    expect(missing.body).not.toContain(server.password);
  });

  it('upload → convert → deliver with replace, append and create', async () => {
    const dst = (await send('POST', '/api/v1/destinations', { name: 'Out', type: 'mysql', configuration })).json();
    const m = multipartFile(mixedPolygonsGeoJson(fixtureDir()));
    const ws = (await sut.app.inject({ method: 'POST', url: '/api/v1/workspaces', payload: m.payload, headers: { ...m.headers, ...bearer(token) } })).json();
    expect((await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GPKG' })).statusCode).toBe(200);
    const deliver = (target: object) => send('POST', `/api/v1/workspaces/${ws.id}/deliver`, { destination_id: dst.id, destination_target: target });

    const replaced = await deliver({ table: 'parcels', write_mode: 'replace' });
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect(replaced.json()).toMatchObject({ destination_type: 'mysql', target: { table: 'parcels', write_mode: 'replace' }, rows_written: 2 });
    expect((await deliver({ table: 'parcels', write_mode: 'replace' })).json().rows_written).toBe(2);
    expect((await deliver({ table: 'parcels', write_mode: 'append' })).json().rows_written).toBe(2);
    const exists = await deliver({ table: 'parcels', write_mode: 'create' });
    expect(exists.statusCode).toBe(409);
    expect(exists.json().error.code).toBe('target_exists');

    const c = await server.root(server.database);
    try {
      const [rows] = await c.query('SELECT owner, ST_GeometryType(geom) AS type, ST_SRID(geom) AS srid FROM parcels ORDER BY ogc_fid');
      expect(rows).toEqual([
        { owner: 'Müller', type: 'MULTIPOLYGON', srid: 2056 },
        { owner: 'Løvland', type: 'MULTIPOLYGON', srid: 2056 },
        { owner: 'Müller', type: 'MULTIPOLYGON', srid: 2056 },
        { owner: 'Løvland', type: 'MULTIPOLYGON', srid: 2056 },
      ]);
    } finally {
      await c.end();
    }
  });
});
