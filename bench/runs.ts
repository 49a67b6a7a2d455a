import { Client, Connection } from '@temporalio/client';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { connectorByType } from '../connectors/registry.js';
import { startStack } from './stack.js';

/**
 * `npm run bench:runs`: Jobs from a url Source into PostGIS, through the whole service (API,
 * Temporal, worker as separate processes), against the same work done by a plain script
 * (curl + ogr2ogr + psql) in the same run on the same machine.
 * 1. Latency: Run Now → succeeded for a one-feature Job (median of BENCH_ROUNDS), and how much of
 *    it is spent outside the activities (Temporal's history gives each activity's time).
 * 2. Throughput: 100 Runs across 20 Jobs (5 each, one at a time per Job as the service runs them;
 *    the script runs 20 loops of 5 side by side), in Runs per second.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const JOBS = Number(process.env.BENCH_JOBS ?? 20);
const RUNS_PER_JOB = Number(process.env.BENCH_RUNS_PER_JOB ?? 5);

if (!connectorByType('postgis')?.implemented) {
  console.error('bench:runs loads into PostGIS, and this build cannot deliver to PostGIS yet (connectors/postgis: implemented false)');
  process.exit(1);
}

const feature = JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', properties: { id: 1, name: 'one' }, geometry: { type: 'Point', coordinates: [7.44, 46.95] } }] });
// No ETag or Last-Modified: every Run reads the file in full (an unchanged file would skip the work).
const files = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/geo+json' }).end(feature));
await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
const fileUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/one.geojson`;

const stack = await startStack('runs', {}, { scopes: ['jobs:read', 'jobs:write', 'jobs:run', 'sources:write', 'destinations:write'], databases: ['target'] });
const targetUrl = new URL(stack.databaseUrlOf('target'));
const connection = await Connection.connect({ address: stack.temporalAddress });
const temporal = new Client({ connection });

const api = async (method: string, url: string, body?: unknown) => {
  const res = await fetch(`${stack.base}${url}`, {
    method,
    headers: { authorization: `Bearer ${stack.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? null : ((await res.json()) as any);
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;

/** Time spent inside activities, from the Run's workflow history: the step activities, and all of them. */
async function activityTime(runId: string): Promise<{ steps: number; all: number }> {
  const history = await temporal.workflow.getHandle(`run-${runId}`).fetchHistory();
  const started = new Map<string, number>();
  const names = new Map<string, string>();
  let steps = 0;
  let all = 0;
  for (const e of history.events ?? []) {
    const id = String(e.eventId);
    if (e.activityTaskScheduledEventAttributes) names.set(id, e.activityTaskScheduledEventAttributes.activityType?.name ?? '');
    if (e.activityTaskStartedEventAttributes) started.set(String(e.activityTaskStartedEventAttributes.scheduledEventId), ms(e.eventTime));
    const done = e.activityTaskCompletedEventAttributes;
    if (done) {
      const took = ms(e.eventTime) - started.get(String(done.scheduledEventId))!;
      all += took;
      if (/Step$/.test(names.get(String(done.scheduledEventId)) ?? '')) steps += took;
    }
  }
  return { steps, all };
}

const pgConnection = `PG:host=${targetUrl.hostname} port=${targetUrl.port} dbname=target user=${decodeURIComponent(targetUrl.username)} password=${decodeURIComponent(targetUrl.password)}`;
// The file server lives in this process: the script runs asynchronously, never blocking it.
const sh = (command: string) => promisify(execFile)('bash', ['-c', command]);
const script = (table: string, file: string) =>
  `curl -sf -o ${file} '${fileUrl}' && ogr2ogr -f PostgreSQL '${pgConnection}' ${file} -nln ${table} -overwrite -lco GEOMETRY_NAME=geom && psql '${targetUrl.toString()}' -qAtc 'SELECT count(*) FROM ${table}' >/dev/null`;

try {
  const work = path.join(stack.dir, 'files');
  mkdirSync(work, { recursive: true });
  const source = await api('POST', '/api/v1/sources', { name: 'one feature', type: 'url', configuration: { url: fileUrl } });
  const destination = await api('POST', '/api/v1/destinations', {
    name: 'target', type: 'postgis',
    configuration: { host: targetUrl.hostname, port: Number(targetUrl.port), database: 'target', username: decodeURIComponent(targetUrl.username), password: decodeURIComponent(targetUrl.password), ssl_mode: 'disable' },
  });
  const createJob = (table: string) =>
    api('POST', '/api/v1/jobs', { name: table, source_id: source.id, destination_id: destination.id, destination_target: { table, write_mode: 'replace' } });

  // ---- 1. Latency ----------------------------------------------------------------------------
  const job = await createJob('bench_one');
  const totals: number[] = [];
  const inside: { steps: number; all: number }[] = [];
  for (let round = -3; round < ROUNDS; round++) {
    const t0 = performance.now();
    const run = await api('POST', `/api/v1/jobs/${job.id}/run`);
    let status = run.status;
    while (status !== 'succeeded') {
      if (status === 'failed' || status === 'cancelled') throw new Error(`Run ${run.id} ${status}`);
      await new Promise((r) => setTimeout(r, 5));
      status = (await api('GET', `/api/v1/jobs/${job.id}/runs/${run.id}`)).status;
    }
    const total = performance.now() - t0;
    if (round < 0) continue; // warm-up
    totals.push(total);
    inside.push(await activityTime(run.id));
  }
  const baseline: number[] = [];
  for (let round = -1; round < ROUNDS; round++) {
    const t0 = performance.now();
    await sh(script('bench_base', path.join(work, 'one.geojson')));
    if (round >= 0) baseline.push(performance.now() - t0);
  }
  const total = median(totals);
  const steps = median(inside.map((i) => i.steps));
  const all = median(inside.map((i) => i.all));

  // ---- 2. Throughput --------------------------------------------------------------------------
  const jobs = [];
  for (let i = 0; i < JOBS; i++) jobs.push(await createJob(`bench_job_${i}`));
  const t0 = performance.now();
  const runs: { job: string; id: string }[] = [];
  for (let k = 0; k < RUNS_PER_JOB; k++) for (const j of jobs) runs.push({ job: j.id, id: (await api('POST', `/api/v1/jobs/${j.id}/run`)).id });
  const pending = new Set(runs.map((r) => r.id));
  while (pending.size) {
    await new Promise((r) => setTimeout(r, 100));
    for (const j of jobs) {
      for (const r of (await api('GET', `/api/v1/jobs/${j.id}/runs?limit=${RUNS_PER_JOB}`)).items) {
        if (r.status === 'failed' || r.status === 'cancelled') throw new Error(`Run ${r.id} ${r.status}: ${JSON.stringify(r.error)}`);
        if (r.status === 'succeeded') pending.delete(r.id);
      }
    }
  }
  const serviceSeconds = (performance.now() - t0) / 1000;
  const b0 = performance.now();
  await Promise.all(
    Array.from({ length: JOBS }, (_, i) => {
      const loop = Array.from({ length: RUNS_PER_JOB }, () => script(`base_job_${i}`, path.join(work, `base-${i}.geojson`))).join(' && ');
      return sh(loop);
    }),
  );
  const scriptSeconds = (performance.now() - b0) / 1000;
  const count = execFileSync('psql', [targetUrl.toString(), '-qAtc', `SELECT count(*) FROM bench_job_0`]).toString().trim();
  if (count !== '1') throw new Error(`bench_job_0 holds ${count} rows, expected 1`);

  const n = runs.length;
  const lines = [
    `Latency, one-feature Job, median of ${ROUNDS} (Run Now → succeeded seen by the client):`,
    `  service ${total.toFixed(0)} ms   script (curl + ogr2ogr + psql) ${median(baseline).toFixed(0)} ms   ratio ${(total / median(baseline)).toFixed(2)}`,
    `  inside the step activities ${steps.toFixed(0)} ms, inside all activities (with recording) ${all.toFixed(0)} ms;`,
    `  outside the activities ${(total - all).toFixed(0)} ms = ${((100 * (total - all)) / total).toFixed(0)}% (queueing, workflow tasks, polling the API)`,
    `Throughput, ${n} Runs across ${JOBS} Jobs:`,
    `  service ${(n / serviceSeconds).toFixed(2)} Runs/s (${serviceSeconds.toFixed(1)} s)   script ${(n / scriptSeconds).toFixed(2)} Runs/s (${scriptSeconds.toFixed(1)} s)   ratio ${(serviceSeconds / scriptSeconds).toFixed(2)}`,
  ];
  console.log(`\n${lines.join('\n')}`);
  writeFileSync(path.join(stack.dir, 'result.txt'), `${lines.join('\n')}\n`);
} finally {
  await connection.close();
  files.close();
  await stack.stop();
}
