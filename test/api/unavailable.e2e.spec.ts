import { createServer, connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, createToken, login, type TestApp } from '../support/app.js';
import { startTemporal, type LocalTemporal } from '../../scripts/local-services.js';
import { freePort } from '../../devservers/ports.js';
import { createTestDatabase, skipWithoutDatabase } from '../support/database.js';
import { jobsClient } from '../support/jobs.js';
import { until } from '../support/until.js';
import { temporalMissing } from '../support/worker.js';

/**
 * A TCP proxy to PostgreSQL that can go silent as a network partition does: while `partitioned`,
 * nothing passes either way (held, as TCP would keep retransmitting it) and new connections get
 * no answer; healed, what was held goes through.
 */
async function partitionableProxy(to: { host: string; port: number }) {
  let partitioned = false;
  const held: (() => void)[] = [];
  const sockets = new Set<Socket>();
  const pass = (from: Socket, into: Socket) =>
    from.on('data', (chunk: Buffer) => {
      if (partitioned) held.push(() => into.write(chunk));
      else into.write(chunk);
    });
  const proxy = createServer((client) => {
    const server = connect(to.port, to.host);
    for (const s of [client, server]) {
      sockets.add(s);
      s.on('error', () => undefined);
    }
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
    pass(client, server);
    pass(server, client);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  return {
    port: (proxy.address() as AddressInfo).port,
    partition: () => (partitioned = true),
    heal() {
      partitioned = false;
      held.splice(0).forEach((write) => {
        write();
      });
    },
    close() {
      for (const s of sockets) s.destroy();
      proxy.close();
    },
  };
}

/*
 * An API that cannot reach its database answers 503 service_unavailable with Retry-After, at once
 * once it has noticed (platform/database-watch.ts), instead of waiting out connection timeouts or
 * TCP; /healthz still answers and /readyz says why; healed, it serves fully again. The cluster
 * suite (test/cluster) shows the same on a real partition between two hosts.
 */
describe.skipIf(skipWithoutDatabase)('the API while its database does not answer', () => {
  let sut: TestApp;
  let proxy: Awaited<ReturnType<typeof partitionableProxy>>;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let token: string;

  beforeAll(async () => {
    db = await createTestDatabase();
    const url = new URL(db.url);
    proxy = await partitionableProxy({ host: url.hostname, port: Number(url.port) });
    url.host = `127.0.0.1:${proxy.port}`;
    sut = await createTestApp({ databaseUrl: url.toString() });
    token = await createToken(sut.app, await login(sut.app), ['recipes:read', 'recipes:write']);
  });
  afterAll(async () => {
    proxy?.heal();
    await sut?.close();
    proxy?.close();
    await db?.drop();
  });

  /** A request, or 'no answer' when none comes within `ms` (requests in flight at the partition wait). */
  const within = async <T>(request: Promise<T>, ms = 5_000) =>
    Promise.race([request, new Promise<'no answer'>((r) => setTimeout(() => r('no answer'), ms).unref())]);
  const recipes = () => sut.app.inject({ method: 'GET', url: '/api/v1/recipes', headers: bearer(token) });
  /** GET /recipes until it answers `status`, 200 ms apart (a loop of answers at once would starve the watch's timers). */
  const recipesAnswering = (status: number, timeoutMs: number) =>
    until(
      `GET /recipes answering ${status}`,
      async () => {
        const answer = await within(recipes());
        return answer !== 'no answer' && answer.statusCode === status && answer;
      },
      timeoutMs,
      200,
    );

  it('answers 503 with Retry-After while partitioned, and serves reads and writes once healed', async () => {
    expect((await recipes()).statusCode).toBe(200);
    proxy.partition();
    const deadline = Date.now() + 30_000;
    const answer = await recipesAnswering(503, 30_000);
    expect(answer).not.toBe('no answer');
    const refused = answer as Awaited<ReturnType<typeof recipes>>;
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.json()).toEqual({
      error: { code: 'service_unavailable', message: expect.stringMatching(/database does not answer/), details: { retry_after_seconds: 5 } },
    });
    // Writes too, at once now; the process itself is alive, and not ready.
    const write = await within(sut.app.inject({ method: 'POST', url: '/api/v1/recipes', headers: bearer(token), payload: { name: 'x', operations: [] } }));
    expect(write).toMatchObject({ statusCode: 503 });
    expect((await sut.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    const ready = await sut.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().checks.database).toBe('unreachable');

    proxy.heal();
    const back = await recipesAnswering(200, deadline + 30_000 - Date.now());
    expect(back.statusCode).toBe(200);
    const created = await sut.app.inject({ method: 'POST', url: '/api/v1/recipes', headers: bearer(token), payload: { name: 'after', operations: [] } });
    expect(created.statusCode, created.body).toBe(201);
    const read = await sut.app.inject({ method: 'GET', url: `/api/v1/recipes/${created.json().id}`, headers: bearer(token) });
    expect(read.json()).toMatchObject({ name: 'after' });
    expect((await sut.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  }, 120_000);
});

/*
 * Run Now hands the Run to Temporal before anything is recorded: when Temporal does not answer,
 * 503 with Retry-After and no Run (the cluster suite stops Temporal with Runs in flight too).
 */
describe.skipIf(skipWithoutDatabase || temporalMissing)('Run Now while Temporal does not answer', () => {
  let sut: TestApp;
  let temporal: LocalTemporal;

  afterAll(async () => {
    temporal?.stop();
    await sut?.close();
  });

  it('answers 503 with Retry-After and records no Run', async () => {
    temporal = await startTemporal(path.resolve(process.env.SVC_DATA_DIR ?? '.data'), await freePort());
    sut = await createTestApp({ temporal: true, env: { SVC_TEMPORAL_ADDRESS: temporal.address } });
    const api = jobsClient(
      () => sut.app,
      await createToken(sut.app, await login(sut.app), ['jobs:read', 'jobs:write', 'jobs:run', 'sources:write', 'destinations:write']),
    );
    const source = await api.call('POST', '/api/v1/sources', { name: 's', type: 'url', configuration: { url: 'http://127.0.0.1:9/none.geojson' } });
    const destination = await api.call('POST', '/api/v1/destinations', { name: 'd', type: 'webhook', configuration: { url: 'http://127.0.0.1:9/hook' } });
    const job = (await api.call('POST', '/api/v1/jobs', { name: 'j', source_id: source.json().id, destination_id: destination.json().id })).json();
    const exited = new Promise((r) => temporal.process.once('exit', r));
    temporal.stop();
    await exited;
    const refused = await api.call('POST', `/api/v1/jobs/${job.id}/run`);
    expect(refused.statusCode, refused.body).toBe(503);
    expect(refused.headers['retry-after']).toBe('5');
    expect(refused.json().error).toMatchObject({
      code: 'service_unavailable',
      message: expect.stringMatching(/workflow service does not answer; nothing was recorded/),
    });
    expect((await api.call('GET', `/api/v1/jobs/${job.id}/runs`)).json().items).toEqual([]);
  }, 120_000);
});
