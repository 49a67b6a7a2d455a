import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, createToken, login, type TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { fixtureDir, manyPointsGpkg, mixedPolygonsGeoJson, pointsGeoJson } from '../support/fixtures.js';
import { multipartFile } from '../support/multipart.js';
import { createPostgisDatabase, type PostgisDatabase } from '../support/postgis.js';
import { startTestWorker, temporalAddress } from '../support/worker.js';
import { pollUntilStopped } from './support.js';

const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');

/** PostGIS Sources and Destinations through /api/v1, with the real worker and Temporal. */
describe.skipIf(skip)('PostGIS through the API: test, discover, import, deliver', () => {
  let sut: TestApp;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let token: string;
  let db: PostgisDatabase;
  const dir = fixtureDir();

  beforeAll(async () => {
    db = await createPostgisDatabase();
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
      await db?.drop();
    }
  });

  const send = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
    sut.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });
  const upload = async (file: string) => {
    const m = multipartFile(file);
    const res = await sut.app.inject({ method: 'POST', url: '/api/v1/workspaces', payload: m.payload, headers: { ...m.headers, ...bearer(token) } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string };
  };
  const convert = async (id: string, format = 'GPKG') => {
    const res = await send('POST', `/api/v1/workspaces/${id}/convert`, { output_format: format });
    expect(res.statusCode, res.body).toBe(200);
  };

  it('tests and discovers saved connections; a missing schema is postgis_failed; nothing secret comes back', async () => {
    const dst = (await send('POST', '/api/v1/destinations', { name: 'GIS', type: 'postgis', configuration: db.config })).json();
    const tested = await send('POST', `/api/v1/destinations/${dst.id}/test`);
    expect(tested.json()).toMatchObject({ ok: true, status: 'ok', tried: { database: db.config.database } });
    const draft = await send('POST', '/api/v1/destinations/test', { type: 'postgis', configuration: { ...db.config, password: 'wrong' } });
    expect(draft.json()).toMatchObject({ ok: false, status: 'authentication_failed' });

    const schemas = await send('GET', `/api/v1/destinations/${dst.id}/discover`);
    expect(schemas.statusCode).toBe(200);
    expect(schemas.json()).toMatchObject({ host: db.config.host, database: db.config.database, schemas: expect.arrayContaining(['public']) });
    const missing = await send('GET', `/api/v1/destinations/${dst.id}/discover?schema=nowhere`);
    expect(missing.statusCode).toBe(422);
    expect(missing.json().error).toMatchObject({ code: 'postgis_failed', details: { reason: 'not_found' } });
    for (const r of [tested, draft, schemas, missing]) expect(r.body).not.toContain(db.config.password);
  });

  it('upload → convert → deliver: replace twice while a reader polls (never empty or missing), then append and create', async () => {
    const dst = (await send('POST', '/api/v1/destinations', { name: 'GIS', type: 'postgis', configuration: db.config })).json();
    const big = await upload(manyPointsGpkg(dir, 20_000));
    await convert(big.id);
    const small = await upload(pointsGeoJson(dir, 12));
    await convert(small.id);
    const deliver = (ws: string, target: object) => send('POST', `/api/v1/workspaces/${ws}/deliver`, { destination_id: dst.id, destination_target: target });

    const created = await deliver(small.id, { table: 'places', write_mode: 'create' });
    expect(created.statusCode, created.body).toBe(200);
    expect(created.json()).toMatchObject({
      destination_id: dst.id,
      destination_type: 'postgis',
      target: { schema: 'public', table: 'places', write_mode: 'create' },
      rows_written: 12,
    });
    expect(created.body).not.toContain(db.config.password);

    // A reader in its own connection, as a dashboard would be.
    const reader = new pg.Client({
      host: db.config.host,
      port: db.config.port,
      database: db.config.database,
      user: db.config.username,
      password: db.config.password,
    });
    await reader.connect();
    const reading = pollUntilStopped(async () => Number((await reader.query<{ n: string }>('SELECT count(*) AS n FROM public.places')).rows[0]!.n));
    try {
      const first = await deliver(big.id, { table: 'places', write_mode: 'replace' });
      expect(first.statusCode, first.body).toBe(200);
      expect(first.json().rows_written).toBe(20_000);
      const second = await deliver(small.id, { table: 'places', write_mode: 'replace' });
      expect(second.statusCode, second.body).toBe(200);
      expect(second.json().rows_written).toBe(12);
    } finally {
      await reading.stop();
      await reader.end();
    }
    const { seen, errors } = await reading.stop();
    expect(errors).toEqual([]);
    // Only whole tables were ever seen: the 20,000 rows, or the 12, never 0 or a part.
    expect([...seen.keys()].sort((a, b) => a - b)).toEqual([12, 20_000]);
    expect([...seen.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(10);
    const [geometry] = await db.sql<{ type: string; srid: number }>("SELECT type, srid FROM geometry_columns WHERE f_table_name = 'places'");
    expect(geometry).toEqual({ type: 'POINT', srid: 4326 });
    expect(Number((await db.sql<{ n: string }>('SELECT count(*) AS n FROM public.places'))[0]!.n)).toBe(12);

    const appended = await deliver(small.id, { table: 'places', write_mode: 'append' });
    expect(appended.statusCode, appended.body).toBe(200);
    expect(appended.json()).toMatchObject({ target: { write_mode: 'append' }, rows_written: 12 });
    expect(Number((await db.sql<{ n: string }>('SELECT count(*) AS n FROM public.places'))[0]!.n)).toBe(24);

    const exists = await deliver(small.id, { table: 'places', write_mode: 'create' });
    expect(exists.statusCode).toBe(409);
    expect(exists.json().error.code).toBe('target_exists');
    expect(Number((await db.sql<{ n: string }>('SELECT count(*) AS n FROM public.places'))[0]!.n)).toBe(24);
  });

  it('mixed polygons are delivered as MULTIPOLYGON in their CRS, with field names and text as given', async () => {
    const dst = (await send('POST', '/api/v1/destinations', { name: 'GIS', type: 'postgis', configuration: db.config })).json();
    const ws = await upload(mixedPolygonsGeoJson(dir));
    // GeoPackage keeps the CRS (GeoJSON output is RFC 7946, WGS 84, unless target_crs says otherwise)
    await convert(ws.id, 'GPKG');
    const res = await send('POST', `/api/v1/workspaces/${ws.id}/deliver`, {
      destination_id: dst.id,
      destination_target: { table: 'Flurstücke', write_mode: 'replace' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const [geometry] = await db.sql<{ type: string; srid: number }>("SELECT type, srid FROM geometry_columns WHERE f_table_name = 'Flurstücke'");
    expect(geometry).toEqual({ type: 'MULTIPOLYGON', srid: 2056 });
    const rows = await db.sql<{ parcel_identifier_long_name: string; owner: string }>(
      'SELECT parcel_identifier_long_name, owner FROM public."Flurstücke" ORDER BY 1',
    );
    expect(rows).toEqual([
      { parcel_identifier_long_name: 'A-1', owner: 'Müller' },
      { parcel_identifier_long_name: 'B-2', owner: 'Løvland' },
    ]);
  });

  it('imports a table (object or string selector) and a query from a PostGIS Source, then previews and converts', async () => {
    await db.sql(`CREATE TABLE public.stations (id serial PRIMARY KEY, name text, geom geometry(Point, 4326));
      ALTER TABLE public.stations OWNER TO ${db.config.username};
      INSERT INTO public.stations (name, geom) VALUES ('Bern', ST_SetSRID(ST_MakePoint(7.44, 46.95), 4326)), ('Chur', ST_SetSRID(ST_MakePoint(9.53, 46.85), 4326)), ('Genève', ST_SetSRID(ST_MakePoint(6.14, 46.2), 4326));`);
    const src = (await send('POST', '/api/v1/sources', { name: 'GIS', type: 'postgis', configuration: db.config })).json();
    const created = await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: { schema: 'public', table: 'stations' } });
    expect(created.statusCode, created.body).toBe(201);
    const ws = created.json();
    expect(ws).toMatchObject({ status: 'inspected', filename: 'stations.gpkg', driver: 'GPKG' });
    expect(ws.layers[0]).toMatchObject({ name: 'stations', feature_count: 3, geometry_type: 'POINT', crs: 'EPSG:4326' });
    const preview = (await send('GET', `/api/v1/workspaces/${ws.id}/data-preview?limit=2`)).json();
    expect(preview.preview_row_count).toBe(2);
    const spatial = (await send('GET', `/api/v1/workspaces/${ws.id}/spatial-preview`)).json();
    expect(spatial.returned_count).toBe(3);
    await convert(ws.id, 'GeoJSON');

    const shorthand = await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: 'stations' });
    expect(shorthand.statusCode, shorthand.body).toBe(201);
    const query = await send('POST', '/api/v1/workspaces', {
      source_id: src.id,
      source_resource: { query: "SELECT name, geom FROM public.stations WHERE name <> 'Chur'" },
    });
    expect(query.statusCode, query.body).toBe(201);
    expect(query.json().layers[0]).toMatchObject({ name: 'query', feature_count: 2 });

    const missing = await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: 'no_such_table' });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().error).toMatchObject({ code: 'source_failed', details: { reason: 'not_found', retryable: false } });
    const noSelector = await send('POST', '/api/v1/workspaces', { source_id: src.id });
    expect(noSelector.statusCode).toBe(400);
  });
});
