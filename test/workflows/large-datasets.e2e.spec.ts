import { statSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest, JOB_SCOPES } from '../support/e2e.js';
import { fixtureDir, manyPointsGpkg } from '../support/fixtures.js';
import { fileBody } from '../support/jobs.js';
import { temporalAddress } from '../support/worker.js';

/*
 * Issue 22: datasets as large as GIS teams have. A GeoPackage's spatial index is built when the
 * written file is closed, which takes seconds for a few hundred thousand points; that work must
 * not hold the worker's event loop, or the activity's heartbeats stop and Temporal gives the
 * attempt up. The heartbeat timeout is set below the finalisation's length here
 * (SVC_HEARTBEAT_TIMEOUT_S), so an attempt that blocks fails, and a retry would be counted on the
 * step (failed_attempts). The limit of a Job's input is in job-input-limit.e2e.spec.ts (an app
 * of another configuration).
 */

const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');

/** Points whose GeoPackage takes several seconds to finalise (its R-tree) on the test machine. */
const BIG = 150_000;
const it = e2eTest({
  worker: true,
  scopes: [...JOB_SCOPES, 'workspaces:read', 'workspaces:write', 'workspaces:run', 'sources:read', 'destinations:read'],
  env: { SVC_HEARTBEAT_TIMEOUT_S: '2', SVC_MAX_UPLOAD_MB: '64' },
});

describe.skipIf(skip)('large datasets: heartbeats keep flowing while GDAL finalises a big output', () => {
  let big: string;
  const dir = fixtureDir();

  it.beforeAll(async ({ files, worker: _worker }) => {
    big = manyPointsGpkg(dir, BIG);
    files.put('/points.gpkg', fileBody(big), 'application/geopackage+sqlite3');
  }, 180_000);

  it('a Workspace convert to GeoPackage succeeds on its first attempt with a 2 s heartbeat timeout', async ({ send, upload }) => {
    const created = await upload(big, { filename: 'points.gpkg' });
    expect(created.statusCode, created.body).toBe(201);
    const ws = created.json();
    const converted = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GPKG' });
    expect(converted.statusCode, converted.body).toBe(200);
    expect(converted.json()).toMatchObject({ status: 'completed', output: { format: 'GPKG', layers: ['points'] } });
    expect(converted.json().output.size).toBeGreaterThan(statSync(big).size / 2);
  }, 240_000);

  it('a Job url → GeoPackage succeeds on its first attempt, the convert step with no failed attempt and its progress recorded', async ({
    jobs: api,
    files,
  }) => {
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
