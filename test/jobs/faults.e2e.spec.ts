import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduleIdOf } from '../../temporal/ids.js';
import { connectorByType } from '../../connectors/registry.js';
import { projectors } from '../../projections/index.js';
import { rebuildProjections } from '../../projections/runner.js';
import { startPostgres, startTemporal, type LocalPostgres, type LocalTemporal } from '../../scripts/local-services.js';
import { freePort } from '../../devservers/ports.js';
import { createTestApp, createToken, login, type TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { fixtureDir, manyPointsGpkg, pointsGeoJson } from '../support/fixtures.js';
import { createPostgisTarget, fileBody, finished, jobsClient, startFileServer, type FileServer, type RunJson } from '../support/jobs.js';
import { untilStagingTable } from '../support/postgis.js';
import { until } from '../support/until.js';
import { spawnWorkerProcess, startTestWorker, temporalAddress } from '../support/worker.js';

const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');
const postgisDelivers = connectorByType('postgis')?.implemented === true;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dataDir = path.resolve(process.env.SVC_DATA_DIR ?? '.data');

/** A Destination for the suites: a PostGIS table, or a webhook on the test server (Runs that deliver in moments). */
type Target = { type: 'postgis'; configuration: Record<string, unknown> } | { type: 'webhook'; configuration: { url: string } };

async function setUp(sut: TestApp, files: FileServer, destination: Target) {
  const cookie = await login(sut.app);
  const api = jobsClient(() => sut.app, await createToken(sut.app, cookie, ['jobs:read', 'jobs:write', 'jobs:run', 'sources:write', 'destinations:write']));
  const source = (await api.call('POST', '/api/v1/sources', { name: 'points', type: 'url', configuration: { url: `${files.url}/points` } })).json();
  const target = (await api.call('POST', '/api/v1/destinations', { name: 'target', ...destination })).json();
  const job = async (extra: Record<string, unknown> = {}) => {
    const res = await api.call('POST', '/api/v1/jobs', {
      name: 'points',
      source_id: source.id,
      destination_id: target.id,
      ...(destination.type === 'postgis' ? { destination_target: { table: 'points', write_mode: 'replace' } } : {}),
      pipeline: { transform: false, convert: false },
      ...extra,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  };
  return { api, job };
}

describe.skipIf(skip || (!postgisDelivers && 'the postgis Destination cannot deliver yet (connectors/postgis: implemented false)'))(
  'the worker killed (SIGKILL) in the middle of a deliver step',
  () => {
    // Past the size a delivery loads inside the worker: the load runs as ogr2ogr and takes a while.
    const POINTS = 300_000;
    let sut: TestApp;
    let files: FileServer;
    let target: Awaited<ReturnType<typeof createPostgisTarget>>;

    beforeAll(async () => {
      sut = await createTestApp({ temporal: true });
      files = await startFileServer();
      files.put('/points', fileBody(manyPointsGpkg(fixtureDir(), POINTS)), 'application/geopackage+sqlite3');
      target = await createPostgisTarget();
    });
    afterAll(async () => {
      await files?.close();
      await sut?.close();
      await target?.drop();
    });

    it('is retried on a new worker: the Run finishes and the table holds every row exactly once', async () => {
      const { api, job } = await setUp(sut, files, { type: 'postgis', configuration: target.configuration });
      const created = await job();
      let worker = await spawnWorkerProcess(sut.env, sut.services.config);
      try {
        const run = (await api.call('POST', `/api/v1/jobs/${created.id}/run`)).json();
        await api.waitForRun(created.id, run.id, (r) => r.steps.find((s) => s.name === 'deliver')?.status === 'running' || finished(r.status), 120_000);
        // Killed once the load has begun writing its staging table, not after a guess at how long it takes.
        await untilStagingTable((text) => target.query(text));
        const before = await api.waitForRun(created.id, run.id, () => true);
        expect(before.status, 'the deliver step was still running when the worker was killed').toBe('running');
        await worker.kill('SIGKILL');
        worker = await spawnWorkerProcess(sut.env, sut.services.config);
        // Temporal retries the attempt once the dead worker's heartbeats stop (30 s).
        const done = await api.waitForRun(created.id, run.id, (r) => finished(r.status), 240_000);
        expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
        expect(done.stats.features_written).toBe(POINTS);
        const [count] = await target.query<{ n: string; ids: string }>('SELECT count(*) AS n, count(DISTINCT id) AS ids FROM public.points');
        expect(count).toEqual({ n: String(POINTS), ids: String(POINTS) });
      } finally {
        await worker.kill('SIGTERM');
      }
    }, 400_000);
  },
);

describe.skipIf(skip)('the Temporal server stopped and started during a Run', () => {
  let temporal: LocalTemporal;
  let port: number;
  let dbFile: string;
  let sut: TestApp;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let files: FileServer;
  let target: Awaited<ReturnType<typeof createPostgisTarget>> | undefined;

  beforeAll(async () => {
    port = await freePort();
    dbFile = path.join(mkdtempSync(path.join(tmpdir(), 'temporal-')), 'temporal.db');
    temporal = await startTemporal(dataDir, port, { dbFile });
    sut = await createTestApp({ temporal: true, env: { SVC_TEMPORAL_ADDRESS: temporal.address } });
    worker = await startTestWorker(sut.services.config);
    files = await startFileServer();
    files.put('/points', fileBody(pointsGeoJson(fixtureDir(), 40)));
    if (postgisDelivers) target = await createPostgisTarget();
  });
  afterAll(async () => {
    await worker?.stop();
    await files?.close();
    await sut?.close();
    temporal?.stop();
    await target?.drop();
  });

  it('the Run finishes, and the Schedule is still there after the server and the API restart', async () => {
    const { api, job } = await setUp(
      sut,
      files,
      target ? { type: 'postgis', configuration: target.configuration } : { type: 'webhook', configuration: { url: `${files.url}/hook` } },
    );
    const created = await job({ schedule: { kind: 'daily', timezone: 'Europe/Zurich', hour: 4, minute: 45 } });
    const gate = files.hold('/points');
    const run = (await api.call('POST', `/api/v1/jobs/${created.id}/run`)).json();
    await api.waitForRun(created.id, run.id, (r) => r.status === 'running');
    await until('the Source request held', () => gate.waiting() > 0);

    temporal.stop();
    await new Promise((r) => temporal.process.once('exit', r));
    // The outage itself: Temporal stays down a while (the tested time, so a sleep on purpose).
    await sleep(2_000);
    temporal = await startTemporal(dataDir, port, { dbFile });
    gate.release();

    const done = await api.waitForRun(created.id, run.id, (r) => finished(r.status), 240_000);
    expect(done.steps[0]!.status).toBe('succeeded');
    if (postgisDelivers) {
      expect(done.status).toBe('succeeded');
      expect((await target!.query<{ n: string }>('SELECT count(*) AS n FROM public.points'))[0]!.n).toBe('40');
    } else {
      expect(done.status).toBe('succeeded');
    }

    const schedule = sut.services.temporal!.schedule.getHandle(scheduleIdOf(created.id));
    expect((await schedule.describe()).info.nextActionTimes[0]!.toISOString()).toBe(created.next_run_at);
    await sut.restart();
    const again = (await api.call('GET', `/api/v1/jobs/${created.id}`)).json();
    expect(again.next_run_at).toBe(created.next_run_at);
    expect((await sut.services.temporal!.schedule.getHandle(scheduleIdOf(created.id)).describe()).state.paused).toBe(false);
  }, 400_000);
});

describe.skipIf(skip)('PostgreSQL restarted under load', () => {
  let pg: LocalPostgres;
  let pgDir: string;
  let pgPort: number;
  let sut: TestApp;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let files: FileServer;

  beforeAll(async () => {
    pgDir = path.join(mkdtempSync(path.join(tmpdir(), 'pg-restart-')), 'pg');
    pgPort = await freePort();
    pg = await startPostgres(pgDir, pgPort, ['service'], { fresh: true, durable: false });
    sut = await createTestApp({ temporal: true, databaseUrl: pg.url('service') });
    worker = await startTestWorker(sut.services.config);
    files = await startFileServer();
    files.put('/points', fileBody(pointsGeoJson(fixtureDir(), 10)));
  });
  afterAll(async () => {
    await worker?.stop();
    await files?.close();
    await sut?.close();
    pg?.stop();
  });

  it('read models converge, every Run finishes, and a rebuild from zero equals the live tables', async () => {
    const { api, job } = await setUp(sut, files, { type: 'webhook', configuration: { url: `${files.url}/hook` } });
    const jobs = [];
    for (let i = 0; i < 6; i++) jobs.push(await job({ name: `job ${i}` }));

    // Load: Run Now and updates on every Job, while the database goes down and comes back.
    const accepted: { jobId: string; runId: string }[] = [];
    let failures = 0;
    let stop = false;
    const load = async (j: { id: string }, n: number) => {
      for (let k = 0; !stop; k++) {
        const res = await api.call('POST', `/api/v1/jobs/${j.id}/run`, undefined, { 'idempotency-key': `load-${n}-${k}` }).catch(() => null);
        if (res?.statusCode === 201) accepted.push({ jobId: j.id, runId: res.json().id });
        else failures += 1;
        await api.call('POST', `/api/v1/jobs/${j.id}/${k % 2 ? 'enable' : 'disable'}`).catch(() => null);
        // The load's pace (about six requests a second per Job), not a wait for something.
        await sleep(150);
      }
    };
    const loaders = jobs.map((j, n) => load(j, n));
    // Load before, during and after the outage: Runs accepted before it, and again after it.
    await until('Runs accepted before the outage', () => accepted.length >= 6, 60_000);
    pg.stop();
    // The outage itself: the database stays down a while (the tested time, so a sleep on purpose).
    await sleep(2_000);
    pg = await startPostgres(pgDir, pgPort, ['service'], { durable: false });
    const atRestart = accepted.length;
    await until('Runs accepted again after the restart', () => accepted.length >= atRestart + 6, 120_000);
    stop = true;
    await Promise.all(loaders);
    expect(accepted.length).toBeGreaterThan(10);

    // Every accepted Run finishes (Temporal retried the activities that hit the outage).
    for (const { jobId, runId } of accepted) {
      const run: RunJson = await api.waitForRun(jobId, runId, (r) => finished(r.status), 240_000);
      expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    }
    await sut.services.projections.catchUp();
    const stuck = await sut.services.pool.anyFirst(sql.unsafe`SELECT id FROM rm.runs WHERE status IN ('queued', 'running')`);
    expect(stuck).toEqual([]);

    await rebuildProjections(sut.services.store, sut.services.pool, projectors, { target: 'rm_verify' });
    for (const projector of projectors) {
      for (const table of projector.tables) {
        const rows = async (schema: string) =>
          (await sut.services.pool.any(sql.unsafe`SELECT to_jsonb(t) AS row FROM ${sql.identifier([schema, table])} t ORDER BY 1`)).map((r) =>
            JSON.stringify((r as { row: unknown }).row),
          );
        expect(await rows('rm_verify'), `${projector.name}.${table}`).toEqual(await rows('rm'));
      }
    }
    console.log(`[faults] ${accepted.length} Runs accepted, ${failures} requests refused (database restarting, or a full queue)`);
  }, 600_000);
});
