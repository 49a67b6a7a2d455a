import gdal from 'gdal-async';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import type { TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { fixtureDir, pointsGeoJson } from '../support/fixtures.js';
import { connectorByType, connectors } from '../../connectors/registry.js';
import { e2eTest, JOB_SCOPES, type E2eFixtures } from '../support/e2e.js';
import { createPostgisTarget, fileBody, finished, jobsClient, type FileServer } from '../support/jobs.js';
import { until, untilRead } from '../support/until.js';
import { temporalAddress } from '../support/worker.js';

const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');
const postgisDelivers = connectorByType('postgis')?.implemented === true;
// Both suites below share the app and worker (one e2eTest per file).
const it = e2eTest({ worker: true, scopes: [...JOB_SCOPES, 'sources:read', 'destinations:read', 'recipes:read', 'recipes:write'] });

describe.skipIf(skip)('Jobs through /api/v1', () => {
  let sut: TestApp;
  let files: FileServer;
  let api: ReturnType<typeof jobsClient>;
  let tokenFor: E2eFixtures['tokenFor'];
  let sourceId: string;
  let destinationId: string;
  let hookId: string;
  const dir = fixtureDir();

  it.beforeAll(async ({ sut: theSut, files: theFiles, jobs: theJobs, tokenFor: theTokenFor }) => {
    sut = theSut;
    files = theFiles;
    api = theJobs;
    tokenFor = theTokenFor;
    files.put('/places.geojson', fileBody(pointsGeoJson(dir, 25)));
    sourceId = (await api.call('POST', '/api/v1/sources', { name: 'places', type: 'url', configuration: { url: `${files.url}/places.geojson` } })).json().id;
    destinationId = (
      await api.call('POST', '/api/v1/destinations', {
        name: 'warehouse',
        type: 'postgis',
        configuration: { host: '127.0.0.1', database: 'gis', username: 'loader', password: 'not used here' },
      })
    ).json().id;
    // Runs deliver to a webhook on the test server (a real HTTP delivery), the database cases to PostGIS below.
    hookId = (await api.call('POST', '/api/v1/destinations', { name: 'hook', type: 'webhook', configuration: { url: `${files.url}/hook` } })).json().id;
  });

  const body = (extra: Record<string, unknown> = {}) => ({
    name: 'Places to the warehouse',
    source_id: sourceId,
    transform_mode: 'manual',
    operations: [{ type: 'rename_column', from: 'name', to: 'label' }],
    output_format: 'GPKG',
    destination_id: hookId,
    ...extra,
  });
  const create = async (extra: Record<string, unknown> = {}) => {
    const res = await api.call('POST', '/api/v1/jobs', body(extra));
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  };

  it('creates, lists, gets, updates and deletes a Job with the documented shape', async () => {
    const job = await create({ schedule: { kind: 'daily', timezone: 'US/Eastern', hour: 6, minute: 15 } });
    expect(job.id).toMatch(/^job_/);
    expect(job).toMatchObject({
      name: 'Places to the warehouse',
      source_id: sourceId,
      source_resource: null,
      transform_mode: 'manual',
      output_fields: null,
      recipe_id: null,
      sql: null,
      python_script: null,
      output_format: 'GPKG',
      destination_id: hookId,
      destination_target: {},
      schedule: { kind: 'daily', timezone: 'America/New_York', hour: 6, minute: 15 },
      pipeline: {},
      stages: { transform: true, python: false, convert: true },
      enabled: true,
      disabled_reason: null,
      last_run: null,
      sync: { supported: true, cursor: null, reset_pending: false, reinitialize_pending: false },
    });
    expect(Date.parse(job.next_run_at)).toBeGreaterThan(Date.now());
    expect((await api.call('GET', `/api/v1/jobs/${job.id}`)).json()).toEqual(job);
    expect((await api.call('GET', '/api/v1/jobs?limit=200')).json().items.map((j: { id: string }) => j.id)).toContain(job.id);

    const updated = await api.call('PUT', `/api/v1/jobs/${job.id}`, body({ name: 'Renamed', schedule: null }));
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json()).toMatchObject({ name: 'Renamed', schedule: null, next_run_at: null });

    const disabled = await api.call('POST', `/api/v1/jobs/${job.id}/disable`);
    expect(disabled.json()).toMatchObject({ enabled: false, disabled_reason: null });
    expect((await api.call('POST', `/api/v1/jobs/${job.id}/enable`)).json().enabled).toBe(true);

    expect((await api.call('DELETE', `/api/v1/jobs/${job.id}`)).statusCode).toBe(204);
    expect((await api.call('GET', `/api/v1/jobs/${job.id}`)).json().error.code).toBe('job_not_found');
    expect((await api.call('DELETE', `/api/v1/jobs/${job.id}`)).statusCode).toBe(404);
  });

  it('refuses bad bodies with the right codes', async () => {
    const expectError = async (extra: Record<string, unknown>, status: number, code: string, match?: RegExp) => {
      const res = await api.call('POST', '/api/v1/jobs', body(extra));
      expect(res.statusCode, res.body).toBe(status);
      expect(res.json().error.code).toBe(code);
      if (match) expect(res.json().error.message).toMatch(match);
    };
    await expectError({ transform_mode: 'basic' }, 422, 'validation_error', /transform_mode/);
    await expectError({ operations: [{ type: 'buffer', distance: 'far' }] }, 422, 'validation_error', /operations\.0\.distance/);
    await expectError({ transform_mode: 'sql', operations: [], sql: 'DELETE FROM source' }, 422, 'invalid_transformation');
    await expectError({ transform_mode: 'sql', operations: [] }, 422, 'validation_error', /body\.sql/);
    await expectError({ transform_mode: 'recipe', operations: [] }, 422, 'validation_error', /recipe_id/);
    await expectError({ transform_mode: 'recipe', recipe_id: 'rcp_missing' }, 404, 'recipe_not_found');
    await expectError({ output_format: 'NoSuchFormat' }, 422, 'validation_error', /output_format/);
    await expectError({ source_id: 'src_missing' }, 404, 'source_not_found');
    await expectError({ destination_id: 'dst_missing' }, 404, 'destination_not_found');
    await expectError({ destination_id: destinationId, destination_target: {} }, 422, 'validation_error', /destination_target\.table/);
    await expectError({ destination_target: { table: 'x' } }, 422, 'validation_error', /destination_target/);
    await expectError({ schedule: { kind: 'daily', timezone: 'Mars/Olympus', hour: 1, minute: 0 } }, 422, 'validation_error', /schedule\.timezone/);
    await expectError({ schedule: { kind: 'daily', timezone: 'UTC', hour: 24, minute: 0 } }, 422, 'validation_error', /schedule\.hour/);
    await expectError({ schedule: { kind: 'hourly', timezone: 'UTC', hour: 1, minute: 0 } }, 422, 'validation_error');
    await expectError({ pipeline: { python: true } }, 422, 'validation_error', /python_script/);
    await expectError({ pipeline: { convert: true }, output_format: null }, 422, 'validation_error', /output_format/);
  });

  it("never reveals another user's Source or Destination, and their Jobs are not ours", async () => {
    const other = jobsClient(() => sut.app, await tokenFor(JOB_SCOPES, { email: 'other@example.com', password: 'another long password' }));
    const res = await other.call('POST', '/api/v1/jobs', body());
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('source_not_found');
    const mine = await create();
    expect((await other.call('GET', `/api/v1/jobs/${mine.id}`)).json().error.code).toBe('job_not_found');
    expect((await other.call('POST', `/api/v1/jobs/${mine.id}/run`)).json().error.code).toBe('job_not_found');
    expect((await other.call('GET', `/api/v1/jobs/${mine.id}/runs`)).statusCode).toBe(404);
    await api.call('DELETE', `/api/v1/jobs/${mine.id}`);
  });

  it('copies a Recipe: later Recipe edits do not change the Job', async () => {
    const recipe = (await api.call('POST', '/api/v1/recipes', { name: 'tidy', operations: [{ type: 'rename_column', from: 'name', to: 'label' }] })).json();
    const job = await create({ transform_mode: 'recipe', recipe_id: recipe.id, operations: undefined });
    expect(job).toMatchObject({ transform_mode: 'recipe', recipe_id: recipe.id, operations: [{ type: 'rename_column', from: 'name', to: 'label' }] });
    await api.call('PUT', `/api/v1/recipes/${recipe.id}`, { name: 'tidy', operations: [{ type: 'centroid' }] });
    expect((await api.call('GET', `/api/v1/jobs/${job.id}`)).json().operations).toEqual([{ type: 'rename_column', from: 'name', to: 'label' }]);
    // A Job read and sent back keeps working; saving it takes the Recipe as it is now.
    const saved = await api.call('PUT', `/api/v1/jobs/${job.id}`, { ...job, id: undefined, stages: undefined });
    expect(saved.statusCode, saved.body).toBe(200);
    expect(saved.json().operations).toEqual([{ type: 'centroid' }]);
    // Deleting the Recipe leaves the Job's copy alone.
    await api.call('DELETE', `/api/v1/recipes/${recipe.id}`);
    expect((await api.call('GET', `/api/v1/jobs/${job.id}`)).json().operations).toEqual([{ type: 'centroid' }]);
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  });

  it('follows the pipeline flag table of the spec, and create and update keep explicit false', async () => {
    const cases: [unknown, Record<string, boolean>][] = [
      [undefined, { transform: true, python: false, convert: true }],
      [{}, { transform: true, python: false, convert: true }],
      [{ transform: false }, { transform: false, python: false, convert: true }],
      [
        { convert: false, python: true },
        { transform: true, python: true, convert: false },
      ],
      [
        { transform: true, convert: true, python: false },
        { transform: true, python: false, convert: true },
      ],
    ];
    for (const [pipeline, stages] of cases) {
      const job = await create({ pipeline, python_script: (pipeline as { python?: boolean } | undefined)?.python ? 'print(1)' : undefined });
      expect(job.stages, JSON.stringify(pipeline)).toEqual(stages);
      expect(job.pipeline).toEqual(pipeline ?? {});
      await api.call('DELETE', `/api/v1/jobs/${job.id}`);
    }
    // false: leftover operations, format or Python on the body do not bring the stage back.
    const off = await create({ pipeline: { transform: false, convert: false, python: false }, python_script: 'print(1)' });
    expect(off).toMatchObject({
      stages: { transform: false, python: false, convert: false },
      operations: [],
      transform_mode: null,
      output_format: null,
      python_script: null,
    });
    // An update that does not mention the flags keeps them; null sends a flag back to inferred.
    const kept = (await api.call('PUT', `/api/v1/jobs/${off.id}`, body())).json();
    expect(kept).toMatchObject({ pipeline: { transform: false, convert: false, python: false }, stages: { transform: false, python: false, convert: false } });
    const back = (await api.call('PUT', `/api/v1/jobs/${off.id}`, body({ pipeline: { transform: null, convert: true } }))).json();
    expect(back).toMatchObject({ pipeline: { convert: true, python: false }, stages: { transform: true, python: false, convert: true } });
    await api.call('DELETE', `/api/v1/jobs/${off.id}`);
  });

  it('refuses to delete a Source or Destination a Job uses, naming the Job', async () => {
    const job = await create({ name: 'Uses them' });
    for (const [kind, id] of [
      ['sources', sourceId],
      ['destinations', hookId],
    ] as const) {
      const res = await api.call('DELETE', `/api/v1/${kind}/${id}`);
      expect(res.statusCode).toBe(409);
      expect(res.json().error).toMatchObject({ code: 'conflict', details: { jobs: [{ id: job.id, name: 'Uses them' }] } });
      expect(res.json().error.message).toContain(job.id);
    }
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  });

  it('checks scopes exactly as the spec: jobs:run does not read, sync needs jobs:write', async () => {
    const job = await create();
    const runner = jobsClient(() => sut.app, await tokenFor(['jobs:run']));
    const reader = jobsClient(() => sut.app, await tokenFor(['jobs:read']));
    expect((await runner.call('GET', `/api/v1/jobs/${job.id}`)).statusCode).toBe(403);
    expect((await runner.call('GET', `/api/v1/jobs/${job.id}/runs`)).statusCode).toBe(403);
    expect((await runner.call('POST', `/api/v1/jobs/${job.id}/sync/reset`)).statusCode).toBe(403);
    expect((await reader.call('POST', `/api/v1/jobs/${job.id}/run`)).statusCode).toBe(403);
    expect((await reader.call('POST', `/api/v1/jobs/${job.id}/disable`)).statusCode).toBe(403);
    const run = await runner.call('POST', `/api/v1/jobs/${job.id}/run`);
    expect(run.statusCode, run.body).toBe(201);
    await api.waitForRun(job.id, run.json().id);
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  });

  it('answers under the internal /pipelines aliases, which the OpenAPI document leaves out', async () => {
    const job = await create();
    expect((await api.call('GET', `/api/v1/pipelines/${job.id}`)).json().id).toBe(job.id);
    expect((await api.call('GET', '/api/v1/pipelines')).statusCode).toBe(200);
    const doc = (await sut.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/api/v1/pipelines'))).toEqual([]);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/api/v1/jobs', '/api/v1/jobs/{id}/run', '/api/v1/jobs/{id}/runs/{runId}/retry', '/api/v1/jobs/{id}/sync/reinitialize']),
    );
    await api.call('DELETE', `/api/v1/pipelines/${job.id}`);
  });

  it('runs a Job: queued at once, then each step recorded, and the result delivered', async () => {
    const job = await create();
    const started = await api.call('POST', `/api/v1/jobs/${job.id}/run`);
    expect(started.statusCode, started.body).toBe(201);
    const queued = started.json();
    expect(queued).toMatchObject({ job_id: job.id, trigger: 'manual', attempt: 1, retry_of: null, workflow: { workflow_id: `run-${queued.id}` } });
    expect(['queued', 'running']).toContain(queued.status);
    expect(queued.steps.map((s: { name: string }) => s.name)).toEqual(['extract', 'transform', 'convert', 'deliver']);
    expect(queued.job_snapshot).toMatchObject({ name: job.name, operations: job.operations });

    const run = await api.waitForRun(job.id, queued.id);
    expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
    expect(run.workflow.run_id).toBeTruthy();
    expect(run.steps.map((s) => s.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    expect(run.steps.every((s) => typeof s.duration_ms === 'number')).toBe(true);
    expect(run.stats).toMatchObject({ features_read: 25 });
    expect(run.stats.bytes_read).toBeGreaterThan(0);
    expect(run.error).toBeNull();
    // The Run's log: what each step read and wrote, where, and how much.
    const [extract, transform, convert, deliver] = run.steps.map((s) => (s as unknown as { log: Record<string, any> }).log);
    expect(extract!.read).toMatchObject({
      connection: { id: sourceId, type: 'url' },
      location: { url: `${files.url}/places.geojson` },
      filename: 'places.geojson',
      format: 'GeoJSON',
      features: 25,
      layers: [{ geometry_type: expect.stringMatching(/POINT/), crs: 'EPSG:4326', features: 25 }],
    });
    expect(extract!.read.bytes).toBe(run.stats.bytes_read);
    expect(transform!.wrote).toMatchObject({ format: 'GPKG', features: 25, layers: [{ geometry_type: expect.stringMatching(/POINT/), crs: 'EPSG:4326' }] });
    expect(convert!.wrote).toMatchObject({ format: 'GPKG', filename: expect.stringMatching(/\.gpkg$/) });
    expect(deliver!.wrote).toMatchObject({ connection: { id: hookId, type: 'webhook' } });
    expect(JSON.stringify(run.steps)).not.toContain('not used here');
    // What arrived: a GeoPackage with the 25 places, the column renamed, labelled with the Run.
    const delivery = files.received.find((r) => r.headers['x-geoflow-delivery'] === run.id)!;
    expect(delivery.headers['x-geoflow-format']).toBe('GPKG');
    expect(run.stats.bytes_written).toBe(delivery.body.length);
    const out = path.join(dir, `${run.id}.gpkg`);
    writeFileSync(out, delivery.body);
    const ds = gdal.open(out);
    const layer = ds.layers.get(0);
    expect(layer.features.count()).toBe(25);
    expect(layer.fields.getNames()).toContain('label');
    ds.close();

    const retry = await api.call('POST', `/api/v1/jobs/${job.id}/runs/${run.id}/retry`);
    expect(retry.statusCode).toBe(409);
    expect(retry.json().error.message).toMatch(/succeeded; only a failed Run can be retried/);
    const after = (await api.call('GET', `/api/v1/jobs/${job.id}`)).json();
    expect(after.last_run).toEqual({ id: run.id, status: 'succeeded', finished_at: run.finished_at });
    expect(after.sync.cursor).toMatchObject({ etag: expect.any(String) });
    const list = (await api.call('GET', `/api/v1/jobs/${job.id}/runs?limit=1`)).json();
    expect(list.items.map((r: { id: string }) => r.id)).toEqual([run.id]);
    expect((await api.call('GET', `/api/v1/jobs/${job.id}/runs?status=failed`)).json().items).toEqual([]);
    expect((await api.call('GET', `/api/v1/jobs/${job.id}/runs?status=bogus`)).statusCode).toBe(400);

    // The same file again (same ETag): the later steps are skipped and nothing is delivered.
    const posts = files.received.length;
    const unchanged = await api.runNow(job.id);
    expect(unchanged).toMatchObject({ status: 'succeeded', skipped_reason: 'source_unchanged' });
    expect(unchanged.steps.map((s) => s.status)).toEqual(['succeeded', 'skipped', 'skipped', 'skipped']);
    expect(files.received.length).toBe(posts);
    // After sync/reset the next Run reads and delivers everything again.
    await api.call('POST', `/api/v1/jobs/${job.id}/sync/reset`);
    const again = await api.runNow(job.id);
    expect(again).toMatchObject({ status: 'succeeded', skipped_reason: null });
    expect(files.received.length).toBe(posts + 1);
    // The Job's sync state is its own aggregate, recorded right after the Run's outcome.
    const sync = await untilRead(
      'the sync reset recorded',
      async () => (await api.call('GET', `/api/v1/jobs/${job.id}`)).json().sync,
      (s) => !s.reset_pending,
      10_000,
      100,
    );
    expect(sync.reset_pending).toBe(false);
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  });

  const undeliverable = connectors.find((c) => c.destination && !c.implemented);
  it.skipIf(!undeliverable && 'every Destination type delivers now')(
    'a Destination type that cannot deliver yet fails the Run at deliver, classified and final',
    async () => {
      const c = undeliverable!;
      const created = await api.call('POST', '/api/v1/destinations', { name: 'later', type: c.type, configuration: c.example });
      expect(created.statusCode, created.body).toBe(201);
      // A target its schema accepts (the types name their target fields differently).
      const target = [{}, { table: 'places' }, { layer: 'places' }, { path: 'places.gpkg' }, { key: 'places.gpkg' }, { workspace: 'w', layer: 'places' }].find(
        (t) => c.destination!.target.safeParse(t).success,
      );
      const job = await create({ destination_id: created.json().id, destination_target: target });
      const run = await api.runNow(job.id);
      expect(run.status).toBe('failed');
      expect(run.error).toMatchObject({ code: 'not_implemented', step: 'deliver', retryable: false });
      expect(run.steps.map((s) => s.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'failed']);
      await api.call('DELETE', `/api/v1/jobs/${job.id}`);
    },
  );

  it('saves a Job without a Destination; its Runs fail at deliver, saying so', async () => {
    const job = await create({ destination_id: undefined });
    expect(job).toMatchObject({ destination_id: null, destination_target: {} });
    const run = await api.runNow(job.id);
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ code: 'invalid_destination', step: 'deliver', retryable: false });
    const fixed = await api.call('PUT', `/api/v1/jobs/${job.id}`, body());
    expect(fixed.json().destination_id).toBe(hookId);
    const retried = await api.runNow(job.id);
    expect(retried.status).toBe('succeeded');
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  });

  it('fails a Run whose Source is missing with source_failed (not_found, not retryable); its retry succeeds once the file is back', async () => {
    const missing = (await api.call('POST', '/api/v1/sources', { name: 'later', type: 'url', configuration: { url: `${files.url}/later.geojson` } })).json().id;
    const job = await create({ source_id: missing });
    const run = await api.runNow(job.id);
    expect(run.status).toBe('failed');
    expect(run.error).toMatchObject({ code: 'source_failed', step: 'extract', retryable: false, reason: 'not_found' });
    expect(files.requests('/later.geojson')).toBe(1);
    files.put('/later.geojson', fileBody(pointsGeoJson(dir, 3)));
    const retried = await api.call('POST', `/api/v1/jobs/${job.id}/runs/${run.id}/retry`);
    expect(retried.json()).toMatchObject({ trigger: 'retry', attempt: 2, retry_of: run.id, job_snapshot: run.job_snapshot });
    const retry = await api.waitForRun(job.id, retried.json().id);
    expect(retry.status).toBe('succeeded');
    const second = await api.call('POST', `/api/v1/jobs/${job.id}/runs/${run.id}/retry`);
    expect(second.statusCode).toBe(409);
    expect(second.json().error.message).toContain(retry.id);
    expect((await api.call('GET', `/api/v1/jobs/${job.id}/runs/${run.id}`)).json().retried_by).toBe(retry.id);
    expect(retry.stats.features_read).toBe(3);
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  });

  describe('a Job with nothing between extract and deliver (both run in one activity)', () => {
    const direct = (extra: Record<string, unknown> = {}) => create({ transform_mode: null, operations: [], output_format: null, ...extra });
    const deliveriesTo = (path: string) => files.received.filter((r) => r.path === path).length;

    it('records each step as its own, with its stats, and delivers once', async () => {
      const job = await direct();
      expect(job.stages).toEqual({ transform: false, python: false, convert: false });
      const before = deliveriesTo('/hook');
      const run = await api.runNow(job.id);
      expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
      expect(run.steps.map((s: { name: string; status: string }) => [s.name, s.status])).toEqual([
        ['extract', 'succeeded'],
        ['deliver', 'succeeded'],
      ]);
      for (const s of run.steps) expect(s.duration_ms).toBeGreaterThanOrEqual(0);
      expect(run.stats).toMatchObject({ features_read: 25 });
      expect(run.stats.bytes_written).toBeGreaterThan(0);
      expect(deliveriesTo('/hook') - before).toBe(1);
      // The activity removes the Run's files itself (the workflow runs no cleanup for it), right after it succeeds.
      const folder = path.join(sut.services.config.dataDir, 'runs', run.id);
      await until('the Run folder removed', () => !existsSync(folder), 5_000);
      expect(existsSync(folder)).toBe(false);
      await api.call('DELETE', `/api/v1/jobs/${job.id}`);
    });

    it('a delivery refused for good fails the Run at deliver (delivery_failed), the extract recorded as done', async () => {
      const hook = (
        await api.call('POST', '/api/v1/destinations', { name: 'refusing', type: 'webhook', configuration: { url: `${files.url}/refusing` } })
      ).json().id;
      files.failNext('/refusing', 422, 1);
      const job = await direct({ destination_id: hook });
      const run = await api.runNow(job.id);
      expect(run.status).toBe('failed');
      expect(run.error).toMatchObject({ code: 'delivery_failed', step: 'deliver', retryable: false });
      expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['succeeded', 'failed']);
      await api.call('DELETE', `/api/v1/jobs/${job.id}`);
    });

    it('a missing Source fails the Run at extract (source_failed), deliver never reached', async () => {
      const missing = (await api.call('POST', '/api/v1/sources', { name: 'gone', type: 'url', configuration: { url: `${files.url}/gone.geojson` } })).json().id;
      const job = await direct({ source_id: missing });
      const run = await api.runNow(job.id);
      expect(run.status).toBe('failed');
      expect(run.error).toMatchObject({ code: 'source_failed', step: 'extract', reason: 'not_found' });
      expect(run.steps.map((s: { status: string }) => s.status)).toEqual(['failed', 'skipped']);
      await api.call('DELETE', `/api/v1/jobs/${job.id}`);
    });

    it('a delivery that fails once is noted on deliver; the retry extracts again and delivers once', async () => {
      const path = '/flaky-hook';
      const hook = (
        await api.call('POST', '/api/v1/destinations', { name: 'flaky hook', type: 'webhook', configuration: { url: `${files.url}${path}` } })
      ).json().id;
      files.failNext(path, 503, 1);
      const job = await direct({ destination_id: hook });
      const reads = files.requests('/places.geojson');
      const run = await api.runNow(job.id);
      expect(run.status, JSON.stringify(run.error)).toBe('succeeded');
      expect(run.steps[0]).toMatchObject({ name: 'extract', status: 'succeeded' });
      expect(run.steps[1]).toMatchObject({ name: 'deliver', status: 'succeeded', failed_attempts: 1 });
      expect(run.steps[1]!.last_error).toMatchObject({ step: 'deliver' });
      expect(files.requests('/places.geojson') - reads).toBe(2);
      expect(files.requests(path)).toBe(2);
      expect(deliveriesTo(path)).toBe(1);
      await api.call('DELETE', `/api/v1/jobs/${job.id}`);
    }, 60_000);
  });

  it('a step that fails transiently is retried, and the Run shows its failed attempt while it waits', async () => {
    const flaky = (await api.call('POST', '/api/v1/sources', { name: 'flaky', type: 'url', configuration: { url: `${files.url}/flaky.geojson` } })).json().id;
    files.put('/flaky.geojson', fileBody(pointsGeoJson(dir, 2)));
    files.failNext('/flaky.geojson', 503, 1);
    const job = await create({ source_id: flaky });
    const runId = (await api.call('POST', `/api/v1/jobs/${job.id}/run`)).json().id;
    const waiting = await api.waitForRun(job.id, runId, (r) => finished(r.status) || r.steps[0]!.failed_attempts > 0);
    expect(waiting.status).toBe('running');
    expect(waiting.steps[0]).toMatchObject({
      name: 'extract',
      status: 'running',
      failed_attempts: 1,
      last_error: { code: 'source_failed', reason: 'server_error' },
    });
    expect(waiting.steps[0]!.last_error!.message).toMatch(/503/);
    const done = await api.waitForRun(job.id, runId);
    expect(done.status).toBe('succeeded');
    expect(done.steps[0]).toMatchObject({ status: 'succeeded', failed_attempts: 1 });
    expect(done.steps.slice(1).every((s) => s.failed_attempts === 0 && s.last_error === null)).toBe(true);
    expect(files.requests('/flaky.geojson')).toBe(2);
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  });

  it('retrying a Run that did not fail is a 409', async () => {
    const job = await create({ pipeline: { transform: false, convert: false } });
    const gate = files.hold('/places.geojson');
    try {
      const run = (await api.call('POST', `/api/v1/jobs/${job.id}/run`)).json();
      const res = await api.call('POST', `/api/v1/jobs/${job.id}/runs/${run.id}/retry`);
      expect(res.statusCode).toBe(409);
      expect(res.json().error.code).toBe('conflict');
      gate.release();
      await api.waitForRun(job.id, run.id);
    } finally {
      gate.release();
    }
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  });

  it('queues a Run Now behind the Run in progress, and runs them one at a time', async () => {
    const job = await create({ pipeline: { transform: false, convert: false } });
    const gate = files.hold('/places.geojson');
    try {
      const first = (await api.call('POST', `/api/v1/jobs/${job.id}/run`)).json();
      await api.waitForRun(job.id, first.id, (r) => r.status === 'running');
      const second = await api.call('POST', `/api/v1/jobs/${job.id}/run`);
      expect(second.statusCode).toBe(201);
      expect(second.json().status).toBe('queued');
      // It stays queued while the first one is held in its extract step: that nothing happens for a
      // while is what is tested, so this sleeps on purpose.
      await new Promise((r) => setTimeout(r, 1500));
      expect((await api.call('GET', `/api/v1/jobs/${job.id}/runs/${second.json().id}`)).json().status).toBe('queued');
      expect(gate.waiting()).toBe(1);
      gate.release();
      const a = await api.waitForRun(job.id, first.id);
      const b = await api.waitForRun(job.id, second.json().id);
      expect(Date.parse(b.started_at!)).toBeGreaterThanOrEqual(Date.parse(a.finished_at!));
    } finally {
      gate.release();
    }
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  });

  it('Idempotency-Key: the same key returns the same Run; another key starts another', async () => {
    const job = await create({ pipeline: { transform: false, convert: false } });
    const a = await api.call('POST', `/api/v1/jobs/${job.id}/run`, undefined, { 'idempotency-key': 'nightly-2026-05-01' });
    const b = await api.call('POST', `/api/v1/jobs/${job.id}/run`, undefined, { 'idempotency-key': 'nightly-2026-05-01' });
    const c = await api.call('POST', `/api/v1/jobs/${job.id}/run`, undefined, { 'idempotency-key': 'nightly-2026-05-02' });
    expect(a.statusCode, a.body).toBe(201);
    expect(b.statusCode).toBe(201);
    expect(b.headers['idempotent-replayed']).toBe('true');
    expect(b.json().id).toBe(a.json().id);
    expect(c.json().id).not.toBe(a.json().id);
    expect((await api.call('POST', `/api/v1/jobs/${job.id}/run`, undefined, { 'idempotency-key': 'has space' })).statusCode).toBe(400);
    await api.waitForRun(job.id, a.json().id);
    await api.waitForRun(job.id, c.json().id);
    const runs = (await api.call('GET', `/api/v1/jobs/${job.id}/runs`)).json().items;
    expect(runs).toHaveLength(2);
    // After 24 hours the key is free again: the same key starts a new Run.
    const clock = sut.services.clock;
    sut.services.clock = () => new Date(Date.now() + 24 * 3_600_000 + 60_000);
    try {
      const later = await api.call('POST', `/api/v1/jobs/${job.id}/run`, undefined, { 'idempotency-key': 'nightly-2026-05-01' });
      expect(later.statusCode).toBe(201);
      expect(later.headers['idempotent-replayed']).toBeUndefined();
      expect(later.json().id).not.toBe(a.json().id);
      await api.waitForRun(job.id, later.json().id);
    } finally {
      sut.services.clock = clock;
    }
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  });

  const otherToken = () => tokenFor(['jobs:read'], { email: 'reader@example.com', password: 'a reader long password' });

  it('deleting a Job cancels its Run in progress and the Runs waiting behind it; they stay readable to their owner', async () => {
    const job = await create({ pipeline: { transform: false, convert: false } });
    const gate = files.hold('/places.geojson');
    try {
      const running = (await api.call('POST', `/api/v1/jobs/${job.id}/run`)).json();
      await api.waitForRun(job.id, running.id, (r) => r.status === 'running');
      await until('the Source request held', () => gate.waiting() > 0);
      const waiting = (await api.call('POST', `/api/v1/jobs/${job.id}/run`)).json();
      expect((await api.call('DELETE', `/api/v1/jobs/${job.id}`)).statusCode).toBe(204);
      // The Runs stay readable to their owner through the API, under the deleted Job and across Jobs.
      const read = async (id: string) => {
        const row = await untilRead(
          `Run ${id} finished`,
          async () => {
            const res = await api.call('GET', `/api/v1/jobs/${job.id}/runs/${id}`);
            expect(res.statusCode, res.body).toBe(200);
            return res.json() as { status: string; error: { code: string }; steps: { status: string }[] };
          },
          (r) => ['cancelled', 'succeeded', 'failed'].includes(r.status),
          30_000,
        );
        return { ...row, state: row };
      };
      const first = await read(running.id);
      expect(first.status).toBe('cancelled');
      expect(first.error.code).toBe('cancelled');
      expect(first.state.steps.map((st) => st.status)).toEqual(['failed', 'skipped']);
      expect((await read(waiting.id)).status).toBe('cancelled');
      const listed = (await api.call('GET', `/api/v1/jobs/${job.id}/runs`)).json();
      expect(listed.items.map((r: { id: string }) => r.id).sort()).toEqual([running.id, waiting.id].sort());
      const everywhere = (await api.call('GET', `/api/v1/runs?job_id=${job.id}`)).json();
      expect(everywhere.items.map((r: { id: string }) => r.id).sort()).toEqual([running.id, waiting.id].sort());
      // The Job itself stays gone; another user sees none of it.
      expect((await api.call('GET', `/api/v1/jobs/${job.id}`)).statusCode).toBe(404);
      const other = jobsClient(() => sut.app, await otherToken());
      expect((await other.call('GET', `/api/v1/jobs/${job.id}/runs/${running.id}`)).json().error.code).toBe('job_not_found');
      expect((await other.call('GET', `/api/v1/runs?job_id=${job.id}`)).json().items).toEqual([]);
    } finally {
      gate.release();
    }
  });

  it('sync reset and reinitialize are recorded on the Job', async () => {
    const job = await create();
    const reset = (await api.call('POST', `/api/v1/jobs/${job.id}/sync/reset`)).json();
    expect(reset.sync).toMatchObject({ reset_pending: true, reinitialize_pending: false });
    const re = (await api.call('POST', `/api/v1/jobs/${job.id}/sync/reinitialize`)).json();
    expect(re.sync).toMatchObject({ reset_pending: true, reinitialize_pending: true });
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  });
});

describe.skipIf(skip || (!postgisDelivers && 'the postgis Destination cannot deliver yet (connectors/postgis: implemented false)'))(
  'a Job from a url Source into PostGIS',
  () => {
    let files: FileServer;
    let api: ReturnType<typeof jobsClient>;
    let target: Awaited<ReturnType<typeof createPostgisTarget>>;
    let job: { id: string };
    const dir = fixtureDir();

    it.beforeAll(async ({ files: theFiles, jobs: theJobs }) => {
      files = theFiles;
      api = theJobs;
      files.put('/places.geojson', fileBody(pointsGeoJson(dir, 25)));
      target = await createPostgisTarget();
      const source = (await api.call('POST', '/api/v1/sources', { name: 'places', type: 'url', configuration: { url: `${files.url}/places.geojson` } })).json();
      const destination = (await api.call('POST', '/api/v1/destinations', { name: 'gis', type: 'postgis', configuration: target.configuration })).json();
      const created = await api.call('POST', '/api/v1/jobs', {
        name: 'Big places to PostGIS',
        source_id: source.id,
        destination_id: destination.id,
        destination_target: { schema: 'public', table: 'places', write_mode: 'replace' },
        transform_mode: 'manual',
        operations: [
          { type: 'filter', where: 'population > 5000' },
          { type: 'rename_column', from: 'name', to: 'label' },
        ],
        output_fields: ['id', 'label'],
      });
      expect(created.statusCode, created.body).toBe(201);
      job = created.json();
    });
    afterAll(async () => {
      await target?.drop();
    });

    const run = async () => api.runNow(job.id);
    const rows = () => target.query<{ id: number; label: string }>('SELECT id, label FROM public.places ORDER BY id');

    it('runs to succeeded with the right rows, and the Run record says what it did', async () => {
      const done = await run();
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      expect(done.steps.map((s) => [s.name, s.status])).toEqual([
        ['extract', 'succeeded'],
        ['transform', 'succeeded'],
        ['deliver', 'succeeded'],
      ]);
      expect(done.steps.every((s) => typeof s.duration_ms === 'number')).toBe(true);
      expect(done.stats).toMatchObject({ features_read: 25, features_written: 20 });
      const loaded = await rows();
      expect(loaded).toHaveLength(20);
      expect(loaded[0]).toEqual({ id: 6, label: 'Zürich 5' });
      const columns = await target.query<{ column_name: string }>(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'places' ORDER BY ordinal_position",
      );
      expect(columns.map((c) => c.column_name)).toEqual(expect.arrayContaining(['id', 'label']));
      expect(columns.map((c) => c.column_name)).not.toContain('population');
      expect((await api.call('GET', `/api/v1/jobs/${job.id}`)).json().sync.cursor).toMatchObject({ etag: expect.any(String) });
    });

    it('an unchanged file (same ETag) skips the later steps and says so', async () => {
      const requests = files.requests('/places.geojson');
      const done = await run();
      expect(done).toMatchObject({ status: 'succeeded', skipped_reason: 'source_unchanged' });
      expect(done.steps.map((s) => s.status)).toEqual(['succeeded', 'skipped', 'skipped']);
      expect(files.requests('/places.geojson')).toBe(requests + 1);
      expect(await rows()).toHaveLength(20);
    });

    it('sync reset reads everything again; reinitialize rebuilds the target', async () => {
      expect((await api.call('POST', `/api/v1/jobs/${job.id}/sync/reset`)).json().sync.reset_pending).toBe(true);
      const afterReset = await run();
      expect(afterReset).toMatchObject({ status: 'succeeded', skipped_reason: null });
      expect((await api.call('GET', `/api/v1/jobs/${job.id}`)).json().sync).toMatchObject({ reset_pending: false, reinitialize_pending: false });
      files.put('/places.geojson', fileBody(pointsGeoJson(dir, 8)));
      await api.call('POST', `/api/v1/jobs/${job.id}/sync/reinitialize`);
      const rebuilt = await run();
      expect(rebuilt.status).toBe('succeeded');
      expect(await rows()).toHaveLength(3);
    });
  },
);
