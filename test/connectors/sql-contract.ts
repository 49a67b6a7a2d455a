import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest, type Send } from '../support/e2e.js';
import { fixtureDir, manyPointsGpkg, mixedPolygonsGeoJson, pointsGeoJson } from '../support/fixtures.js';
import { createPostgisTarget, fileBody, finished, jobsClient, startFileServer, type FileServer } from '../support/jobs.js';
import { temporalAddress } from '../support/worker.js';
import { closedPort, pollUntilStopped } from './support.js';

/*
 * The SQL Destination contract: the end-to-end cases every SQL type runs through the API, the
 * worker and Temporal — test and discover a connection, import a table and a query, replace under
 * a polling reader, append, create, mixed polygons, and Jobs in and out through Run Now. PostGIS,
 * MariaDB, BigQuery's stand-in and fakesnow run it against the servers the suite starts; SQL
 * Server and Oracle, whose servers cannot run on this machine, against one named by an
 * environment variable, and are skipped with a message that says so without it.
 */

/** A connection of its own that counts a table's rows, as a dashboard would read. */
export interface SqlReader {
  count(table: string): Promise<number>;
  close(): Promise<void>;
}

/** What the cases are told by the checks a type adds in their midst (its own assertions). */
export interface SqlCaseContext {
  send: Send;
  configuration: Record<string, unknown>;
}

/** A running (or named) server of one SQL type, seeded with the three stations. */
export interface SqlServer {
  configuration: Record<string, unknown>;
  /** What no answer may ever contain (passwords, private keys). */
  secrets: string[];
  /** A configuration whose credentials the server refuses; null where the server checks none (say why). */
  wrongCredentials: Record<string, unknown> | null;
  /** A destination_target for a table name (plus the schema the type wants). */
  target: (table: string, write_mode: string) => Record<string, unknown>;
  /** The tables the cases write, as the type names them. */
  tables: { places: string; parcels: string; job: string; upserted: string };
  /** The Source selector of the seeded stations (3 points, EPSG:4326), and a query over them. */
  seeded: { resource: string | Record<string, unknown>; query: string; queryFeatures: number };
  reader(): Promise<SqlReader>;
  /** A draft configuration pointing at a closed port on loopback, where it needs the server's (else SqlContract.closed). */
  closed?: (port: number) => Record<string, unknown>;
  /** Steps a type cannot take here, each with the reason. */
  unsupported?: {
    /** The connector has no discover. */
    discover?: string;
    /** The imported layer has no CRS (the server keeps no SRID). */
    crs?: string;
    /** The imported layer's geometry type is GEOMETRY, not POINT (the column declares no subtype). */
    geometryType?: string;
  };
  /** A closed port may also answer `timeout`: the vendor's HTTP client retries until the test's deadline (say which). */
  closedMayTimeOut?: boolean;
  /** The type's own assertions, in the cases whose data they look at. */
  checks?: {
    discovered?(c: SqlCaseContext & { destination: string; tested: LightMyRequestResponse; schemas: LightMyRequestResponse }): Promise<void>;
    imported?(c: SqlCaseContext & { source: string; workspace: { id: string; layers: Record<string, unknown>[] } }): Promise<void>;
    created?(created: LightMyRequestResponse): Promise<void>;
    /** After the two replaces under the reader: what it saw. */
    replaced?(seen: Map<number, number>): Promise<void>;
    parcels?(delivered: LightMyRequestResponse): Promise<void>;
  };
  stop(): Promise<void>;
}

export interface SqlContract {
  type: string;
  /** Why no server of this type can be had here (the cases that need one are skipped with it), or false. */
  missing: string | false;
  /** Starts the type's server (or opens the one named) and seeds the stations. */
  start(): Promise<SqlServer>;
  /** A draft configuration pointing at a closed port on loopback that needs no server. */
  closed?: (port: number) => Record<string, unknown>;
  /** Why the type's Destination has no write_mode upsert, if it has none (its upsert case is then skipped with this). */
  noUpsert?: string;
}

/** The three stations every type is seeded with (EPSG:4326), for types seeded by loading a file. */
export function stationsGeoJson(dir: string): string {
  const file = path.join(dir, 'stations.geojson');
  const stations = [
    [1, 'Bern', 7.44, 46.95],
    [2, 'Chur', 9.53, 46.85],
    [3, 'Genève', 6.14, 46.2],
  ] as const;
  const features = stations.map(([id, name, x, y]) => ({ type: 'Feature', properties: { id, name }, geometry: { type: 'Point', coordinates: [x, y] } }));
  writeFileSync(file, JSON.stringify({ type: 'FeatureCollection', features }));
  return file;
}

const base = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');

// Read and write on what the cases touch, and running Workspaces and Jobs.
const scopes = ['workspaces', 'sources', 'destinations', 'jobs'].flatMap((r) => [`${r}:read`, `${r}:write`]);
const it = e2eTest({ worker: true, scopes: [...scopes, 'workspaces:run', 'jobs:run'] });

/** The draft test against a closed port; `of` is asked when the case runs (a started server's configuration). */
function closedPortCase(type: string, of: () => { configurationAt: (port: number) => Record<string, unknown>; mayTimeOut: boolean; secrets: string[] }) {
  it('answers a draft test against a closed port with a classified failure (unreachable), never not_implemented, and no secret', async ({ send }) => {
    const { configurationAt, mayTimeOut, secrets } = of();
    const configuration = configurationAt(await closedPort());
    const res = await send('POST', '/api/v1/destinations/test', { type, configuration });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ ok: false, status: mayTimeOut ? expect.stringMatching(/^(unreachable|timeout)$/) : 'unreachable' });
    for (const secret of [...secrets, String(configuration.password ?? 'no password')]) expect(res.body).not.toContain(secret);
  });
}

export function sqlContractSuite(contract: SqlContract): void {
  const { type } = contract;
  const closed = contract.closed;
  if (closed) {
    describe.skipIf(base)(`${type}: a draft test against a closed port`, () => {
      closedPortCase(type, () => ({ configurationAt: closed, mayTimeOut: false, secrets: [] }));
    });
  }

  const skip = base || contract.missing;
  describe.skipIf(skip)(`${type} through the API: the SQL Destination contract${contract.missing ? ` — skipped: ${contract.missing}` : ''}`, () => {
    let server: SqlServer;
    let files: FileServer;
    const dir = fixtureDir();

    beforeAll(async () => {
      server = await contract.start();
      files = await startFileServer();
    }, 120_000);
    afterAll(async () => {
      try {
        await files?.close();
      } finally {
        await server?.stop();
      }
    });

    const noSecrets = (...bodies: string[]) => {
      for (const body of bodies) for (const secret of server.secrets) expect(body).not.toContain(secret);
    };
    const countOf = async (table: string) => {
      const reader = await server.reader();
      try {
        return await reader.count(table);
      } finally {
        await reader.close();
      }
    };
    const uploadOf = (upload: (file: string) => Promise<LightMyRequestResponse>) => async (file: string) => {
      const res = await upload(file);
      expect(res.statusCode, res.body).toBe(201);
      return res.json() as { id: string };
    };
    const convertOf =
      (send: Send) =>
      async (id: string, format = 'GPKG') =>
        expect((await send('POST', `/api/v1/workspaces/${id}/convert`, { output_format: format })).statusCode).toBe(200);

    if (!closed) {
      // The type's server is started here: its closed-port configuration needs what the server issued (keys, a project).
      closedPortCase(type, () => ({ configurationAt: server.closed!, mayTimeOut: server.closedMayTimeOut ?? false, secrets: server.secrets }));
    }

    it('creates, tests and discovers a connection; wrong credentials are authentication_failed; nothing secret comes back', async ({ send }) => {
      const { configuration } = server;
      const dst = (await send('POST', '/api/v1/destinations', { name: 'GIS', type, configuration })).json();
      const tested = await send('POST', `/api/v1/destinations/${dst.id}/test`);
      expect(tested.json()).toMatchObject({ ok: true, status: 'ok' });
      const answers = [tested];
      // Where the server checks no credentials (fakesnow), SqlServer.wrongCredentials says so.
      if (server.wrongCredentials) {
        const wrong = await send('POST', '/api/v1/destinations/test', { type, configuration: server.wrongCredentials });
        expect(wrong.json()).toMatchObject({ ok: false, status: 'authentication_failed' });
        answers.push(wrong);
      }
      if (!server.unsupported?.discover) {
        const schemas = await send('GET', `/api/v1/destinations/${dst.id}/discover`);
        expect(schemas.statusCode, schemas.body).toBe(200);
        expect(schemas.json().schemas.length).toBeGreaterThan(0);
        answers.push(schemas);
        await server.checks?.discovered?.({ send, configuration, destination: dst.id, tested, schemas });
      }
      noSecrets(...answers.map((r) => r.body));
    });

    it('imports a table and a query, then previews and converts', async ({ send }) => {
      const { configuration } = server;
      const src = (await send('POST', '/api/v1/sources', { name: 'GIS', type, configuration })).json();
      const created = await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: server.seeded.resource });
      expect(created.statusCode, created.body).toBe(201);
      const ws = created.json();
      // Where the server keeps no SRID, or the column no geometry subtype, SqlServer.unsupported says so.
      expect(ws.layers[0]).toMatchObject({
        feature_count: 3,
        geometry_type: server.unsupported?.geometryType ? 'GEOMETRY' : 'POINT',
        ...(server.unsupported?.crs ? {} : { crs: 'EPSG:4326' }),
      });
      expect((await send('GET', `/api/v1/workspaces/${ws.id}/data-preview?limit=2`)).json().preview_row_count).toBe(2);
      expect((await send('GET', `/api/v1/workspaces/${ws.id}/spatial-preview`)).json().returned_count).toBe(3);
      await convertOf(send)(ws.id, 'GeoJSON');
      const query = await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: { query: server.seeded.query } });
      expect(query.statusCode, query.body).toBe(201);
      expect(query.json().layers[0]).toMatchObject({ name: 'query', feature_count: server.seeded.queryFeatures });
      noSecrets(created.body, query.body);
      await server.checks?.imported?.({ send, configuration, source: src.id, workspace: ws });
    });

    it('delivers create, then replace twice while a reader polls (never empty or missing), then append and create again', async ({ send, upload }) => {
      const { configuration, tables } = server;
      const dst = (await send('POST', '/api/v1/destinations', { name: 'GIS', type, configuration })).json();
      const big = await uploadOf(upload)(manyPointsGpkg(dir, 20_000));
      await convertOf(send)(big.id);
      const small = await uploadOf(upload)(pointsGeoJson(dir, 12));
      await convertOf(send)(small.id);
      const deliver = (ws: string, mode: string) =>
        send('POST', `/api/v1/workspaces/${ws}/deliver`, { destination_id: dst.id, destination_target: server.target(tables.places, mode) });
      // A first delivery makes the table before the reader starts.
      const created = await deliver(small.id, 'create');
      expect(created.statusCode, created.body).toBe(200);
      expect(created.json()).toMatchObject({
        destination_id: dst.id,
        destination_type: type,
        target: { table: tables.places, write_mode: 'create' },
        rows_written: 12,
      });
      noSecrets(created.body);
      await server.checks?.created?.(created);
      const reader = await server.reader();
      const reading = pollUntilStopped(() => reader.count(tables.places));
      try {
        const first = await deliver(big.id, 'replace');
        expect(first.statusCode, first.body).toBe(200);
        expect(first.json().rows_written).toBe(20_000);
        const second = await deliver(small.id, 'replace');
        expect(second.statusCode, second.body).toBe(200);
        expect(second.json().rows_written).toBe(12);
      } finally {
        await reading.stop();
        await reader.close();
      }
      const { seen, errors } = await reading.stop();
      expect(errors).toEqual([]);
      // Only whole tables were ever seen: the 20,000 rows, or the 12, never 0 or a part.
      expect([...seen.keys()].every((n) => n === 12 || n === 20_000)).toBe(true);
      await server.checks?.replaced?.(seen);
      expect(await countOf(tables.places)).toBe(12);
      const appended = await deliver(small.id, 'append');
      expect(appended.statusCode, appended.body).toBe(200);
      expect(appended.json()).toMatchObject({ target: { write_mode: 'append' }, rows_written: 12 });
      expect(await countOf(tables.places)).toBe(24);
      const exists = await deliver(small.id, 'create');
      expect(exists.statusCode).toBe(409);
      expect(exists.json().error.code).toBe('target_exists');
      expect(await countOf(tables.places)).toBe(24);
    }, 300_000);

    it('delivers mixed polygons with long non-ASCII field names', async ({ send, upload }) => {
      const dst = (await send('POST', '/api/v1/destinations', { name: 'GIS', type, configuration: server.configuration })).json();
      const ws = await uploadOf(upload)(mixedPolygonsGeoJson(dir));
      // GeoPackage keeps the CRS (GeoJSON output is RFC 7946, WGS 84, unless target_crs says otherwise).
      await convertOf(send)(ws.id, 'GPKG');
      const res = await send('POST', `/api/v1/workspaces/${ws.id}/deliver`, {
        destination_id: dst.id,
        destination_target: server.target(server.tables.parcels, 'replace'),
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().rows_written).toBe(2);
      expect(res.json()).toMatchObject({ destination_type: type, target: { table: server.tables.parcels, write_mode: 'replace' } });
      await server.checks?.parcels?.(res);
    });

    it.skipIf(Boolean(contract.noUpsert))(
      `upserts by key through the API: the rows of a second delivery update and insert, one row per key${contract.noUpsert ? ` — skipped: ${contract.noUpsert}` : ''}`,
      async ({ send, upload }) => {
        const dst = (await send('POST', '/api/v1/destinations', { name: 'GIS', type, configuration: server.configuration })).json();
        const deliver = async (count: number) => {
          const ws = await uploadOf(upload)(pointsGeoJson(dir, count));
          await convertOf(send)(ws.id);
          // population is unique in the points (1000 × their number); their id becomes the GeoPackage's FID.
          const target = { ...server.target(server.tables.upserted, 'upsert'), upsert_keys: ['population'] };
          return send('POST', `/api/v1/workspaces/${ws.id}/deliver`, { destination_id: dst.id, destination_target: target });
        };
        const first = await deliver(12);
        expect(first.statusCode, first.body).toBe(200);
        expect(first.json()).toMatchObject({ target: { table: server.tables.upserted, write_mode: 'upsert' } });
        expect(await countOf(server.tables.upserted)).toBe(12);
        // Points 1 to 20: the first 12 are there already.
        const second = await deliver(20);
        expect(second.statusCode, second.body).toBe(200);
        expect(await countOf(server.tables.upserted)).toBe(20);
      },
    );

    it('runs a Job from a url Source into it, and one from it into PostGIS, through Run Now', async ({ sut, token, worker: _worker }) => {
      // The worker is asked for: the Runs need one polling, even when this case runs alone.
      const { configuration, tables } = server;
      const api = jobsClient(() => sut.app, token);
      files.put('/points', fileBody(pointsGeoJson(dir, 5)), 'application/geo+json');
      const url = (await api.call('POST', '/api/v1/sources', { name: 'points', type: 'url', configuration: { url: `${files.url}/points` } })).json();
      const dst = (await api.call('POST', '/api/v1/destinations', { name: 'db', type, configuration })).json();
      const into = await api.call('POST', '/api/v1/jobs', {
        name: 'in',
        source_id: url.id,
        destination_id: dst.id,
        destination_target: server.target(tables.job, 'replace'),
        pipeline: { transform: false, convert: false },
      });
      expect(into.statusCode, into.body).toBe(201);
      const run = (await api.call('POST', `/api/v1/jobs/${into.json().id}/run`)).json();
      const done = await api.waitForRun(into.json().id, run.id, (r) => finished(r.status), 180_000);
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      expect(await countOf(tables.job)).toBe(5);

      const postgis = await createPostgisTarget();
      try {
        const src = (await api.call('POST', '/api/v1/sources', { name: 'db', type, configuration })).json();
        const out = (await api.call('POST', '/api/v1/destinations', { name: 'pg', type: 'postgis', configuration: postgis.configuration })).json();
        const job = await api.call('POST', '/api/v1/jobs', {
          name: 'out',
          source_id: src.id,
          source_resource: server.seeded.resource,
          destination_id: out.id,
          destination_target: { table: 'stations', write_mode: 'replace' },
          pipeline: { transform: false, convert: false },
        });
        expect(job.statusCode, job.body).toBe(201);
        const second = (await api.call('POST', `/api/v1/jobs/${job.json().id}/run`)).json();
        const ended = await api.waitForRun(job.json().id, second.id, (r) => finished(r.status), 180_000);
        expect(ended.status, JSON.stringify(ended.error)).toBe('succeeded');
        expect(await postgis.query('SELECT count(*)::int AS n FROM public.stations')).toEqual([{ n: 3 }]);
      } finally {
        await postgis.drop();
      }
    }, 400_000);
  });
}

/**
 * The configuration of a server named by an environment variable (scheme://user:password@host:port/…),
 * for types whose servers cannot run on this machine: host, port, credentials and what `more` reads
 * from the URL; null when the variable is not set.
 */
export function namedServer<T extends object>(env: string, defaultPort: number, more: (url: URL) => T) {
  const value = process.env[env];
  if (!value) return null;
  const url = new URL(value);
  return {
    host: url.hostname,
    port: Number(url.port || defaultPort),
    username: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    ...more(url),
  };
}

/** Why a named server's cases are skipped. */
export const namedServerMissing = (type: string, env: string) =>
  `${env} is not set: no ${type} server can run on this machine; set it to run the SQL Destination contract against a real one`;
