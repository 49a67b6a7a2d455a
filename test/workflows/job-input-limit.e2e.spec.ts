import { statSync } from 'node:fs';
import { describe, expect } from 'vitest';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest, JOB_SCOPES } from '../support/e2e.js';
import { fixtureDir, manyPointsGpkg } from '../support/fixtures.js';
import { fileBody } from '../support/jobs.js';
import { temporalAddress } from '../support/worker.js';

/*
 * Issue 22: a Job's input is not a Workspace upload. With a Workspace upload limit of 1 MB and no
 * Job input setting, the default must let a nightly file through.
 */

const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');
const it = e2eTest({ worker: true, scopes: [...JOB_SCOPES, 'sources:read', 'destinations:read'], env: { SVC_MAX_UPLOAD_MB: '1' } });

describe.skipIf(skip)('large datasets: a Job input has its own limit', () => {
  const dir = fixtureDir();

  it('a Job whose Source is larger than the Workspace upload limit runs to succeeded', async ({ sut, files, jobs: api }) => {
    const file = manyPointsGpkg(dir, 20_000);
    expect(statSync(file).size).toBeGreaterThan(sut.services.config.maxUploadBytes);
    files.put('/points.gpkg', fileBody(file), 'application/geopackage+sqlite3');
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
