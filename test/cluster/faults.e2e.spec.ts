import { existsSync, rmSync, statfsSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3ServerUnavailable } from '../../devservers/s3/server.js';
import { fixtureDir, manyPointsGpkg, pointsGeoJson } from '../support/fixtures.js';
import { multipartFile } from '../support/multipart.js';
import { fileBody, finished, type RunJson } from '../support/jobs.js';
import { SMALL_DISK_MB, sleep, startCluster, until, waitForRun, type ApiClient, type Cluster } from './cluster.js';
import { networkUnavailable } from '../../devservers/network.js';
import { temporalMissing } from '../support/worker.js';

/*
 * "Runs on several machines", shown: the service on seven hosts made of network namespaces
 * (./cluster.ts), and with Runs in flight, what happens to real hosts: a worker cut off the
 * network in the middle of a delivery, an API replica killed in the middle of an upload, an API
 * replica partitioned from PostgreSQL, Temporal stopped, a worker's data disk full; and 200 Runs
 * spread over both workers. One cluster serves every test (it takes a minute or two to start);
 * each test leaves it whole for the next and prints what the Runs, the target tables and the
 * bucket held afterwards.
 */

const skip =
  networkUnavailable() ||
  s3ServerUnavailable() ||
  temporalMissing ||
  (!existsSync('/usr/lib/postgresql/15/bin/initdb') && 'PostgreSQL 15 is missing (scripts/ensure.sh installs it)');

describe.skipIf(skip)(`several hosts under faults (network namespaces)${skip ? ` (skipped: ${skip})` : ''}`, () => {
  let cluster: Cluster;
  let destinationId: string;
  const dir = fixtureDir();

  beforeAll(async () => {
    const started = Date.now();
    cluster = await startCluster();
    console.log(`[cluster] ${cluster.network.cidr}: pg, tp (Temporal), s3, api1, api2, w1, w2 up in ${Math.round((Date.now() - started) / 1000)} s`);
    const created = await cluster.api().call('POST', '/api/v1/destinations', { name: 'target', type: 'postgis', configuration: cluster.target });
    expect(created.status, created.text).toBe(201);
    destinationId = created.body.id;
  }, 400_000);

  afterAll(async () => {
    await cluster?.stop();
  }, 120_000);

  /**
   * A Job reading `file` (served at `/<name>` without validators, so that every Run reads and
   * delivers it: a url Source skips a Run whose file did not change) into the target table `table`.
   */
  const job = async (api: ApiClient, name: string, file: string, table: string, writeMode: 'append' | 'replace' = 'replace', type?: string) => {
    cluster.files.put(`/${name}`, fileBody(file), type, { validators: false });
    const source = await api.call('POST', '/api/v1/sources', { name, type: 'url', configuration: { url: `${cluster.files.url}/${name}` } });
    expect(source.status, source.text).toBe(201);
    const created = await api.call('POST', '/api/v1/jobs', {
      name,
      source_id: source.body.id,
      destination_id: destinationId,
      destination_target: { table, write_mode: writeMode },
    });
    expect(created.status, created.text).toBe(201);
    return created.body.id as string;
  };
  const runNow = async (api: ApiClient, jobId: string) => {
    const res = await api.call('POST', `/api/v1/jobs/${jobId}/run`);
    expect(res.status, res.text).toBe(201);
    return res.body.id as string;
  };
  const count = async (table: string) => Number((await cluster.sql<{ n: string }>('target', `SELECT count(*) AS n FROM public."${table}"`))[0]!.n);
  /** The identities of the workers that started the Run's (non-local) activities, in order. */
  // One connection for reading histories (the first tests run before Temporal is restarted).
  let historyConnection: Awaited<ReturnType<Cluster['temporal']['connection']>> | undefined;
  const activityWorkers = async (runId: string) => {
    historyConnection ??= await cluster.temporal.connection();
    const connection = historyConnection;
    const got = await connection.workflowService.getWorkflowExecutionHistory({ namespace: 'default', execution: { workflowId: `run-${runId}` } });
    return (got.history?.events ?? []).flatMap((e) => (e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.identity ?? ''] : []));
  };

  it('runs 200 Runs over both workers (each at least 35 %), every one succeeded, none delivered twice', async () => {
    const JOBS = 20;
    const PER_JOB = 10;
    const ROWS = 5;
    const points = pointsGeoJson(fixtureDir(), ROWS);
    // One request at a time (the machine is shared; the Runs themselves run side by side).
    const ids: string[] = [];
    for (let i = 0; i < JOBS; i++) ids.push(await job(cluster.api(i % 2 ? 'api2' : 'api1'), `spread${i}`, points, `spread_${i}`, 'append'));
    const runIds: string[] = [];
    // Run Now ten times on each Job, through both replicas in turn: each Job's coordinator runs its
    // Runs one after the other, the twenty Jobs side by side.
    for (let n = 0; n < PER_JOB; n++) {
      for (const [i, id] of ids.entries()) runIds.push(await runNow(cluster.api((i + n) % 2 ? 'api2' : 'api1'), id));
    }
    expect(new Set(runIds).size).toBe(JOBS * PER_JOB);
    const done = await until(
      'all 200 Runs finished',
      async () => {
        const rows = await cluster.sql<{ n: string }>(
          'geoflow',
          `SELECT count(*) AS n FROM rm.runs WHERE id = ANY($1) AND status IN ('succeeded', 'failed', 'cancelled')`,
          [runIds],
        );
        return Number(rows[0]!.n) === runIds.length;
      },
      600_000,
      1000,
    );
    expect(done).toBe(true);
    const statuses = await cluster.sql<{ status: string; n: string }>(
      'geoflow',
      'SELECT status, count(*) AS n FROM rm.runs WHERE id = ANY($1) GROUP BY status',
      [runIds],
    );
    // A Run that did not succeed names its error in the failure message.
    const unsuccessful = await cluster.sql<{ id: string; status: string; error: unknown }>(
      'geoflow',
      "SELECT id, status, error FROM rm.runs WHERE id = ANY($1) AND status <> 'succeeded'",
      [runIds],
    );
    expect(
      statuses.map((s) => [s.status, Number(s.n)]),
      JSON.stringify(unsuccessful),
    ).toEqual([['succeeded', JOBS * PER_JOB]]);
    // Every Run's rows once: ten deliveries of five rows per table, one ledger row per Run.
    for (let i = 0; i < JOBS; i++) expect(await count(`spread_${i}`), `spread_${i}`).toBe(PER_JOB * ROWS);
    const ledger = await cluster.sql<{ n: string; ids: string }>(
      'target',
      'SELECT count(*) AS n, count(DISTINCT delivery_id) AS ids FROM public._geoflow_deliveries',
    );
    expect(ledger[0]).toMatchObject({ n: String(JOBS * PER_JOB), ids: String(JOBS * PER_JOB) });
    // Which worker ran each Run's step (Temporal's history names the worker that started it).
    const byWorker: Record<string, number> = { w1: 0, w2: 0 };
    for (const id of runIds) {
      const identities = await activityWorkers(id);
      const worker = cluster.workerOf(identities[0]);
      expect(worker, `Run ${id} ran on ${identities[0]}`).toBeDefined();
      byWorker[worker!.name]! += 1;
    }
    console.log(`[cluster] 200 Runs: w1 ran ${byWorker.w1}, w2 ran ${byWorker.w2}`);
    for (const name of ['w1', 'w2']) expect(byWorker[name], name).toBeGreaterThanOrEqual(0.35 * JOBS * PER_JOB);
    const state = await cluster.report('after 200 Runs over two workers');
    expect(state.staging).toEqual([]);
    expect(state.bucket.runs ?? 0).toBe(0);
  }, 900_000);

  it('finishes a Run on the other worker, with every row once, when the worker delivering it is cut off the network (link down)', async () => {
    const POINTS = 300_000;
    const api = cluster.api('api2');
    const id = await job(api, 'cut', manyPointsGpkg(dir, POINTS), 'cut', 'replace', 'application/geopackage+sqlite3');
    const runId = await runNow(api, id);
    // Cut off once its load is writing the staging table: the host whose connection copies rows is the one delivering.
    const loader = await until(
      'a worker loading the staging table',
      async () => {
        const rows = await cluster.sql<{ addr: string }>(
          'target',
          "SELECT host(client_addr) AS addr FROM pg_stat_activity WHERE datname = 'target' AND query ILIKE 'COPY%' AND state = 'active'",
        );
        return rows[0]?.addr;
      },
      180_000,
      50,
    );
    const victim = cluster.workers.find((w) => w.host.address === loader)!;
    const other = cluster.workers.find((w) => w !== victim)!;
    expect(victim, `the loading connection comes from ${loader}`).toBeDefined();
    expect((await waitForRun(api, id, runId, () => true)).status).toBe('running');
    victim.host.linkDown();
    console.log(`[cluster] ${victim.name} cut off while delivering Run ${runId}`);
    try {
      const done = await waitForRun(api, id, runId, (r) => finished(r.status), 300_000);
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      expect(done.stats.features_written).toBe(POINTS);
      const identities = await activityWorkers(runId);
      expect(cluster.workerOf(identities.at(-1))?.name, 'the attempt that finished').toBe(other.name);
      const rows = await cluster.sql<{ n: string; ids: string }>('target', 'SELECT count(*) AS n, count(DISTINCT id) AS ids FROM public.cut');
      expect(rows[0]).toEqual({ n: String(POINTS), ids: String(POINTS) });
      await cluster.report(`after ${victim.name} was cut off mid-delivery (still cut off)`);
    } finally {
      victim.host.linkUp();
    }
    // Back on the network, the cut-off worker learns its attempt is over and leaves nothing behind.
    await until(
      `${victim.name}'s old attempt gone from the target database`,
      async () =>
        (
          await cluster.sql(
            'target',
            "SELECT 1 FROM pg_stat_activity WHERE datname = 'target' AND host(client_addr) = $1 AND (state <> 'idle' OR query ILIKE 'COPY%')",
            [victim.host.address],
          )
        ).length === 0,
      120_000,
      500,
    );
    expect(await count('cut')).toBe(POINTS);
    const state = await cluster.report(`after ${victim.name} came back`);
    expect(state.staging).toEqual([]);
    // It takes work again.
    const again = await waitForRun(api, id, await runNow(api, id));
    expect(again.status).toBe('succeeded');
  }, 600_000);

  it('records no Workspace for an upload whose API replica is killed in the middle, and the retried upload works on the other', async () => {
    const file = manyPointsGpkg(dir, 200_000);
    const size = statSync(file).size;
    const workspacesBefore = Number((await cluster.sql<{ n: string }>('geoflow', "SELECT count(*) AS n FROM events WHERE type = 'WorkspaceCreated'"))[0]!.n);
    const api1 = cluster.apis[0]!;
    const { payload, headers } = multipartFile(file);
    // The body goes out in 1 MiB pieces, slowly enough that the replica dies with it half sent.
    let sent = 0;
    const failed = new Promise<string>((resolve) => {
      const req = request(`${cluster.api('api1').base}/api/v1/workspaces`, {
        method: 'POST',
        headers: { ...headers, authorization: `Bearer ${cluster.token}`, 'content-length': String(payload.length) },
      });
      req.on('response', (res) => resolve(`answered ${res.statusCode}`));
      req.on('error', (error) => resolve(error.message));
      const pump = () => {
        if (sent >= payload.length) return req.end();
        const piece = payload.subarray(sent, sent + (1 << 20));
        sent += piece.length;
        req.write(piece, () => setTimeout(pump, 200));
      };
      pump();
    });
    // Killed once the bucket has begun receiving the upload (a multipart upload under way).
    await until('the upload reaching the bucket', async () => (await cluster.state()).openUploads > 0, 60_000, 100);
    expect(sent).toBeLessThan(payload.length);
    await api1.stop('SIGKILL');
    expect(await failed).not.toMatch(/^answered/);
    console.log(`[cluster] api1 killed with ${Math.round(sent / 1048576)} of ${Math.round(size / 1048576)} MiB sent`);
    const workspacesAfter = Number((await cluster.sql<{ n: string }>('geoflow', "SELECT count(*) AS n FROM events WHERE type = 'WorkspaceCreated'"))[0]!.n);
    expect(workspacesAfter).toBe(workspacesBefore);

    const retried = await fetch(`${cluster.api('api2').base}/api/v1/workspaces`, {
      method: 'POST',
      headers: { ...headers, authorization: `Bearer ${cluster.token}` },
      body: payload,
      signal: AbortSignal.timeout(120_000),
    });
    const workspace = (await retried.json()) as { id: string; status: string; size: number };
    expect(retried.status, JSON.stringify(workspace)).toBe(201);
    expect(workspace).toMatchObject({ status: 'inspected', size });
    const keys = await cluster.bucketKeys();
    expect(keys.filter((k) => k.includes(`/${workspace.id}/`)).length).toBeGreaterThan(0);
    const state = await cluster.report('after api1 was killed mid-upload and the upload was retried on api2');
    expect(state.bucket.workspaces).toBeGreaterThan(0);
    // The replica comes back (a new process on the same host) and serves the Workspace too.
    await api1.start();
    const shown = await cluster.api('api1').call('GET', `/api/v1/workspaces/${workspace.id}`);
    expect(shown.status, shown.text).toBe(200);
  }, 300_000);

  it('answers 503 with Retry-After while an API replica is partitioned from PostgreSQL for 20 s, and serves fully once healed', async () => {
    const [api1, api2] = [cluster.api('api1'), cluster.api('api2')];
    const points = pointsGeoJson(fixtureDir(), 7);
    const id = await job(api2, 'partition', points, 'partition', 'append');
    // Runs in flight through the other replica: the workers are not partitioned.
    const inFlight = [await runNow(api2, id), await runNow(api2, id)];
    const pg = cluster.network.host('pg');
    const started = Date.now();
    cluster.network.host('api1').partitionFrom(pg);
    const answers: { status: number; retryAfter: string | null; code: string }[] = [];
    try {
      // Requests in flight when the packets stop wait for their connection's timeout; once the
      // replica has noticed (its database watch: two missed answers), it answers at once.
      await until('api1 answering 503', async () => (await api1.call('GET', '/api/v1/recipes', undefined, { timeoutMs: 5_000 })).status === 503, 30_000, 500);
      console.log(`[cluster] api1 answered 503 ${((Date.now() - started) / 1000).toFixed(1)} s into the partition`);
      expect((await api1.call('GET', '/readyz', undefined, { timeoutMs: 10_000 })).body).toMatchObject({
        status: 'not_ready',
        checks: { database: 'unreachable' },
      });
      while (Date.now() - started < 20_000) {
        for (const [method, url] of [
          ['GET', `/api/v1/jobs/${id}`],
          ['POST', `/api/v1/jobs/${id}/run`],
          ['GET', '/api/v1/recipes'],
        ] as const) {
          const res = await api1.call(method, url, undefined, { timeoutMs: 10_000 });
          answers.push({ status: res.status, retryAfter: res.headers.get('retry-after'), code: res.body?.error?.code });
        }
        // The other replica serves as usual meanwhile.
        expect((await api2.call('GET', `/api/v1/jobs/${id}`)).status).toBe(200);
        // The pace of the requests through the 20 s partition (its length is what is tested).
        await sleep(1000);
      }
    } finally {
      cluster.network.host('api1').heal(pg);
    }
    expect(answers.length).toBeGreaterThan(0);
    expect(answers.filter((a) => a.status !== 503)).toEqual([]);
    expect(new Set(answers.map((a) => a.code))).toEqual(new Set(['service_unavailable']));
    expect(answers.every((a) => Number(a.retryAfter) > 0)).toBe(true);
    console.log(`[cluster] api1 answered ${answers.length} requests with 503 during the partition`);
    // Healed: every kind of request on api1 again.
    await until('api1 serving again', async () => (await api1.call('GET', `/api/v1/jobs/${id}`, undefined, { timeoutMs: 10_000 })).status === 200, 60_000, 500);
    const recipe = await api1.call('POST', '/api/v1/recipes', { name: 'after the partition', operations: [] });
    expect(recipe.status, recipe.text).toBe(201);
    expect((await api2.call('GET', `/api/v1/recipes/${recipe.body.id}`)).status).toBe(200);
    const after = await waitForRun(api1, id, await runNow(api1, id));
    expect(after.status).toBe('succeeded');
    for (const runId of inFlight) expect((await waitForRun(api1, id, runId)).status).toBe('succeeded');
    expect(await count('partition')).toBe(3 * 7);
    expect((await api1.call('GET', '/readyz')).status).toBe(200);
    await cluster.report('after api1 was partitioned from PostgreSQL for 20 s and healed');
  }, 300_000);

  it('completes the Runs in flight after Temporal was stopped for 30 s', async () => {
    const api = cluster.api('api2');
    const points = pointsGeoJson(fixtureDir(), 4);
    const ids = await Promise.all([0, 1, 2].map((i) => job(api, `outage${i}`, points, `outage_${i}`, 'append')));
    // In flight: each Job's first Run holds in its extract (its Source answers when released), a second one waits behind it.
    const held = ids.map((_, i) => cluster.files.hold(`/outage${i}`));
    const runIds = ids.map(() => [] as string[]);
    for (const [i, id] of ids.entries()) runIds[i]!.push(await runNow(api, id), await runNow(api, id));
    await until('the three Sources asked', async () => held.every((h) => h.waiting() > 0), 60_000, 100);
    await cluster.temporal.stop();
    const stopped = Date.now();
    let during: { status: number; retryAfter: string | null } | undefined;
    try {
      // Run Now cannot be handed to Temporal: 503 with Retry-After, nothing recorded.
      const refused = await api.call('POST', `/api/v1/jobs/${ids[0]}/run`, undefined, { timeoutMs: 60_000 });
      during = { status: refused.status, retryAfter: refused.headers.get('retry-after') };
      for (const h of held) h.release();
      // The outage lasts its 30 s: the tested time, so a sleep on purpose.
      await sleep(Math.max(0, 30_000 - (Date.now() - stopped)));
    } finally {
      await cluster.temporal.start();
    }
    expect(during).toMatchObject({ status: 503 });
    expect(Number(during!.retryAfter)).toBeGreaterThan(0);
    for (const [i, id] of ids.entries()) {
      for (const runId of runIds[i]!) {
        const done = await waitForRun(api, id, runId, (r) => finished(r.status), 300_000);
        expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
      }
      expect(await count(`outage_${i}`), `outage_${i}`).toBe(2 * 4);
      const runs = (await api.call('GET', `/api/v1/jobs/${id}/runs`)).body.items as RunJson[];
      expect(runs.map((r) => r.id).sort()).toEqual([...runIds[i]!].sort());
    }
    await cluster.report('after Temporal was stopped for 30 s with six Runs in flight');
  }, 600_000);

  it("fails a Run with a clear error and writes nothing when the worker's data disk is full", async () => {
    const [w1, w2] = cluster.workers as [(typeof cluster.workers)[0], (typeof cluster.workers)[0]];
    const api = cluster.api('api1');
    // First a small delivery succeeds: the target holds its rows.
    const small = pointsGeoJson(fixtureDir(), 3);
    const id = await job(api, 'diskfull', small, 'diskfull', 'replace');
    expect((await waitForRun(api, id, await runNow(api, id))).status).toBe('succeeded');
    // Only w2 (whose data folder is a disk of SMALL_DISK_MB) takes work; its disk is filled but for 4 MiB.
    await w1.stop('SIGTERM');
    const disk = path.join(w2.host.dataDir, 'data');
    const filler = path.join(disk, 'filler');
    try {
      const free = () => {
        const s = statfsSync(disk);
        return s.bavail * s.bsize;
      };
      writeFileSync(filler, Buffer.alloc(Math.max(0, free() - 4 * 1024 * 1024)));
      const freeBefore = free();
      expect(freeBefore).toBeLessThan(8 * 1024 * 1024);
      const big = manyPointsGpkg(dir, 100_000);
      expect(statSync(big).size).toBeGreaterThan(SMALL_DISK_MB * 1024 * 1024 * 0.1);
      cluster.files.put('/diskfull', fileBody(big), 'application/geopackage+sqlite3', { validators: false });
      const runId = await runNow(api, id);
      const done = await waitForRun(api, id, runId, (r) => finished(r.status), 300_000);
      expect(done.status).toBe('failed');
      expect(done.error).toMatchObject({ code: 'insufficient_storage', step: 'extract', retryable: false });
      expect(done.error!.message).toMatch(/disk|space/i);
      console.log(`[cluster] the Run on the full disk: ${done.error!.code}: ${done.error!.message}`);
      // Nothing half-written: the target keeps its rows, no staging table, nothing of the Run in the bucket or on the disk.
      expect(await count('diskfull')).toBe(3);
      const state = await cluster.report("after a Run met w2's full data disk");
      expect(state.staging).toEqual([]);
      expect((await cluster.bucketKeys()).filter((k) => k.includes(`/${runId}/`))).toEqual([]);
      expect(free()).toBeGreaterThanOrEqual(freeBefore);
    } finally {
      rmSync(filler, { force: true });
      await w1.start();
    }
  }, 600_000);
});
