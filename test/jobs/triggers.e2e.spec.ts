import { sql } from 'slonik';
import { beforeAll, describe, expect } from 'vitest';
import { signatureOf } from '../../application/webhooks.js';
import { connectorByType } from '../../connectors/registry.js';
import { watchScheduleIdOf } from '../../temporal/ids.js';
import type { TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { fixtureDir, pointsGeoJson } from '../support/fixtures.js';
import { e2eTest, JOB_SCOPES } from '../support/e2e.js';
import { createPostgisTarget, fileBody, finished, type FileServer, type jobsClient, placesSources } from '../support/jobs.js';
import { untilRead as until } from '../support/until.js';
import { temporalAddress } from '../support/worker.js';

const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');
const postgisDelivers = connectorByType('postgis')?.implemented === true;
const it = e2eTest({ worker: true, scopes: JOB_SCOPES });

/*
 * What starts a Job's Runs besides a person and its schedule (on change, webhook, after another
 * Job), run-time parameters and retries with the current definition, end to end: the API, the
 * real Temporal dev server, a worker, a local HTTP server as the Source and webhook receiver,
 * and the suite's PostgreSQL as a PostGIS Destination.
 */
describe.skipIf(skip)('Job triggers, parameters and retries', () => {
  let sut: TestApp;
  let files: FileServer;
  let api: ReturnType<typeof jobsClient>;
  let sourceId: string;
  let missingId: string;
  let hookId: string;
  const dir = fixtureDir();

  it.beforeAll(async ({ sut: theSut, files: theFiles, jobs: theJobs }) => {
    sut = theSut;
    files = theFiles;
    api = theJobs;
    ({ sourceId, missingId } = await placesSources(api, files));
    hookId = (await api.call('POST', '/api/v1/destinations', { name: 'hook', type: 'webhook', configuration: { url: `${files.url}/hook` } })).json().id;
  }, 240_000);

  const create = async (body: Record<string, unknown>) => {
    const res = await api.call('POST', '/api/v1/jobs', {
      name: 'job',
      source_id: sourceId,
      destination_id: hookId,
      pipeline: { transform: false, convert: false },
      ...body,
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json();
  };
  const runsOf = (jobId: string) => api.runsOf(jobId);

  describe('on change', () => {
    it('a url Source checked every minute: the first check runs the Job, an unchanged file starts nothing (HEAD only), a changed one starts one Run', async () => {
      files.put('/watched.geojson', fileBody(pointsGeoJson(dir, 3)));
      const source = (
        await api.call('POST', '/api/v1/sources', { name: 'watched', type: 'url', configuration: { url: `${files.url}/watched.geojson` } })
      ).json();
      const job = await create({ source_id: source.id, triggers: { on_change: { every_minutes: 1 } } });
      expect(job.triggers).toEqual({ on_change: { every_minutes: 1 }, after: [] });
      const watch = sut.services.temporal!.schedule.getHandle(watchScheduleIdOf(job.id));
      const checks = async () => (await watch.describe()).info.recentActions;
      // No Run has read it yet: the first check (within a minute) starts one.
      const [first] = await until(
        'the first on-change Run',
        () => runsOf(job.id),
        (runs) => runs.length === 1,
        100_000,
      );
      expect(first!.trigger).toBe('on_change');
      expect((await api.waitForRun(job.id, first!.id)).status).toBe('succeeded');
      const gets = files.requests('/watched.geojson', 'GET');
      // The next check (a minute later): the file did not change, so nothing starts and nothing is downloaded.
      const seen = (await checks()).length;
      const after = await until('the next check', checks, (actions) => actions.length > seen && actions.every((a) => a.action?.workflow), 100_000);
      const result = await sut.services.temporal!.workflow.getHandle(after.at(-1)!.action.workflow.workflowId).result();
      expect(result).toEqual({ changed: false, runId: null });
      expect(await runsOf(job.id)).toHaveLength(1);
      expect(files.requests('/watched.geojson', 'GET')).toBe(gets);
      expect(files.requests('/watched.geojson', 'HEAD')).toBeGreaterThan(0);
      // The file changes: the next check starts exactly one Run, which delivers the new file.
      files.put('/watched.geojson', fileBody(pointsGeoJson(dir, 4)));
      const runs = await until(
        'the Run of the change',
        () => runsOf(job.id),
        (r) => r.length === 2,
        100_000,
      );
      const changed = await api.waitForRun(job.id, runs[0]!.id);
      expect(changed).toMatchObject({ trigger: 'on_change', status: 'succeeded', skipped_reason: null });
      expect(changed.stats.features_read).toBe(4);
      await api.call('DELETE', `/api/v1/jobs/${job.id}`);
    }, 360_000);

    it('is refused where the Source cannot tell a change without reading it, naming what is missing', async () => {
      const db = (
        await api.call('POST', '/api/v1/sources', {
          name: 'db',
          type: 'postgis',
          configuration: { host: '127.0.0.1', database: 'gis', username: 'reader', password: 'secret' },
        })
      ).json();
      const res = await api.call('POST', '/api/v1/jobs', {
        name: 'x',
        source_id: db.id,
        source_resource: { schema: 'public', table: 'parcels' },
        triggers: { on_change: { every_minutes: 5 } },
      });
      expect(res.statusCode).toBe(422);
      expect(res.json().error.message).toMatch(/body.triggers.on_change: on-change for a postgis Source needs cursor_column/);
      const zero = await api.call('POST', '/api/v1/jobs', { name: 'x', source_id: sourceId, triggers: { on_change: { every_minutes: 0 } } });
      expect(zero.statusCode).toBe(422);
    });
  });

  describe('webhook', () => {
    let job: { id: string };
    let secret: string;
    let path: string;
    const call = (body: string, headers: Record<string, string>) =>
      sut.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/json', ...headers }, payload: body });
    const signed = (body: string, delivery: string, at = Math.floor(Date.now() / 1000)) => ({
      'x-geoflow-timestamp': String(at),
      'x-geoflow-delivery': delivery,
      'x-geoflow-signature': signatureOf(secret, String(at), delivery, Buffer.from(body)),
    });

    beforeAll(async () => {
      job = await create({ parameters: [{ name: 'label', type: 'string', default: 'nightly' }] });
      const issued = await api.call('POST', `/api/v1/jobs/${job.id}/webhook`, {});
      expect(issued.statusCode, issued.body).toBe(201);
      expect(issued.json()).toMatchObject({ auth: 'hmac', secret: expect.stringMatching(/^whsec_/), rotated_at: null });
      secret = issued.json().secret;
      path = new URL(issued.json().url).pathname;
      expect(path).toBe(`/api/v1/hooks/jobs/${job.id}`);
    });

    it('a wrong signature, a missing one, or a stale timestamp is 401 and starts nothing', async () => {
      const body = '{}';
      const good = signed(body, 'd-0');
      for (const headers of <Record<string, string>[]>[
        { ...good, 'x-geoflow-signature': `sha256=${'0'.repeat(64)}` },
        { 'x-geoflow-delivery': 'd-0' },
        signed(body, 'd-0', Math.floor(Date.now() / 1000) - 600),
        // Signed for another delivery id: the id is part of what is signed.
        { ...good, 'x-geoflow-delivery': 'd-other' },
        { authorization: `Bearer ${secret}` },
      ]) {
        const res = await call(body, headers);
        expect(res.statusCode).toBe(401);
        expect(res.json().error.code).toBe('unauthorized');
      }
      const unknown = await sut.app.inject({ method: 'POST', url: '/api/v1/hooks/jobs/job_nope', headers: signed(body, 'd-0') });
      expect(unknown.statusCode).toBe(401);
      expect(await runsOf(job.id)).toEqual([]);
    });

    it('a signed call starts a Run with its parameters; the same delivery id again answers the same Run', async () => {
      const body = JSON.stringify({ parameters: { label: 'from-ci' } });
      const res = await call(body, signed(body, 'delivery-1'));
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json()).toMatchObject({ job_id: job.id, trigger: 'webhook', parameters: { label: 'from-ci' }, delivery_id: 'delivery-1' });
      const again = await call(body, signed(body, 'delivery-1'));
      expect(again.statusCode).toBe(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.json().id).toBe(res.json().id);
      const run = await api.waitForRun(job.id, res.json().id);
      expect(run).toMatchObject({ status: 'succeeded', trigger: 'webhook', parameters: { label: 'from-ci' }, delivery_id: 'delivery-1' });
      expect(await runsOf(job.id)).toHaveLength(1);
      const bad = JSON.stringify({ parameters: { colour: 'red' } });
      const refused = await call(bad, signed(bad, 'delivery-2'));
      expect(refused.statusCode).toBe(422);
      expect(refused.json().error.message).toMatch(/no parameter "colour"/);
    });

    it('the secret is shown once and stored sealed; rotating to bearer retires it; revoking ends the trigger', async () => {
      const shown = (await api.call('GET', `/api/v1/jobs/${job.id}`)).json();
      expect(shown.webhook).toMatchObject({ url: expect.stringContaining(path), auth: 'hmac' });
      expect(JSON.stringify(shown)).not.toContain(secret);
      const stored = await sut.services.pool.anyFirst(sql.unsafe`SELECT data::text FROM events WHERE data::text LIKE ${`%${secret.slice(6, 30)}%`}`);
      expect(stored).toEqual([]);
      const old = secret;
      const rotated = (await api.call('POST', `/api/v1/jobs/${job.id}/webhook`, { auth: 'bearer' })).json();
      expect(rotated.secret).not.toBe(old);
      expect(rotated.rotated_at).not.toBeNull();
      secret = old;
      expect((await call('', signed('', 'delivery-3'))).statusCode).toBe(401);
      const bearer = await call('', { authorization: `Bearer ${rotated.secret}`, 'x-geoflow-delivery': 'delivery-3' });
      expect(bearer.statusCode, bearer.body).toBe(201);
      await api.waitForRun(job.id, bearer.json().id);
      await api.call('POST', `/api/v1/jobs/${job.id}/disable`);
      expect((await call('', { authorization: `Bearer ${rotated.secret}` })).statusCode).toBe(409);
      await api.call('POST', `/api/v1/jobs/${job.id}/enable`);
      expect((await api.call('DELETE', `/api/v1/jobs/${job.id}/webhook`)).statusCode).toBe(204);
      expect((await call('', { authorization: `Bearer ${rotated.secret}` })).statusCode).toBe(401);
      expect((await api.call('GET', `/api/v1/jobs/${job.id}`)).json().webhook).toBeNull();
    });
  });

  describe('after another Job', () => {
    it('B runs when A succeeds, C when D fails; the chain shows on both Jobs and on the Runs', async () => {
      const a = await create({ name: 'A' });
      const b = await create({ name: 'B', triggers: { after: [{ job_id: a.id, when: 'succeeded' }] } });
      const d = await create({ name: 'D', source_id: missingId });
      const c = await create({
        name: 'C',
        triggers: {
          after: [
            { job_id: d.id, when: 'failed' },
            { job_id: a.id, when: 'failed' },
          ],
        },
      });
      const shownA = (await api.call('GET', `/api/v1/jobs/${a.id}`)).json();
      expect(shownA.followers).toEqual([
        { id: b.id, name: 'B', when: 'succeeded' },
        { id: c.id, name: 'C', when: 'failed' },
      ]);
      expect(b.triggers.after).toEqual([{ job_id: a.id, when: 'succeeded' }]);

      const runA = await api.runNow(a.id);
      expect(runA.status).toBe('succeeded');
      const [runB] = await until(
        'B started by A',
        () => runsOf(b.id),
        (runs) => runs.length === 1,
      );
      expect(runB).toMatchObject({ trigger: 'after', triggered_by: { job_id: a.id, run_id: runA.id } });
      expect((await api.waitForRun(b.id, runB!.id)).status).toBe('succeeded');
      expect((await api.call('GET', `/api/v1/jobs/${a.id}/runs/${runA.id}`)).json().started_runs).toEqual([{ job_id: b.id, run_id: runB!.id }]);

      const runD = await api.runNow(d.id);
      expect(runD.status).toBe('failed');
      const [runC] = await until(
        'C started by D failing',
        () => runsOf(c.id),
        (runs) => runs.length === 1,
      );
      expect(runC!.triggered_by).toEqual({ job_id: d.id, run_id: runD.id });
      await api.waitForRun(c.id, runC!.id);
      // A succeeding starts no C (C waits for A's failures).
      expect(await runsOf(c.id)).toHaveLength(1);

      // A after B would close a circle: refused at save, naming it.
      const cycle = await api.call('PUT', `/api/v1/jobs/${a.id}`, {
        name: 'A',
        source_id: sourceId,
        destination_id: hookId,
        triggers: { after: [{ job_id: b.id, when: 'any' }] },
      });
      expect(cycle.statusCode).toBe(422);
      expect(cycle.json().error.message).toContain(`${a.id} → ${b.id} → ${a.id}`);
      expect((await api.call('POST', '/api/v1/jobs', { name: 'x', source_id: sourceId, triggers: { after: [{ job_id: 'job_nope' }] } })).statusCode).toBe(404);
      // A Job others run after cannot be deleted until they stop naming it.
      const deleting = await api.call('DELETE', `/api/v1/jobs/${a.id}`);
      expect(deleting.statusCode).toBe(409);
      expect(deleting.json().error.details.jobs.map((j: { id: string }) => j.id)).toEqual([b.id, c.id]);
      for (const id of [b.id, c.id, a.id, d.id]) expect((await api.call('DELETE', `/api/v1/jobs/${id}`)).statusCode).toBe(204);
    }, 240_000);
  });

  describe('retry', () => {
    it('runs the Job as it is now by default (the fix is taken); "original" runs the failed snapshot again; the Run says which', async () => {
      const job = await create({ source_id: missingId });
      const failed = await api.runNow(job.id);
      expect(failed.error).toMatchObject({ code: 'source_failed', reason: 'not_found' });
      const failedAgain = await api.runNow(job.id);
      // The fix the failed Run's page asks for.
      await api.call('PUT', `/api/v1/jobs/${job.id}`, {
        name: 'job',
        source_id: sourceId,
        destination_id: hookId,
        pipeline: { transform: false, convert: false },
      });
      const retried = await api.call('POST', `/api/v1/jobs/${job.id}/runs/${failed.id}/retry`);
      expect(retried.statusCode, retried.body).toBe(201);
      expect(retried.json()).toMatchObject({ trigger: 'retry', retry_of: failed.id, retry_definition: 'current', job_snapshot: { source_id: sourceId } });
      expect((await api.waitForRun(job.id, retried.json().id)).status).toBe('succeeded');
      const original = await api.call('POST', `/api/v1/jobs/${job.id}/runs/${failedAgain.id}/retry`, { definition: 'original' });
      expect(original.json()).toMatchObject({ retry_definition: 'original', job_snapshot: { source_id: missingId } });
      expect((await api.waitForRun(job.id, original.json().id)).error).toMatchObject({ code: 'source_failed', reason: 'not_found' });
      await api.call('DELETE', `/api/v1/jobs/${job.id}`);
    }, 180_000);
  });

  describe.skipIf(!postgisDelivers && 'the postgis Destination cannot deliver yet')('parameters', () => {
    it('typed parameters with defaults fill the SQL and the target table; Run Now passes values, checked, recorded on the Run', async () => {
      const target = await createPostgisTarget();
      try {
        const destination = (await api.call('POST', '/api/v1/destinations', { name: 'gis', type: 'postgis', configuration: target.configuration })).json();
        const body = {
          name: 'places by size',
          destination_id: destination.id,
          pipeline: {},
          transform_mode: 'sql',
          sql: 'SELECT * FROM source WHERE population >= {{min_population}}',
          destination_target: { schema: 'public', table: 'places_{{region}}', write_mode: 'replace' },
          parameters: [
            { name: 'region', type: 'string', choices: ['north', 'south'], default: 'north', description: 'Which table' },
            { name: 'min_population', type: 'integer', default: 0 },
          ],
        };
        const job = await create(body);
        expect(job.parameters).toEqual([
          { name: 'region', type: 'string', default: 'north', description: 'Which table', choices: ['north', 'south'] },
          { name: 'min_population', type: 'integer', default: 0, description: null, choices: null },
        ]);
        expect(job.destination_target).toEqual({ schema: 'public', table: 'places_{{region}}', write_mode: 'replace' });
        const started = await api.call('POST', `/api/v1/jobs/${job.id}/run`, { parameters: { region: 'south', min_population: '3000' } });
        expect(started.statusCode, started.body).toBe(201);
        const run = await api.waitForRun(job.id, started.json().id);
        expect(run).toMatchObject({ status: 'succeeded', parameters: { region: 'south', min_population: 3000 } });
        expect(await target.query('SELECT count(*)::int AS n FROM public.places_south')).toEqual([{ n: 3 }]);
        const defaults = await api.runNow(job.id);
        expect(defaults.parameters).toEqual({ region: 'north', min_population: 0 });
        expect(await target.query('SELECT count(*)::int AS n FROM public.places_north')).toEqual([{ n: 5 }]);

        for (const [values, message] of [
          [{ region: 'east' }, /parameters.region: must be one of "north", "south"/],
          [{ min_population: 'many' }, /parameters.min_population: must be an integer/],
          [{ colour: 'red' }, /no parameter "colour"/],
        ] as const) {
          const res = await api.call('POST', `/api/v1/jobs/${job.id}/run`, { parameters: values });
          expect(res.statusCode).toBe(422);
          expect(res.json().error.message).toMatch(message);
        }
        const undeclared = await api.call('PUT', `/api/v1/jobs/${job.id}`, { ...body, source_id: sourceId, sql: 'SELECT * FROM source LIMIT {{limit}}' });
        expect(undeclared.statusCode).toBe(422);
        expect(undeclared.json().error.message).toMatch(/uses \{\{limit\}\}, but the Job declares no parameter "limit"/);
        const scheduled = await api.call('PUT', `/api/v1/jobs/${job.id}`, {
          ...body,
          source_id: sourceId,
          parameters: [{ name: 'region', type: 'string' }, body.parameters[1]],
          schedule: { kind: 'daily', timezone: 'UTC', hour: 1, minute: 0 },
        });
        expect(scheduled.statusCode).toBe(422);
        expect(scheduled.json().error.message).toMatch(/"region" has no default/);
        expect((await runsOf(job.id)).filter((r) => !finished(r.status))).toEqual([]);
        await api.call('DELETE', `/api/v1/jobs/${job.id}`);
      } finally {
        await target.drop();
      }
    }, 180_000);
  });
});
