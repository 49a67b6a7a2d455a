import { Readable } from 'node:stream';
import { describe, expect } from 'vitest';
import { sql } from 'slonik';
import { pruneRuns } from '../../application/run-retention.js';
import { runStream } from '../../domain/runs/run.js';
import { runWorkflowId } from '../../temporal/ids.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest, JOB_SCOPES } from '../support/e2e.js';
import { fixtureDir, pointsGeoJson } from '../support/fixtures.js';
import { fileBody } from '../support/jobs.js';
import { temporalAddress } from '../support/worker.js';

const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');
const DAY = 86_400_000;
const it = e2eTest({ worker: true, scopes: JOB_SCOPES });

describe.skipIf(skip)("Run retention (SVC_RUN_RETENTION_DAYS) and a deleted Job's Runs", () => {
  it.beforeAll(({ files }) => {
    files.put('/places.geojson', fileBody(pointsGeoJson(fixtureDir(), 5)));
  });

  it("keeps a deleted Job's Runs readable, then removes them whole once they are older than the retention", async ({ sut, jobs: api, files }) => {
    const sourceId = (await api.call('POST', '/api/v1/sources', { name: 'p', type: 'url', configuration: { url: `${files.url}/places.geojson` } })).json().id;
    const hookId = (await api.call('POST', '/api/v1/destinations', { name: 'h', type: 'webhook', configuration: { url: `${files.url}/hook` } })).json().id;
    const job = (
      await api.call('POST', '/api/v1/jobs', {
        name: 'kept a while',
        source_id: sourceId,
        output_format: 'GeoJSON',
        destination_id: hookId,
        pipeline: { transform: false },
      })
    ).json();
    const run = await api.runNow(job.id);
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    expect((await api.call('DELETE', `/api/v1/jobs/${job.id}`)).statusCode).toBe(204);

    const shown = await api.call('GET', `/api/v1/jobs/${job.id}/runs/${run.id}`);
    expect(shown.statusCode, shown.body).toBe(200);
    expect(shown.json()).toMatchObject({ id: run.id, status: 'succeeded', job_snapshot: { name: 'kept a while' } });
    expect((await api.call('GET', '/api/v1/runs')).json().items.map((r: { id: string }) => r.id)).toContain(run.id);
    // A Run's files go when it ends; what a crashed worker left behind goes with the Run.
    await sut.services.files.put(run.id, 'left-behind/part.gpkg', Readable.from(['not finished']));
    expect((await sut.services.files.list('runs')).map((f) => f.owner)).toContain(run.id);

    const services = sut.services;
    const finished = Date.parse(run.finished_at!);
    // 0 keeps Runs forever; a Run younger than the retention stays.
    expect(await pruneRuns({ ...services, config: { ...services.config, runRetentionDays: 0 } }, new Date(finished + 1000 * DAY))).toEqual({ runs: 0 });
    expect(await pruneRuns({ ...services, config: { ...services.config, runRetentionDays: 30 } }, new Date(finished + 29 * DAY))).toEqual({ runs: 0 });
    expect((await api.call('GET', `/api/v1/jobs/${job.id}/runs/${run.id}`)).statusCode).toBe(200);

    const pruned = await pruneRuns({ ...services, config: { ...services.config, runRetentionDays: 30 } }, new Date(finished + 31 * DAY));
    expect(pruned.runs).toBeGreaterThanOrEqual(1);
    expect((await api.call('GET', `/api/v1/jobs/${job.id}/runs/${run.id}`)).statusCode).toBe(404);
    expect((await api.call('GET', '/api/v1/runs')).json().items.map((r: { id: string }) => r.id)).not.toContain(run.id);
    expect(await services.pool.exists(sql.unsafe`SELECT 1 FROM rm.runs WHERE id = ${run.id}`)).toBe(false);
    expect(await services.store.readStream(runStream(run.id))).toEqual([]);
    expect((await services.files.list('runs')).map((f) => f.owner)).not.toContain(run.id);
    // The workflow's history is gone from Temporal too. Temporal deletes it by a task of its own,
    // queued behind the rest of the dev server's work: seconds alone, half a minute and more on a
    // loaded CI machine, so the wait is for the condition with room to spare.
    const handle = services.temporal!.workflow.getHandle(runWorkflowId(run.id));
    await expect
      .poll(
        () =>
          handle.describe().then(
            () => 'still there',
            (error: Error) => error.message,
          ),
        { timeout: 150_000, interval: 500 },
      )
      .toMatch(/not found/i);
    // A second pass finds nothing more to do.
    expect(await pruneRuns({ ...services, config: { ...services.config, runRetentionDays: 30 } }, new Date(finished + 31 * DAY))).toEqual({ runs: 0 });
  }, 240_000);
});
