import { sql } from 'slonik';
import { describe, expect, test } from 'vitest';
import { record } from '../../application/commands.js';
import { recordQueuedRun } from '../../application/runs.js';
import { jobDecider, jobStream } from '../../domain/jobs/job.js';
import { runDecider, runStream, type RunCommand } from '../../domain/runs/run.js';
import { projectors } from '../../projections/index.js';
import { rebuildProjections } from '../../projections/runner.js';
import { bearer, createTestApp, createToken, login, type TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest } from '../support/e2e.js';
import { fixtureDir, pointsGeoJson } from '../support/fixtures.js';
import { multipartFile } from '../support/multipart.js';

async function tableRows(sut: TestApp, schema: string, table: string) {
  const rows = await sut.services.pool.any(sql.unsafe`SELECT to_jsonb(t) AS row FROM ${sql.identifier([schema, table])} t ORDER BY 1`);
  return rows.map((r) => JSON.stringify((r as { row: unknown }).row));
}

const it = e2eTest({ scopes: ['recipes:read', 'recipes:write'] });

describe.skipIf(skipWithoutDatabase)('projection rebuild', () => {
  let sut: TestApp;
  it.beforeAll(async ({ sut: theSut, cookie, token }) => {
    sut = theSut;
    const revoked = await createToken(sut.app, cookie, ['account:read'], { expires_in_days: 3 });
    // some history: creates, updates, deletes, a revoked token, a used token
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await sut.app.inject({
        method: 'POST',
        url: '/api/v1/recipes',
        headers: bearer(token),
        payload: { name: `r${i}`, operations: [{ type: 'centroid' }] },
      });
      ids.push(res.json().id);
    }
    await sut.app.inject({ method: 'PUT', url: `/api/v1/recipes/${ids[0]}`, headers: bearer(token), payload: { name: 'renamed', operations: [] } });
    await sut.app.inject({ method: 'DELETE', url: `/api/v1/recipes/${ids[1]}`, headers: bearer(token) });
    const list = await sut.app.inject({ method: 'GET', url: '/api/v1/account/tokens', headers: { cookie } });
    const revokedId = list.json().items.find((t: { prefix: string }) => revoked.startsWith(t.prefix) && t.prefix.length > 7)?.id;
    await sut.app.inject({ method: 'DELETE', url: `/api/v1/account/tokens/${revokedId}`, headers: { cookie } });
    // a Workspace with a pipeline (upload and pipeline need no worker)
    const file = pointsGeoJson(fixtureDir(), 3);
    const m = multipartFile(file);
    const ws = await sut.app.inject({ method: 'POST', url: '/api/v1/workspaces', payload: m.payload, headers: { ...m.headers, cookie } });
    await sut.app.inject({
      method: 'PUT',
      url: `/api/v1/workspaces/${ws.json().id}/transformations`,
      headers: { cookie },
      payload: { operations: [{ type: 'centroid' }] },
    });
    // Sources and Destinations: created, updated (secret kept, then cleared), one deleted
    const conn = (method: 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
      sut.app.inject({ method, url, headers: { cookie }, ...(payload ? { payload } : {}) });
    const pgConfig = { host: 'db.example.org', database: 'gis', username: 'u', password: 'a secret' };
    const src = (await conn('POST', '/api/v1/sources', { name: 's', type: 'postgis', configuration: pgConfig })).json();
    await conn('PUT', `/api/v1/sources/${src.id}`, { name: 's2', type: 'postgis', configuration: { ...pgConfig, password: undefined } });
    await conn('POST', '/api/v1/destinations', { name: 'd', type: 's3', configuration: { bucket: 'b-1', secret_key: 'k' } });
    const gone = (await conn('POST', '/api/v1/destinations', { name: 'gone', type: 'webhook', configuration: { url: 'https://example.org/hook' } })).json();
    await conn('DELETE', `/api/v1/destinations/${gone.id}`);
    // Notification channels: one kept (its secret sealed), one deleted
    const hook = { type: 'webhook', configuration: { url: 'https://example.org/notify?token=t', format: 'geoflow', signing_secret: 'a signing secret' } };
    const kept = await conn('POST', '/api/v1/notification-channels', { name: 'ops', ...hook });
    expect(kept.statusCode, kept.body).toBe(201);
    const dropped = (await conn('POST', '/api/v1/notification-channels', { name: 'old', ...hook })).json();
    await conn('DELETE', `/api/v1/notification-channels/${dropped.id}`);
    // Jobs and Runs: a Job changed a few times, and a Run's life recorded as the worker would
    const source = await sut.app.inject({
      method: 'POST',
      url: '/api/v1/sources',
      headers: { cookie },
      payload: { name: 's', type: 'url', configuration: { url: 'http://127.0.0.1:9/x.geojson' } },
    });
    const destination = await sut.app.inject({
      method: 'POST',
      url: '/api/v1/destinations',
      headers: { cookie },
      payload: { name: 'd', type: 'postgis', configuration: { host: 'h', database: 'd', username: 'u' } },
    });
    const jobBody = {
      name: 'j',
      source_id: source.json().id,
      destination_id: destination.json().id,
      destination_target: { table: 't' },
      operations: [{ type: 'centroid' }],
    };
    const job = (await sut.app.inject({ method: 'POST', url: '/api/v1/jobs', headers: { cookie }, payload: jobBody })).json();
    await sut.app.inject({ method: 'PUT', url: `/api/v1/jobs/${job.id}`, headers: { cookie }, payload: { ...jobBody, name: 'j2' } });
    await sut.app.inject({ method: 'POST', url: `/api/v1/jobs/${job.id}/disable`, headers: { cookie } });
    await sut.app.inject({ method: 'POST', url: `/api/v1/jobs/${job.id}/sync/reset`, headers: { cookie } });
    const ownerId = job && (await sut.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { cookie } })).json().id;
    const at = new Date();
    await recordQueuedRun(sut.services, { runId: 'run_rebuild1', jobId: job.id, ownerId, trigger: 'manual', retryOf: null, scheduledFor: null });
    for (const command of [
      { type: 'StartRun', runId: 'run_rebuild1', workflowId: 'run-run_rebuild1', workflowRunId: 'x', sync: { cursor: null, reinitialize: false, seq: 1 }, at },
      { type: 'StartStep', runId: 'run_rebuild1', step: 'extract', at },
      { type: 'FinishStep', runId: 'run_rebuild1', step: 'extract', status: 'succeeded', stats: { features_read: 3 }, at },
      { type: 'FailRun', runId: 'run_rebuild1', error: { code: 'source_failed', message: 'gone', step: 'transform', retryable: true }, at },
    ] as RunCommand[]) {
      await record(sut.services, runStream('run_rebuild1'), runDecider, command);
    }
    await record(sut.services, jobStream(job.id), jobDecider, {
      type: 'RecordRunOutcome',
      jobId: job.id,
      runId: 'run_rebuild1',
      trigger: 'manual',
      status: 'failed',
      maxConsecutiveFailures: 5,
      at,
    });
    await sut.services.projections.catchUp();
  });

  it('replays from zero into fresh tables identical to the live ones', async () => {
    await rebuildProjections(sut.services.store, sut.services.pool, projectors, { target: 'rm_verify' });
    for (const projector of projectors) {
      for (const table of projector.tables) {
        const live = await tableRows(sut, 'rm', table);
        const rebuilt = await tableRows(sut, 'rm_verify', table);
        expect(live.length, `${table} has rows`).toBeGreaterThan(0);
        expect(rebuilt, `${projector.name}.${table}`).toEqual(live);
      }
    }
  });

  it('swaps a rebuilt schema in while the API keeps answering', async () => {
    const before = await tableRows(sut, 'rm', 'recipes');
    await rebuildProjections(sut.services.store, sut.services.pool, projectors, { target: 'rm_rebuild', swapInto: 'rm' });
    expect(await tableRows(sut, 'rm', 'recipes')).toEqual(before);
    const cookie = await login(sut.app);
    const res = await sut.app.inject({ method: 'GET', url: '/api/v1/recipes', headers: { cookie } });
    expect(res.json().items).toHaveLength(5);
  });
});

// A fresh app of its own: the test counts every Recipe there is.
describe.skipIf(skipWithoutDatabase)('projector versions', () => {
  test('replays a projector from zero when its version changes', async () => {
    const sut = await createTestApp();
    try {
      const cookie = await login(sut.app);
      await sut.app.inject({ method: 'POST', url: '/api/v1/recipes', headers: { cookie }, payload: { name: 'kept', operations: [] } });
      // simulate an older projector version whose table was shaped differently
      await sut.services.pool.query(sql.unsafe`UPDATE rm.checkpoints SET version = 0 WHERE projector = 'recipes'`);
      await sut.services.pool.query(sql.unsafe`ALTER TABLE rm.recipes RENAME COLUMN description TO old_description`);
      await sut.services.projections.init();
      await sut.services.projections.catchUp();
      const res = await sut.app.inject({ method: 'GET', url: '/api/v1/recipes', headers: { cookie } });
      expect(res.statusCode).toBe(200);
      expect(res.json().items.map((r: { name: string }) => r.name)).toEqual(['kept']);
    } finally {
      await sut.close();
    }
  });
});
