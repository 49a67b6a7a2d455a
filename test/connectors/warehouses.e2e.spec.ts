import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bigQueryClient } from '../../connectors/bigquery/client.js';
import { withSession } from '../../connectors/snowflake/client.js';
import { bearer, createTestApp, createToken, login, type TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { fixtureDir } from '../support/fixtures.js';
import { createPostgisTarget, fileBody, jobsClient, startFileServer, type FileServer } from '../support/jobs.js';
import { multipartFile } from '../support/multipart.js';
import { startTestWorker, temporalAddress } from '../support/worker.js';
import { bigQueryServerUnavailable, startBigQueryServer } from '../../devservers/bigquery/server.js';
import { fakesnowUnavailable, startFakesnow } from '../../devservers/fakesnow/server.js';
import { closedPort, connectorContext, pollUntilStopped } from './support.js';
import { boroughsGpkg, countriesGpkg } from './sql-fixtures.js';

const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');

/** What differs between the two warehouses in this suite: the server, the configuration, the names. */
interface Warehouse {
  type: 'bigquery' | 'snowflake';
  missing: string | false;
  start(): Promise<{ configuration: Record<string, unknown>; closed(port: number): Record<string, unknown>; stop(): Promise<void> }>;
  /** The table names as the warehouse keeps them, and its schema (dataset). */
  table: (name: string) => string;
  schema: string;
  target: (table: string, mode: string) => Record<string, unknown>;
  /** Rows of a table, read the way a dashboard would. */
  count(configuration: Record<string, unknown>, table: string): Promise<number>;
}

const warehouses: Warehouse[] = [
  {
    type: 'bigquery',
    missing: bigQueryServerUnavailable(),
    async start() {
      const server = await startBigQueryServer();
      const configuration = {
        project_id: server.project,
        dataset: 'gis',
        location: 'EU',
        credentials_json: JSON.stringify(server.keys.writer),
        api_endpoint: server.endpoint,
      };
      await bigQueryClient(configuration).createDataset('gis', { location: 'EU' });
      return { configuration, closed: (port) => ({ ...configuration, api_endpoint: `http://127.0.0.1:${port}` }), stop: () => server.stop() };
    },
    table: (name) => name,
    schema: 'gis',
    target: (table, mode) => ({ table, write_mode: mode }),
    async count(configuration, table) {
      return Number(
        (
          await bigQueryClient(configuration as never)
            .dataset('gis')
            .table(table)
            .getMetadata()
        )[0].numRows,
      );
    },
  },
  {
    type: 'snowflake',
    missing: fakesnowUnavailable(),
    async start() {
      const server = await startFakesnow();
      const configuration = {
        account: 'geoflow',
        username: 'loader',
        password: 'e2e-snowflake-password',
        database: 'GIS',
        schema: 'PUBLIC',
        access_url: server.accessUrl,
      };
      return { configuration, closed: (port) => ({ ...configuration, access_url: `http://127.0.0.1:${port}` }), stop: () => server.stop() };
    },
    table: (name) => name.toUpperCase(),
    schema: 'PUBLIC',
    target: (table, mode) => ({ table, write_mode: mode }),
    async count(configuration, table) {
      return withSession(configuration as never, connectorContext(), async (s) => Number((await s.query(`SELECT COUNT(*) AS N FROM "${table}"`))[0]!.N));
    },
  },
];

for (const w of warehouses) {
  describe.skipIf(skip || w.missing)(`${w.type} through the API: test, deliver, discover, import, Jobs${w.missing ? ` — skipped: ${w.missing}` : ''}`, () => {
    let sut: TestApp;
    let worker: Awaited<ReturnType<typeof startTestWorker>>;
    let token: string;
    let server: Awaited<ReturnType<Warehouse['start']>>;
    let files: FileServer;
    let postgis: Awaited<ReturnType<typeof createPostgisTarget>>;
    const dir = fixtureDir();

    beforeAll(async () => {
      server = await w.start();
      files = await startFileServer();
      files.put('/countries.gpkg', fileBody(countriesGpkg(dir)), 'application/geopackage+sqlite3');
      postgis = await createPostgisTarget();
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
    });
    afterAll(async () => {
      try {
        await worker?.stop();
        await sut?.close();
        await files?.close();
        await postgis?.drop();
      } finally {
        await server?.stop();
      }
    });

    const send = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
      sut.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });

    it('a draft test against a closed port answers a classified failure', async () => {
      const res = await send('POST', '/api/v1/destinations/test', { type: w.type, configuration: server.closed(await closedPort()) });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ ok: false, status: expect.stringMatching(/^(unreachable|timeout)$/) });
    });

    it('create → test → deliver (replace twice under a polling reader, append, create) → discover → import → preview → convert', async () => {
      const dst = (await send('POST', '/api/v1/destinations', { name: `${w.type} out`, type: w.type, configuration: server.configuration })).json();
      expect((await send('POST', `/api/v1/destinations/${dst.id}/test`)).json()).toMatchObject({ ok: true, status: 'ok' });
      const m = multipartFile(boroughsGpkg(dir));
      const ws = (await sut.app.inject({ method: 'POST', url: '/api/v1/workspaces', payload: m.payload, headers: { ...m.headers, ...bearer(token) } })).json();
      expect((await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GPKG' })).statusCode).toBe(200);
      const deliver = (mode: string) =>
        send('POST', `/api/v1/workspaces/${ws.id}/deliver`, { destination_id: dst.id, destination_target: w.target(w.table('boroughs'), mode) });

      const first = await deliver('replace');
      expect(first.statusCode, first.body).toBe(200);
      expect(first.json()).toMatchObject({ destination_type: w.type, rows_written: 3 });
      if (w.type === 'bigquery') expect(first.json().target.reprojected).toEqual({ from: 'EPSG:2263', to: 'EPSG:4326' });
      const reader = pollUntilStopped(() => w.count(server.configuration, w.table('boroughs')));
      for (let i = 0; i < 2; i++) expect((await deliver('replace')).json().rows_written).toBe(3);
      const { seen, errors } = await reader.stop();
      expect(errors).toEqual([]);
      expect([...seen.keys()]).toEqual([3]);
      expect((await deliver('append')).json().rows_written).toBe(3);
      expect(await w.count(server.configuration, w.table('boroughs'))).toBe(6);
      const exists = await deliver('create');
      expect(exists.statusCode).toBe(409);
      expect(exists.json().error.code).toBe('target_exists');

      const src = (await send('POST', '/api/v1/sources', { name: `${w.type} in`, type: w.type, configuration: server.configuration })).json();
      const discovered = await send('GET', `/api/v1/sources/${src.id}/discover?schema=${w.schema}`);
      expect(discovered.statusCode, discovered.body).toBe(200);
      expect(discovered.json().tables).toEqual(expect.arrayContaining([expect.objectContaining({ name: w.table('boroughs'), has_geometry: true })]));

      const imported = await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: w.table('boroughs') });
      expect(imported.statusCode, imported.body).toBe(201);
      const back = imported.json();
      expect(back.layers[0]).toMatchObject({ name: w.table('boroughs'), feature_count: 6 });
      if (w.type === 'bigquery') expect(back.layers[0].crs).toBe('EPSG:4326');
      expect((await send('GET', `/api/v1/workspaces/${back.id}/data-preview?limit=2`)).json().preview_row_count).toBe(2);
      expect((await send('GET', `/api/v1/workspaces/${back.id}/spatial-preview`)).json().returned_count).toBe(6);
      expect((await send('POST', `/api/v1/workspaces/${back.id}/convert`, { output_format: 'GeoJSON' })).statusCode).toBe(200);
      for (const body of [first.body, exists.body, imported.body, discovered.body]) {
        expect(body).not.toContain(String(server.configuration.password ?? 'no-password'));
        expect(body).not.toContain('PRIVATE KEY');
      }
    });

    it('Jobs: a url Source into it, and it into PostGIS, through Run Now to succeeded', async () => {
      const api = jobsClient(() => sut.app, token);
      const url = (
        await api.call('POST', '/api/v1/sources', { name: 'countries file', type: 'url', configuration: { url: `${files.url}/countries.gpkg` } })
      ).json();
      const wh = (await api.call('POST', '/api/v1/destinations', { name: `${w.type} jobs`, type: w.type, configuration: server.configuration })).json();
      const into = await api.call('POST', '/api/v1/jobs', {
        name: `countries to ${w.type}`,
        source_id: url.id,
        destination_id: wh.id,
        destination_target: w.target(w.table('countries'), 'replace'),
        pipeline: { transform: false, convert: false },
      });
      expect(into.statusCode, into.body).toBe(201);
      const run1 = (await api.call('POST', `/api/v1/jobs/${into.json().id}/run`)).json();
      const done1 = await api.waitForRun(into.json().id, run1.id, undefined, 120_000);
      expect(done1.status, JSON.stringify(done1.error)).toBe('succeeded');
      expect(await w.count(server.configuration, w.table('countries'))).toBe(3);

      const src = (await api.call('POST', '/api/v1/sources', { name: `${w.type} countries`, type: w.type, configuration: server.configuration })).json();
      const pg = (await api.call('POST', '/api/v1/destinations', { name: 'postgis', type: 'postgis', configuration: postgis.configuration })).json();
      const out = await api.call('POST', '/api/v1/jobs', {
        name: `${w.type} to postgis`,
        source_id: src.id,
        source_resource: w.table('countries'),
        destination_id: pg.id,
        destination_target: { table: 'countries', write_mode: 'replace' },
        pipeline: { transform: false, convert: false },
      });
      expect(out.statusCode, out.body).toBe(201);
      const run2 = (await api.call('POST', `/api/v1/jobs/${out.json().id}/run`)).json();
      const done2 = await api.waitForRun(out.json().id, run2.id, undefined, 120_000);
      expect(done2.status, JSON.stringify(done2.error)).toBe('succeeded');
      const rows = await postgis.query<{ n: string }>('SELECT count(*) AS n FROM public.countries');
      expect(rows[0]!.n).toBe('3');
    }, 300_000);
  });
}
