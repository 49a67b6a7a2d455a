import { statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, createToken, login, type TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { fixtureDir, manyPointsGpkg } from '../support/fixtures.js';
import { fileBody, jobsClient, startFileServer, type FileServer } from '../support/jobs.js';
import { multipartFile } from '../support/multipart.js';
import { startTestWorker, temporalAddress } from '../support/worker.js';

/*
 * Issue 22: datasets as large as GIS teams have. A GeoPackage's spatial index is built when the
 * written file is closed, which takes seconds for a few hundred thousand points; that work must
 * not hold the worker's event loop, or the activity's heartbeats stop and Temporal gives the
 * attempt up. The heartbeat timeout is set below the finalisation's length here
 * (SVC_HEARTBEAT_TIMEOUT_S), so an attempt that blocks fails, and a retry would be counted on the
 * step (failed_attempts).
 */

const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');

/** Points whose GeoPackage takes several seconds to finalise (its R-tree) on the test machine. */
const BIG = 150_000;

describe.skipIf(skip)('large datasets: heartbeats keep flowing while GDAL finalises a big output', () => {
  let sut: TestApp;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let files: FileServer;
  let token: string;
  let big: string;
  const dir = fixtureDir();

  beforeAll(async () => {
    big = manyPointsGpkg(dir, BIG);
    sut = await createTestApp({ temporal: true, env: { SVC_HEARTBEAT_TIMEOUT_S: '2', SVC_MAX_UPLOAD_MB: '64' } });
    worker = await startTestWorker(sut.services.config);
    files = await startFileServer();
    files.put('/points.gpkg', fileBody(big), 'application/geopackage+sqlite3');
    const cookie = await login(sut.app);
    token = await createToken(sut.app, cookie, [
      'workspaces:read',
      'workspaces:write',
      'workspaces:run',
      'jobs:read',
      'jobs:write',
      'jobs:run',
      'sources:read',
      'sources:write',
      'destinations:read',
      'destinations:write',
    ]);
  }, 180_000);
  afterAll(async () => {
    await worker?.stop();
    await files?.close();
    await sut?.close();
  });

  it('a Workspace convert to GeoPackage succeeds on its first attempt with a 2 s heartbeat timeout', async () => {
    const m = multipartFile(big, 'points.gpkg');
    const created = await sut.app.inject({ method: 'POST', url: '/api/v1/workspaces', payload: m.payload, headers: { ...m.headers, ...bearer(token) } });
    expect(created.statusCode, created.body).toBe(201);
    const ws = created.json();
    const converted = await sut.app.inject({
      method: 'POST',
      url: `/api/v1/workspaces/${ws.id}/convert`,
      payload: { output_format: 'GPKG' },
      headers: bearer(token),
    });
    expect(converted.statusCode, converted.body).toBe(200);
    expect(converted.json()).toMatchObject({ status: 'completed', output: { format: 'GPKG', layers: ['points'] } });
    expect(converted.json().output.size).toBeGreaterThan(statSync(big).size / 2);
  }, 240_000);

  it('a Job url → GeoPackage succeeds on its first attempt, the convert step with no failed attempt and its progress recorded', async () => {
    const api = jobsClient(() => sut.app, token);
    const source = (await api.call('POST', '/api/v1/sources', { name: 'points', type: 'url', configuration: { url: `${files.url}/points.gpkg` } })).json();
    const hook = (await api.call('POST', '/api/v1/destinations', { name: 'hook', type: 'webhook', configuration: { url: `${files.url}/hook` } })).json();
    const job = await api.call('POST', '/api/v1/jobs', {
      name: 'Big points',
      source_id: source.id,
      transform_mode: 'manual',
      operations: [],
      output_format: 'GPKG',
      destination_id: hook.id,
    });
    expect(job.statusCode, job.body).toBe(201);
    const started = await api.call('POST', `/api/v1/jobs/${job.json().id}/run`);
    expect(started.statusCode, started.body).toBe(201);
    const run = await api.waitForRun(job.json().id, started.json().id, undefined, 240_000);
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    const convert = run.steps.find((s) => s.name === 'convert')!;
    expect(convert).toMatchObject({ status: 'succeeded', failed_attempts: 0, last_error: null });
    // What the step said while it worked: the bytes it had written.
    expect((convert as { progress?: { bytes_written?: number } }).progress?.bytes_written).toBeGreaterThan(0);
    expect(run.stats.features_read).toBe(BIG);
  }, 300_000);
});

describe.skipIf(skip)('large datasets: a Job input has its own limit', () => {
  let sut: TestApp;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let files: FileServer;
  const dir = fixtureDir();

  beforeAll(async () => {
    // A Workspace upload limit of 1 MB and no Job input setting: the default must let a nightly file through.
    sut = await createTestApp({ temporal: true, env: { SVC_MAX_UPLOAD_MB: '1' } });
    worker = await startTestWorker(sut.services.config);
    files = await startFileServer();
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
    await files?.close();
    await sut?.close();
  });

  it('a Job whose Source is larger than the Workspace upload limit runs to succeeded', async () => {
    const file = manyPointsGpkg(dir, 20_000);
    expect(statSync(file).size).toBeGreaterThan(sut.services.config.maxUploadBytes);
    files.put('/points.gpkg', fileBody(file), 'application/geopackage+sqlite3');
    const cookie = await login(sut.app);
    const token = await createToken(sut.app, cookie, [
      'jobs:read',
      'jobs:write',
      'jobs:run',
      'sources:read',
      'sources:write',
      'destinations:read',
      'destinations:write',
    ]);
    const api = jobsClient(() => sut.app, token);
    const source = (await api.call('POST', '/api/v1/sources', { name: 'points', type: 'url', configuration: { url: `${files.url}/points.gpkg` } })).json();
    const hook = (await api.call('POST', '/api/v1/destinations', { name: 'hook', type: 'webhook', configuration: { url: `${files.url}/hook` } })).json();
    const job = (
      await api.call('POST', '/api/v1/jobs', {
        name: 'Nightly points',
        source_id: source.id,
        transform_mode: 'manual',
        operations: [],
        destination_id: hook.id,
      })
    ).json();
    const started = await api.call('POST', `/api/v1/jobs/${job.id}/run`);
    expect(started.statusCode, started.body).toBe(201);
    const run = await api.waitForRun(job.id, started.json().id, undefined, 120_000);
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    expect(run.stats).toMatchObject({ features_read: 20_000 });
    expect(files.received.some((r) => r.headers['x-geoflow-delivery'] === run.id)).toBe(true);
  }, 180_000);
});
