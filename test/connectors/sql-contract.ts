import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, createToken, login, type TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { fixtureDir, manyPointsGpkg, mixedPolygonsGeoJson, pointsGeoJson } from '../support/fixtures.js';
import { createPostgisTarget, fileBody, finished, jobsClient, startFileServer, type FileServer } from '../support/jobs.js';
import { multipartFile } from '../support/multipart.js';
import { startTestWorker, temporalAddress } from '../support/worker.js';
import { closedPort, pollUntilStopped } from './support.js';

/*
 * The end-to-end cases the PostGIS suite runs, for a SQL type whose server cannot run on this
 * machine (SQL Server, Oracle): run against a real server named by an environment variable,
 * through the API, the worker and Temporal, exactly as for PostGIS. Without the variable the suite
 * is skipped with a message that says so; the draft test against a closed port runs regardless.
 */

/** What a contract needs of one database: its connection, a reader, and how it seeds a Source table. */
export interface SqlContract {
  type: 'sqlserver' | 'oracle';
  /** The environment variable that names a server, and what it holds. */
  env: string;
  configuration: Record<string, unknown> | null;
  /** A destination_target for a table name (plus the schema the type wants). */
  target: (table: string, write_mode: string) => Record<string, unknown>;
  /** The Source selector of the seeded table, and a query over it. */
  seeded: { resource: Record<string, unknown>; query: string };
  /** Creates the seeded table (3 stations, EPSG:4326) and drops what earlier runs left. */
  seed(): Promise<void>;
  /** Counts a table's rows in a connection of its own, as a dashboard would read. */
  reader(): Promise<{ count(table: string): Promise<number>; close(): Promise<void> }>;
  /** A draft configuration pointing at a closed port on loopback. */
  closed(port: number): Record<string, unknown>;
}

export function sqlContractSuite(contract: SqlContract): void {
  const base = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');
  const skip =
    base ||
    (!contract.configuration &&
      `${contract.env} is not set: no ${contract.type} server can run on this machine; set it to run the PostGIS cases against a real one`);

  describe.skipIf(base)(`${contract.type}: a draft test against a closed port`, () => {
    let sut: TestApp;
    let token: string;
    beforeAll(async () => {
      sut = await createTestApp();
      token = await createToken(sut.app, await login(sut.app), ['sources:read', 'sources:write', 'destinations:read', 'destinations:write']);
    });
    afterAll(async () => sut?.close());

    it('answers a classified failure (unreachable), never not_implemented, and no secret', async () => {
      const configuration = contract.closed(await closedPort());
      const res = await sut.app.inject({
        method: 'POST',
        url: '/api/v1/destinations/test',
        headers: bearer(token),
        payload: { type: contract.type, configuration },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ ok: false, status: 'unreachable' });
      expect(res.body).not.toContain(String(configuration.password));
    });
  });

  describe.skipIf(skip)(`${contract.type} through the API against ${contract.env}`, () => {
    let sut: TestApp;
    let worker: Awaited<ReturnType<typeof startTestWorker>>;
    let token: string;
    let files: FileServer;
    const dir = fixtureDir();
    const configuration = contract.configuration!;

    beforeAll(async () => {
      await contract.seed();
      files = await startFileServer();
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
        'jobs:read',
        'jobs:write',
        'jobs:run',
      ]);
    }, 120_000);
    afterAll(async () => {
      await worker?.stop();
      await sut?.close();
      await files?.close();
    });

    const send = (method: 'GET' | 'POST', url: string, payload?: object) =>
      sut.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });
    const upload = async (file: string) => {
      const m = multipartFile(file);
      const res = await sut.app.inject({ method: 'POST', url: '/api/v1/workspaces', payload: m.payload, headers: { ...m.headers, ...bearer(token) } });
      expect(res.statusCode, res.body).toBe(201);
      return res.json() as { id: string };
    };
    const convert = async (id: string, format = 'GPKG') =>
      expect((await send('POST', `/api/v1/workspaces/${id}/convert`, { output_format: format })).statusCode).toBe(200);

    it('creates, tests and discovers a connection; a wrong password is authentication_failed; nothing secret comes back', async () => {
      const dst = (await send('POST', '/api/v1/destinations', { name: 'GIS', type: contract.type, configuration })).json();
      const tested = await send('POST', `/api/v1/destinations/${dst.id}/test`);
      expect(tested.json()).toMatchObject({ ok: true, status: 'ok' });
      const wrong = await send('POST', '/api/v1/destinations/test', { type: contract.type, configuration: { ...configuration, password: 'wrong-password' } });
      expect(wrong.json()).toMatchObject({ ok: false, status: 'authentication_failed' });
      const schemas = await send('GET', `/api/v1/destinations/${dst.id}/discover`);
      expect(schemas.statusCode, schemas.body).toBe(200);
      expect(schemas.json().schemas.length).toBeGreaterThan(0);
      for (const r of [tested, wrong, schemas]) expect(r.body).not.toContain(String(configuration.password));
    });

    it('imports a table and a query, then previews and converts', async () => {
      const src = (await send('POST', '/api/v1/sources', { name: 'GIS', type: contract.type, configuration })).json();
      const created = await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: contract.seeded.resource });
      expect(created.statusCode, created.body).toBe(201);
      const ws = created.json();
      expect(ws.layers[0]).toMatchObject({ feature_count: 3, geometry_type: 'POINT', crs: 'EPSG:4326' });
      expect((await send('GET', `/api/v1/workspaces/${ws.id}/data-preview?limit=2`)).json().preview_row_count).toBe(2);
      expect((await send('GET', `/api/v1/workspaces/${ws.id}/spatial-preview`)).json().returned_count).toBe(3);
      await convert(ws.id, 'GeoJSON');
      const query = await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: { query: contract.seeded.query } });
      expect(query.statusCode, query.body).toBe(201);
      expect(query.json().layers[0]).toMatchObject({ name: 'query', feature_count: 2 });
    });

    it('delivers replace twice while a reader polls (never empty or missing), then append and create', async () => {
      const dst = (await send('POST', '/api/v1/destinations', { name: 'GIS', type: contract.type, configuration })).json();
      const big = await upload(manyPointsGpkg(dir, 20_000));
      await convert(big.id);
      const small = await upload(pointsGeoJson(dir, 12));
      await convert(small.id);
      const deliver = (ws: string, mode: string) =>
        send('POST', `/api/v1/workspaces/${ws}/deliver`, { destination_id: dst.id, destination_target: contract.target('GEOFLOW_PLACES', mode) });
      // A first replace makes sure the table exists before the reader starts.
      expect((await deliver(small.id, 'replace')).statusCode).toBe(200);
      const reader = await contract.reader();
      const reading = pollUntilStopped(() => reader.count('GEOFLOW_PLACES'));
      try {
        const first = await deliver(big.id, 'replace');
        expect(first.statusCode, first.body).toBe(200);
        expect(first.json().rows_written).toBe(20_000);
        const second = await deliver(small.id, 'replace');
        expect(second.json().rows_written).toBe(12);
      } finally {
        await reading.stop();
        await reader.close();
      }
      const { seen, errors } = await reading.stop();
      expect(errors).toEqual([]);
      expect([...seen.keys()].every((n) => n === 12 || n === 20_000)).toBe(true);
      const appended = await deliver(small.id, 'append');
      expect(appended.json()).toMatchObject({ target: { write_mode: 'append' }, rows_written: 12 });
      const exists = await deliver(small.id, 'create');
      expect(exists.statusCode).toBe(409);
      expect(exists.json().error.code).toBe('target_exists');
    }, 300_000);

    it('delivers mixed polygons with long non-ASCII field names', async () => {
      const dst = (await send('POST', '/api/v1/destinations', { name: 'GIS', type: contract.type, configuration })).json();
      const ws = await upload(mixedPolygonsGeoJson(dir));
      await convert(ws.id);
      const res = await send('POST', `/api/v1/workspaces/${ws.id}/deliver`, {
        destination_id: dst.id,
        destination_target: contract.target('GEOFLOW_PARCELS', 'replace'),
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().rows_written).toBe(2);
    });

    it('runs a Job from a url Source into it, and one from it into PostGIS, through Run Now', async () => {
      const api = jobsClient(() => sut.app, token);
      files.put('/points', fileBody(pointsGeoJson(dir, 5)), 'application/geo+json');
      const url = (await api.call('POST', '/api/v1/sources', { name: 'points', type: 'url', configuration: { url: `${files.url}/points` } })).json();
      const dst = (await api.call('POST', '/api/v1/destinations', { name: 'db', type: contract.type, configuration })).json();
      const into = (
        await api.call('POST', '/api/v1/jobs', {
          name: 'in',
          source_id: url.id,
          destination_id: dst.id,
          destination_target: contract.target('GEOFLOW_JOB', 'replace'),
          pipeline: { transform: false, convert: false },
        })
      ).json();
      const run = (await api.call('POST', `/api/v1/jobs/${into.id}/run`)).json();
      const done = await api.waitForRun(into.id, run.id, (r) => finished(r.status), 180_000);
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');

      const postgis = await createPostgisTarget();
      try {
        const src = (await api.call('POST', '/api/v1/sources', { name: 'db', type: contract.type, configuration })).json();
        const out = (await api.call('POST', '/api/v1/destinations', { name: 'pg', type: 'postgis', configuration: postgis.configuration })).json();
        const job = (
          await api.call('POST', '/api/v1/jobs', {
            name: 'out',
            source_id: src.id,
            source_resource: contract.seeded.resource,
            destination_id: out.id,
            destination_target: { table: 'stations', write_mode: 'replace' },
            pipeline: { transform: false, convert: false },
          })
        ).json();
        const second = (await api.call('POST', `/api/v1/jobs/${job.id}/run`)).json();
        const ended = await api.waitForRun(job.id, second.id, (r) => finished(r.status), 180_000);
        expect(ended.status, JSON.stringify(ended.error)).toBe('succeeded');
        expect(await postgis.query('SELECT count(*)::int AS n FROM public.stations')).toEqual([{ n: 3 }]);
      } finally {
        await postgis.drop();
      }
    }, 400_000);
  });
}
