import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTemporal, type LocalTemporal } from '../../scripts/local-services.js';
import { freePort } from '../../devservers/ports.js';
import { ADMIN } from '../support/app.js';
import { createTestDatabase, skipWithoutDatabase } from '../support/database.js';
import { fixtureDir, pointsGeoJson } from '../support/fixtures.js';
import { fileBody, finished, startFileServer, type RunJson } from '../support/jobs.js';
import { createPostgisDatabase } from '../support/postgis.js';
import { until, untilRead } from '../support/until.js';
import { checkOutRelease, previousRelease } from './release.js';
import { apiClient, nextMinuteAfter, startServiceProcesses, temporalMissing, tokenFor, type ServiceProcesses } from './support.js';

/*
 * An upgrade with work in flight: the previous release (the newest v* tag before HEAD, checked out
 * with git archive: test/ops/release.ts) runs the API and a worker with Runs running and queued
 * and two schedules set; it is stopped as an operator stops it (SIGTERM), the current code starts
 * on the same database, data folder, Temporal and task queue, and every Run finishes once and
 * every schedule fires. Workflow code that cannot replay the old histories, or a read model that
 * cannot read the old events, fails here.
 */
const release = previousRelease();
const skip = skipWithoutDatabase || temporalMissing || ('missing' in release && release.missing);
const SCOPES = ['jobs:read', 'jobs:write', 'jobs:run', 'sources:write', 'destinations:write'];
const ROWS = 3;

describe.skipIf(skip)(`upgrading from the previous release with Runs and schedules in flight${skip ? ` (skipped: ${skip})` : ''}`, () => {
  const cleanups: (() => unknown)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  });

  it('finishes every Run once and fires every schedule under the new code', async () => {
    const { tag } = release as { tag: string };
    const work = mkdtempSync(path.join(tmpdir(), 'svc-upgrade-'));
    chmodSync(work, 0o755);
    cleanups.push(() => rmSync(work, { recursive: true, force: true }));
    const oldTree = path.join(work, tag);
    const { node_modules } = checkOutRelease(tag, oldTree, path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'releases'));
    console.log(`[upgrade] from ${tag} (node_modules ${node_modules}) to HEAD`);

    const files = await startFileServer();
    cleanups.push(() => files.close());
    const target = await createPostgisDatabase();
    cleanups.push(() => target.drop());
    const db = await createTestDatabase();
    cleanups.push(() => db.drop());
    const temporal: LocalTemporal = await startTemporal(path.resolve(process.env.SVC_DATA_DIR ?? '.data'), await freePort());
    cleanups.push(() => temporal.stop());
    // The one install both releases run: its database, data folder (and key file), Temporal, queue.
    const env = {
      SVC_DATA_DIR: path.join(work, 'data'),
      SVC_DATABASE_URL: db.url,
      SVC_TEMPORAL_ADDRESS: temporal.address,
      SVC_TASK_QUEUE: 'upgrade',
      SVC_ADMIN_EMAIL: ADMIN.email,
      SVC_ADMIN_PASSWORD: ADMIN.password,
      SVC_HEARTBEAT_TIMEOUT_S: '5',
      SVC_LOG_LEVEL: 'warn',
    };
    const points = fileBody(pointsGeoJson(fixtureDir(), ROWS));
    files.put('/steady.geojson', points, 'application/geo+json', { validators: false });
    files.put('/held.geojson', points, 'application/geo+json', { validators: false });

    // ---- The previous release, with work in flight ----------------------------------------------
    let running: ServiceProcesses = await startServiceProcesses(oldTree, env);
    cleanups.push(() => running.stop());
    const token = await tokenFor(running.base, ADMIN, SCOPES);
    let call = apiClient(running.base, token);
    const post = async (url: string, body?: object) => {
      const res = await call('POST', url, body);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body;
    };
    const destination = await post('/api/v1/destinations', { name: 'gis', type: 'postgis', configuration: target.config });
    const steady = await post('/api/v1/sources', { name: 'steady', type: 'url', configuration: { url: `${files.url}/steady.geojson` } });
    const held = await post('/api/v1/sources', { name: 'held', type: 'url', configuration: { url: `${files.url}/held.geojson` } });
    const job = (name: string, source: { id: string }, extra: object = {}) =>
      post('/api/v1/jobs', { name, source_id: source.id, destination_id: destination.id, destination_target: { table: name, write_mode: 'append' }, ...extra });
    // Answers may fail while the processes are replaced: a failed read counts as not there yet.
    const waitForRun = async (jobId: string, runId: string, done: (r: RunJson) => boolean, timeoutMs = 180_000) => {
      let last: RunJson | undefined;
      return until(
        () => `Run ${runId} to get there: ${JSON.stringify(last)}\n${running.output()}`,
        async () => {
          const res = await call('GET', `/api/v1/jobs/${jobId}/runs/${runId}`).catch(() => null);
          if (res?.status !== 200) return undefined;
          last = res.body as RunJson;
          return done(last) && last;
        },
        timeoutMs,
        500,
      );
    };

    const before = await job('before', steady);
    const finishedBefore = (await post(`/api/v1/jobs/${before.id}/run`)) as RunJson;
    expect((await waitForRun(before.id, finishedBefore.id, (r) => finished(r.status))).status).toBe('succeeded');
    // In flight: a Run reading a Source that answers only after the upgrade, and one queued behind it.
    const inFlight = await job('in_flight', held);
    const hold = files.hold('/held.geojson');
    const first = (await post(`/api/v1/jobs/${inFlight.id}/run`)) as RunJson;
    const second = (await post(`/api/v1/jobs/${inFlight.id}/run`)) as RunJson;
    await waitForRun(inFlight.id, first.id, (r) => r.status === 'running');
    expect(hold.waiting()).toBeGreaterThan(0);
    // Two schedules set by the old release, firing a minute apart after the switch has begun.
    const fires = [nextMinuteAfter(45_000)];
    fires.push(new Date(fires[0]!.getTime() + 60_000));
    const scheduled = [];
    for (const [i, fire] of fires.entries()) {
      scheduled.push(
        await job(`scheduled_${i}`, steady, { schedule: { kind: 'daily', timezone: 'UTC', hour: fire.getUTCHours(), minute: fire.getUTCMinutes() } }),
      );
    }

    // ---- The upgrade: stop the old processes, start the current code on the same everything ----
    await running.stop();
    running = await startServiceProcesses(process.cwd(), env);
    call = apiClient(running.base, token);
    hold.release();

    // Every Run finishes, once.
    for (const run of [first, second]) {
      const done = await waitForRun(inFlight.id, run.id, (r) => finished(r.status));
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    }
    // Every schedule fires, once, under whichever release ran when its time came.
    for (const [i, fire] of fires.entries()) {
      const jobId = scheduled[i].id as string;
      const runs = await untilRead(
        `scheduled_${i} to have run`,
        async () => (await call('GET', `/api/v1/jobs/${jobId}/runs`)).body.items as RunJson[],
        (items) => items.some((r) => finished(r.status)),
        Math.max(0, fire.getTime() + 90_000 - Date.now()),
        1000,
      );
      expect(
        runs.map((r) => [r.trigger, r.scheduled_for, r.status]),
        `scheduled_${i}`,
      ).toEqual([['schedule', fire.toISOString(), 'succeeded']]);
    }
    const count = async (table: string) => Number((await target.sql<{ n: string }>(`SELECT count(*) AS n FROM public."${table}"`))[0]!.n);
    expect(await count('before')).toBe(ROWS);
    expect(await count('in_flight')).toBe(2 * ROWS);
    for (let i = 0; i < fires.length; i++) expect(await count(`scheduled_${i}`)).toBe(ROWS);
    const ledger = await target.sql<{ n: string; ids: string }>('SELECT count(*) AS n, count(DISTINCT delivery_id) AS ids FROM public._geoflow_deliveries');
    expect(ledger[0]).toEqual({ n: String(3 + fires.length), ids: String(3 + fires.length) });
    // And the old Runs read as before.
    expect((await call('GET', `/api/v1/jobs/${before.id}/runs/${finishedBefore.id}`)).body).toMatchObject({ status: 'succeeded' });
  }, 600_000);
});
