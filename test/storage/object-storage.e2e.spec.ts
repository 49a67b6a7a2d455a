import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import gdal from 'gdal-async';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupExpiredWorkspaces } from '../../application/workspace-cleanup.js';
import { S3FileStore } from '../../platform/s3-file-store.js';
import { bearer, createTestApp, createToken, login, type TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { fixtureDir, manyPointsGpkg, pointsGeoJson } from '../support/fixtures.js';
import { createPostgisTarget, fileBody, finished, jobsClient, startFileServer, type FileServer } from '../support/jobs.js';
import { untilStagingTable } from '../support/postgis.js';
import { multipartFile } from '../support/multipart.js';
import { spawnWorkerProcess, temporalAddress } from '../support/worker.js';
import { s3ServerUnavailable, startS3Server, type S3Server } from '../../devservers/s3/server.js';
import { waitForPollers } from '../../devservers/temporal.js';
import { bucketAdmin, writerCredentials } from '../support/s3.js';
import { until } from '../support/until.js';

/*
 * Several hosts sharing nothing but the database, Temporal and an S3 bucket (moto): two API
 * processes and worker processes, each with its own empty data folder, SVC_STORAGE_URL set.
 * Requests alternate between the two APIs; a worker is killed mid-step and replaced by one that
 * has never seen the Run; cleanup leaves no object of an expired Workspace or a finished Run.
 */

const skip =
  skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal') || s3ServerUnavailable();
const BUCKET = 'geoflow-storage';
const PREFIX = 'install-a/';
const emptyDataDir = () => mkdtempSync(path.join(tmpdir(), 'svc-host-'));

describe.skipIf(skip)('files in object storage: API replicas and workers on separate hosts', () => {
  let s3: S3Server;
  let admin: S3Client;
  let apiA: TestApp;
  let apiB: TestApp;
  let storageEnv: Record<string, string>;
  const workers: Awaited<ReturnType<typeof spawnWorkerProcess>>[] = [];
  let files: FileServer;
  let target: Awaited<ReturnType<typeof createPostgisTarget>>;
  let token: string;
  let now = Date.now();
  const dir = fixtureDir();

  const startWorker = async () => {
    const worker = await spawnWorkerProcess({ ...apiA.env, ...storageEnv, SVC_DATA_DIR: emptyDataDir() }, apiA.services.config);
    workers.push(worker);
    return worker;
  };

  const keys = async (prefix = PREFIX) => {
    const found: string[] = [];
    let token: string | undefined;
    do {
      const page = await admin.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix, ContinuationToken: token }));
      found.push(...(page.Contents ?? []).map((o) => o.Key!));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return found;
  };

  beforeAll(async () => {
    s3 = await startS3Server();
    admin = await bucketAdmin(s3, BUCKET);
    storageEnv = {
      SVC_STORAGE_URL: `s3://${BUCKET}/${PREFIX}`,
      SVC_STORAGE_ENDPOINT: s3.endpoint,
      SVC_STORAGE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: s3.writer.access_key,
      AWS_SECRET_ACCESS_KEY: s3.writer.secret_key,
      AWS_REGION: 'us-east-1',
      SVC_SECRET_KEY: randomBytes(32).toString('hex'),
      // A dead worker's step moves to another after this long without a heartbeat.
      SVC_HEARTBEAT_TIMEOUT_S: '5',
    };
    apiA = await createTestApp({ temporal: true, env: storageEnv });
    // The second replica: same database, Temporal, task queue and bucket; its own empty data folder.
    apiB = await createTestApp({ temporal: true, databaseUrl: apiA.env.SVC_DATABASE_URL, env: { ...storageEnv, SVC_TASK_QUEUE: apiA.env.SVC_TASK_QUEUE! } });
    apiA.services.clock = () => new Date(now);
    expect(apiB.services.config.dataDir).not.toBe(apiA.services.config.dataDir);
    await startWorker();
    await startWorker();
    // Both can run a step (activity tasks), not only pick up a workflow task.
    await waitForPollers(apiA.services.config, { count: 2, kind: 'activity', timeoutMs: 60_000 });
    files = await startFileServer();
    target = await createPostgisTarget();
    const cookie = await login(apiA.app);
    token = await createToken(apiB.app, cookie, [
      'workspaces:read',
      'workspaces:write',
      'workspaces:run',
      'jobs:read',
      'jobs:write',
      'jobs:run',
      'sources:write',
      'destinations:write',
    ]);
  }, 240_000);

  afterAll(async () => {
    for (const w of workers) await w.kill('SIGTERM');
    await files?.close();
    await apiB?.close();
    await apiA?.close();
    await target?.drop();
    await s3?.stop();
  });

  /** A, B, A, B…: every request on the other replica than the one before. */
  let turn = 0;
  const next = () => (turn++ % 2 === 0 ? apiA : apiB).app;
  const upload = (file: string) => {
    const m = multipartFile(file);
    return next().inject({ method: 'POST', url: '/api/v1/workspaces', payload: m.payload, headers: { ...m.headers, ...bearer(token) } });
  };
  const get = (url: string) => next().inject({ method: 'GET', url, headers: bearer(token) });
  const send = (method: 'PUT' | 'POST', url: string, payload: object) => next().inject({ method, url, payload, headers: bearer(token) });

  const workspaceIds: string[] = [];
  const runIds: string[] = [];

  it('S3FileStore: publishing replaces an earlier attempt, the cache stays within its bound and refetches what it dropped', async () => {
    // A process's store: its own empty cache of 1500 bytes.
    const storeOfAProcess = () =>
      new S3FileStore({
        bucket: BUCKET,
        prefix: 'unit/',
        endpoint: s3.endpoint,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials: writerCredentials(s3),
        cacheDir: emptyDataDir(),
        cacheBytes: 1500,
        minIdleMs: 0,
      });
    const store = storeOfAProcess();
    let dir = await store.workDir('run_u1', 'extract');
    writeFileSync(path.join(dir, 'left-by-attempt-1.txt'), 'x');
    await store.publish('run_u1', 'extract');
    dir = await store.workDir('run_u1', 'extract');
    mkdirSync(path.join(dir, 'dataset'));
    writeFileSync(path.join(dir, 'dataset', 'a.csv'), 'a'.repeat(1000));
    await store.publish('run_u1', 'extract');
    expect(await keys('unit/')).toEqual(['unit/runs/run_u1/extract/dataset/a.csv']);

    // A second process (its own empty cache) reads it; a 1000-byte folder and another push the first out.
    const other = storeOfAProcess();
    const first = await other.local('run_u1', 'extract/dataset');
    expect(readFileSync(path.join(first, 'a.csv'), 'utf8')).toHaveLength(1000);
    expect(await other.put('ws_u2', 'original/b.csv', Readable.from([Buffer.alloc(1000, 'b')]))).toBe(1000);
    expect(other.cachedBytes()).toBeLessThanOrEqual(1500);
    expect(existsSync(first)).toBe(false);
    expect(readFileSync(path.join(await other.local('run_u1', 'extract/dataset'), 'a.csv'), 'utf8')).toHaveLength(1000);
    expect(Buffer.concat(await (await store.get('ws_u2', 'original/b.csv')).body.toArray())).toHaveLength(1000);
    expect((await store.list('runs')).map((o) => o.owner)).toEqual(['run_u1']);
    await store.remove('run_u1');
    await store.remove('ws_u2');
    expect(await keys('unit/')).toEqual([]);
  });

  it('serves the Workspace main path with requests alternating between two API replicas', async () => {
    const created = await upload(pointsGeoJson(dir));
    expect(created.statusCode, created.body).toBe(201);
    const ws = created.json();
    workspaceIds.push(ws.id);
    expect(ws).toMatchObject({ status: 'inspected', driver: 'GeoJSON' });
    // The upload is in the bucket, under the Workspace's prefix, once: a GeoJSON is its own
    // dataset, read where it is stored (not stored again under dataset/).
    const stored = await keys(`${PREFIX}workspaces/${ws.id}/`);
    expect(stored).toEqual([`${PREFIX}workspaces/${ws.id}/original/places.geojson`]);

    expect((await get(`/api/v1/workspaces/${ws.id}`)).json()).toMatchObject({ id: ws.id, status: 'inspected' });
    const preview = await get(`/api/v1/workspaces/${ws.id}/data-preview?limit=10`);
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json()).toMatchObject({ row_count: 25, preview_row_count: 10 });
    const map = await get(`/api/v1/workspaces/${ws.id}/spatial-preview`);
    expect(map.statusCode, map.body).toBe(200);
    expect(map.json()).toMatchObject({ returned_count: 25 });

    const pipeline = await send('PUT', `/api/v1/workspaces/${ws.id}/transformations`, { operations: [{ type: 'filter', where: 'population > 20000' }] });
    expect(pipeline.statusCode, pipeline.body).toBe(200);
    const tPreview = await get(`/api/v1/workspaces/${ws.id}/transform-preview`);
    expect(tPreview.statusCode, tPreview.body).toBe(200);
    expect(tPreview.json().preview_row_count).toBe(5);
    const tMap = await get(`/api/v1/workspaces/${ws.id}/transform-spatial-preview`);
    expect(tMap.statusCode, tMap.body).toBe(200);

    const converted = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GPKG' });
    expect(converted.statusCode, converted.body).toBe(200);
    expect(converted.json()).toMatchObject({ status: 'completed', output: { format: 'GPKG' } });
    for (let i = 0; i < 2; i += 1) {
      // Downloaded from each replica in turn: neither converted it.
      const download = await get(`/api/v1/workspaces/${ws.id}/download`);
      expect(download.statusCode, download.body).toBe(200);
      const out = path.join(dir, `from-storage-${i}.gpkg`);
      writeFileSync(out, download.rawPayload);
      const ds = gdal.open(out);
      expect(ds.layers.get(0).features.count()).toBe(5);
      ds.close();
    }
    // Nothing of the Workspace was written into either replica's data folder itself (only their caches).
    for (const api of [apiA, apiB]) expect(existsSync(path.join(api.services.config.dataDir, 'workspaces'))).toBe(false);

    // The browser's pages are the same on both.
    const pageA = await apiA.app.inject({ method: 'GET', url: '/' });
    const pageB = await apiB.app.inject({ method: 'GET', url: '/' });
    expect(pageA.statusCode).toBe(pageB.statusCode);
    expect(pageA.body).toBe(pageB.body);
  }, 120_000);

  it('loses nothing when the API restarts between upload and convert (its cache emptied)', async () => {
    const m = multipartFile(pointsGeoJson(dir, 12));
    const created = await apiA.app.inject({ method: 'POST', url: '/api/v1/workspaces', payload: m.payload, headers: { ...m.headers, ...bearer(token) } });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    workspaceIds.push(id);
    await apiA.restart();
    apiA.services.clock = () => new Date(now);
    expect(
      readdirSync(path.join(apiA.services.config.dataDir, 'cache')).flatMap((host) => readdirSync(path.join(apiA.services.config.dataDir, 'cache', host))),
    ).toEqual([]);
    const converted = await apiA.app.inject({
      method: 'POST',
      url: `/api/v1/workspaces/${id}/convert`,
      payload: { output_format: 'CSV' },
      headers: bearer(token),
    });
    expect(converted.statusCode, converted.body).toBe(200);
    const download = await apiA.app.inject({ method: 'GET', url: `/api/v1/workspaces/${id}/download`, headers: bearer(token) });
    expect(download.statusCode).toBe(200);
    expect(download.body.trim().split('\n')).toHaveLength(13);
    // Byte ranges are the object store's own ranged GET (a PMTiles viewer reads outputs this way).
    const size = download.rawPayload.length;
    const ranged = (range: string) => apiA.app.inject({ method: 'GET', url: `/api/v1/workspaces/${id}/download`, headers: { ...bearer(token), range } });
    const part = await ranged('bytes=5-14');
    expect([part.statusCode, part.headers['content-range']]).toEqual([206, `bytes 5-14/${size}`]);
    expect(part.rawPayload).toEqual(download.rawPayload.subarray(5, 15));
    const last = await ranged('bytes=-7');
    expect([last.statusCode, last.headers['content-range']]).toEqual([206, `bytes ${size - 7}-${size - 1}/${size}`]);
    expect(last.rawPayload).toEqual(download.rawPayload.subarray(size - 7));
    const beyond = await ranged(`bytes=${size + 10}-`);
    expect([beyond.statusCode, beyond.headers['content-range']]).toEqual([416, `bytes */${size}`]);
  }, 120_000);

  const setUpJob = async (url: string, extra: Record<string, unknown> = {}) => {
    const api = jobsClient(next, token);
    const source = (await api.call('POST', '/api/v1/sources', { name: 'points', type: 'url', configuration: { url } })).json();
    const destination = (await api.call('POST', '/api/v1/destinations', { name: 'target', type: 'postgis', configuration: target.configuration })).json();
    const res = await api.call('POST', '/api/v1/jobs', { name: 'points', source_id: source.id, destination_id: destination.id, ...extra });
    expect(res.statusCode, res.body).toBe(201);
    return { api, job: res.json() };
  };

  it('runs a Job to succeeded with its steps on two workers that share only the bucket', async () => {
    files.put('/places', fileBody(pointsGeoJson(dir, 30)));
    const { api, job } = await setUpJob(`${files.url}/places`, {
      destination_target: { table: 'places', write_mode: 'replace' },
      transform_mode: 'manual',
      pipeline: { transform: true, convert: true },
      operations: [{ type: 'filter', where: 'population > 10000' }],
      output_format: 'GPKG',
    });
    const run = (await api.call('POST', `/api/v1/jobs/${job.id}/run`)).json();
    runIds.push(run.id);
    const done = await api.waitForRun(job.id, run.id, (r) => finished(r.status), 120_000);
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    expect(done.steps.map((s) => s.status)).toEqual(done.steps.map(() => 'succeeded'));
    const [row] = await target.query<{ n: string }>('SELECT count(*) AS n FROM public.places');
    expect(row!.n).toBe('20');
  }, 180_000);

  it('finishes a Run on another worker, with every row exactly once, when the one running its step is killed (SIGKILL)', async () => {
    // Past the size a delivery loads inside the worker: the load runs as ogr2ogr and takes a while.
    const POINTS = 300_000;
    // One worker left: the one that will be killed in the middle of the deliver step.
    await workers.shift()!.kill('SIGTERM');
    const doomed = workers[0]!;
    files.put('/many', fileBody(manyPointsGpkg(dir, POINTS)), 'application/geopackage+sqlite3');
    const { api, job } = await setUpJob(`${files.url}/many`, {
      destination_target: { table: 'many', write_mode: 'replace' },
      pipeline: { transform: false, convert: false },
    });
    const run = (await api.call('POST', `/api/v1/jobs/${job.id}/run`)).json();
    runIds.push(run.id);
    await api.waitForRun(job.id, run.id, (r) => r.steps.find((s) => s.name === 'deliver')?.status === 'running' || finished(r.status), 120_000);
    // Killed once the load has begun writing its staging table, not after a guess at how long it takes.
    await untilStagingTable((text) => target.query(text));
    const before = await api.waitForRun(job.id, run.id, () => true);
    expect(before.status, 'the deliver step was still running when the worker was killed').toBe('running');
    await doomed.kill('SIGKILL');
    workers.shift();
    // A worker with an empty data folder, that has never seen this Run: it reads the step's input from the bucket.
    await startWorker();
    const done = await api.waitForRun(job.id, run.id, (r) => finished(r.status), 240_000);
    expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    expect(done.stats.features_written).toBe(POINTS);
    const [count] = await target.query<{ n: string; ids: string }>('SELECT count(*) AS n, count(DISTINCT id) AS ids FROM public.many');
    expect(count).toEqual({ n: String(POINTS), ids: String(POINTS) });
  }, 400_000);

  it('leaves no object of a finished Run or an expired Workspace in the bucket after cleanup', async () => {
    expect(runIds).toHaveLength(2);
    expect(workspaceIds).toHaveLength(2);
    // A finished Run's objects go when its workflow ends; the regular cleanup catches any left over.
    now += 2 * apiA.services.config.workspaceTtlMs + 60_000;
    // The replicas' own timers run the cleanup too, under one advisory lock: a call that finds it
    // taken does nothing, so call until the two Workspaces have been expired by this clock.
    let expired = 0;
    await until(
      'the cleanup to expire both Workspaces',
      async () => {
        expired += (await cleanupExpiredWorkspaces(apiA.services)).expired;
        return expired >= 2;
      },
      10_000,
      200,
    );
    expect(expired).toBe(2);
    const left = await keys();
    for (const id of [...runIds, ...workspaceIds])
      expect(
        left.filter((k) => k.includes(`/${id}/`)),
        id,
      ).toEqual([]);
    for (const id of workspaceIds) expect((await get(`/api/v1/workspaces/${id}`)).json().error.code).toBe('job_expired');
  }, 120_000);
});
