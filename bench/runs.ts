import { Client, Connection } from '@temporalio/client';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { createReadStream, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { connectorByType } from '../connectors/registry.js';
import { startStack } from '../scripts/stack.js';
import { pointsFile } from './points.js';
import { runWorkflowId } from '../temporal/ids.js';

/**
 * `npm run bench:runs`: Jobs from a url Source into PostGIS, through the whole service (API,
 * Temporal, worker as separate processes), against the same work done by a plain script
 * (curl + ogr2ogr + psql) in the same run on the same machine.
 * 1. Latency: Run Now → succeeded for a one-feature Job (median of BENCH_ROUNDS), and how much of
 *    it is spent outside the activities (Temporal's history gives each activity's time).
 * 2. Throughput: 100 Runs across 20 Jobs (5 each, one at a time per Job as the service runs them;
 *    the script runs 20 loops of 5 side by side), in Runs per second.
 * 3. Volume: one Run of BENCH_BIG_POINTS points (1,000,000; a 140 MB GeoPackage), best of
 *    BENCH_BIG_ROUNDS, and the script doing the same. BENCH_BIG_POINTS=0 leaves it out.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 10);
const JOBS = Number(process.env.BENCH_JOBS ?? 20);
const RUNS_PER_JOB = Number(process.env.BENCH_RUNS_PER_JOB ?? 5);
const BIG_POINTS = Number(process.env.BENCH_BIG_POINTS ?? 1_000_000);
const BIG_ROUNDS = Number(process.env.BENCH_BIG_ROUNDS ?? 3);

if (!connectorByType('postgis')?.implemented) {
  console.error('bench:runs loads into PostGIS, and this build cannot deliver to PostGIS yet (connectors/postgis: implemented false)');
  process.exit(1);
}

const feature = JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', properties: { id: 1, name: 'one' }, geometry: { type: 'Point', coordinates: [7.44, 46.95] } }] });
// No ETag or Last-Modified: every Run reads the file in full (an unchanged file would skip the work).
const bigFile = BIG_POINTS > 0 ? pointsFile(path.resolve('.data/bench/files'), BIG_POINTS) : null;
const files = createServer((req, res) => {
  if (req.url === '/big.gpkg' && bigFile) {
    res.writeHead(200, { 'content-type': 'application/geopackage+sqlite3', 'content-length': statSync(bigFile).size });
    createReadStream(bigFile).pipe(res);
  } else res.writeHead(200, { 'content-type': 'application/geo+json' }).end(feature);
});
await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
const fileUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/one.geojson`;
const bigUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}/big.gpkg`;

// BENCH_WORKER_PROFILE=dir writes a CPU profile of the worker there (when it stops).
const workerNodeArgs = process.env.BENCH_WORKER_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_WORKER_PROFILE)}`] : [];
const stack = await startStack('runs', {}, { workerNodeArgs, scopes: ['jobs:read', 'jobs:write', 'jobs:run', 'sources:write', 'destinations:write'], databases: ['target'] });
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
/** Run Now, then polls the Run every `pollMs` until it succeeded (anything else ends the bench). */
async function runToSuccess(jobId: string, pollMs: number) {
  const run = await api('POST', `/api/v1/jobs/${jobId}/run`);
  let seen = run;
  while (seen.status !== 'succeeded') {
    if (seen.status === 'failed' || seen.status === 'cancelled') throw new Error(`Run ${run.id} ${seen.status}: ${JSON.stringify(seen.error)}`);
    await new Promise((r) => setTimeout(r, pollMs));
    seen = await api('GET', `/api/v1/jobs/${jobId}/runs/${run.id}`);
  }
  return seen;
}
/** CPU seconds a process used, with its children that have exited (ogr2ogr under the worker, backends under PostgreSQL). */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return fields.slice(11, 15).reduce((sum, f) => sum + Number(f), 0) / 100;
  } catch {
    return 0;
  }
}
/** The PostgreSQL cluster: its postmaster, plus the backends running now. */
function pgCpuSeconds(dir: string): number {
  const postmaster = Number(readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let sum = cpuSeconds(postmaster);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = (() => {
      try {
        return readFileSync(`/proc/${entry}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
      } catch {
        return null;
      }
    })();
    if (stat && Number(stat[1]) === postmaster) sum += Number(stat[11]) / 100 + Number(stat[12]) / 100;
  }
  return sum;
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;

/** Time spent inside activities, from the Run's workflow history: the step activities, and all of them. */
async function activityTime(runId: string): Promise<{ steps: number; all: number; waiting: number; wall: number }> {
  const history = await temporal.workflow.getHandle(runWorkflowId(runId)).fetchHistory();
  const started = new Map<string, number>();
  const scheduled = new Map<string, number>();
  const names = new Map<string, string>();
  let steps = 0;
  let all = 0;
  let waiting = 0;
  const events = history.events ?? [];
  for (const e of events) {
    const id = String(e.eventId);
    if (e.activityTaskScheduledEventAttributes) {
      names.set(id, e.activityTaskScheduledEventAttributes.activityType?.name ?? '');
      scheduled.set(id, ms(e.eventTime));
    }
    if (e.activityTaskStartedEventAttributes) {
      const of = String(e.activityTaskStartedEventAttributes.scheduledEventId);
      started.set(of, ms(e.eventTime));
      waiting += ms(e.eventTime) - scheduled.get(of)!;
    }
    const done = e.activityTaskCompletedEventAttributes;
    if (done) {
      const took = ms(e.eventTime) - started.get(String(done.scheduledEventId))!;
      all += took;
      if (/Step$/.test(names.get(String(done.scheduledEventId)) ?? '')) steps += took;
    }
  }
  return { steps, all, waiting, wall: ms(events[events.length - 1]?.eventTime) - ms(events[0]?.eventTime) };
}

const pgConnection = `PG:host=${targetUrl.hostname} port=${targetUrl.port} dbname=target user=${decodeURIComponent(targetUrl.username)} password=${decodeURIComponent(targetUrl.password)}`;
// The file server lives in this process: the script runs asynchronously, never blocking it.
const sh = (command: string) => promisify(execFile)('bash', ['-c', command]);
const script = (table: string, file: string, url = fileUrl) =>
  `curl -sf -o ${file} '${url}' && ogr2ogr -f PostgreSQL '${pgConnection}' ${file} -nln ${table} -overwrite -lco GEOMETRY_NAME=geom && psql '${targetUrl.toString()}' -qAtc 'SELECT count(*) FROM ${table}' >/dev/null`;

try {
  const work = path.join(stack.dir, 'files');
  mkdirSync(work, { recursive: true });
  const source = await api('POST', '/api/v1/sources', { name: 'one feature', type: 'url', configuration: { url: fileUrl } });
  const bigSource = await api('POST', '/api/v1/sources', { name: 'many points', type: 'url', configuration: { url: bigUrl } });
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
  const stepTimes = new Map<string, number[]>();
  for (let round = -3; round < ROUNDS; round++) {
    const t0 = performance.now();
    // Polling every 20 ms: finer would load the API (and the two cores) it measures.
    const seen = await runToSuccess(job.id, 20);
    const total = performance.now() - t0;
    if (round < 0) continue; // warm-up
    totals.push(total);
    for (const step of seen.steps) stepTimes.set(step.name, [...(stepTimes.get(step.name) ?? []), step.duration_ms]);
    inside.push(await activityTime(seen.id));
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
  const cpu = () => ({ api: cpuSeconds(stack.apiPid), worker: cpuSeconds(stack.workerPid!), temporal: cpuSeconds(stack.temporalPid), postgres: pgCpuSeconds(stack.pgDir) });
  const cpuBefore = cpu();
  const t0 = performance.now();
  const runs: { job: string; id: string }[] = [];
  for (let k = 0; k < RUNS_PER_JOB; k++) for (const j of jobs) runs.push({ job: j.id, id: (await api('POST', `/api/v1/jobs/${j.id}/run`)).id });
  // A Job's Runs run in order, so its last Run finishing means all of them have: one list call
  // four times a second watches them all without loading the API being measured.
  const last = new Map(runs.map((r) => [r.job, r.id]));
  for (;;) {
    await new Promise((r) => setTimeout(r, 250));
    const items = (await api('GET', `/api/v1/jobs?limit=200`)).items as { id: string; last_run: { id: string; status: string } | null }[];
    const mine = items.filter((j) => last.has(j.id));
    const broken = mine.find((j) => j.last_run && ['failed', 'cancelled'].includes(j.last_run.status));
    if (broken) throw new Error(`Job ${broken.id}: Run ${broken.last_run!.id} ${broken.last_run!.status}`);
    if (mine.every((j) => j.last_run?.id === last.get(j.id) && j.last_run?.status === 'succeeded')) break;
  }
  for (const j of jobs) {
    const failed = (await api('GET', `/api/v1/jobs/${j.id}/runs?status=failed`)).items;
    if (failed.length) throw new Error(`Job ${j.id}: ${failed.length} failed Runs`);
  }
  const serviceSeconds = (performance.now() - t0) / 1000;
  // Where a Run's time went under this load, from the histories of a sample of them.
  const sample = await Promise.all(runs.filter((_, i) => i % 10 === 5).map((r) => activityTime(r.id)));
  const loaded = (key: 'wall' | 'all' | 'waiting') => median(sample.map((x) => x[key]));
  const cpuAfter = cpu();
  const cpuUsed = Object.entries(cpuAfter).map(([name, after]) => `${name} ${(after - cpuBefore[name as keyof typeof cpuBefore]).toFixed(1)} s`).join(', ');
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

  // ---- 3. Volume ------------------------------------------------------------------------------
  const volume: string[] = [];
  if (bigFile) {
    const big = await api('POST', '/api/v1/jobs', { name: 'bench_big', source_id: bigSource.id, destination_id: destination.id, destination_target: { table: 'bench_big', write_mode: 'replace' } });
    const service: number[] = [];
    let steps = '';
    for (let round = 0; round < BIG_ROUNDS; round++) {
      const t0 = performance.now();
      const seen = await runToSuccess(big.id, 100);
      service.push(performance.now() - t0);
      steps = seen.steps.map((st: { name: string; duration_ms: number }) => `${st.name} ${(st.duration_ms / 1000).toFixed(1)} s`).join(', ');
    }
    const scripted: number[] = [];
    for (let round = 0; round < BIG_ROUNDS; round++) {
      const t0 = performance.now();
      await sh(script('base_big', path.join(work, 'big.gpkg'), bigUrl));
      scripted.push(performance.now() - t0);
    }
    const rows = execFileSync('psql', [targetUrl.toString(), '-qAtc', 'SELECT count(*) FROM bench_big']).toString().trim();
    if (Number(rows) !== BIG_POINTS) throw new Error(`bench_big holds ${rows} rows, expected ${BIG_POINTS}`);
    const best = (xs: number[]) => Math.min(...xs) / 1000;
    volume.push(
      `Volume, ${BIG_POINTS} points (GeoPackage, ${(statSync(bigFile).size / 1e6).toFixed(0)} MB) url → PostGIS, best of ${BIG_ROUNDS}:`,
      `  service ${best(service).toFixed(1)} s (${steps})   script ${best(scripted).toFixed(1)} s   ratio ${(best(service) / best(scripted)).toFixed(2)}`,
    );
  }

  const n = runs.length;
  const lines = [
    `Latency, one-feature Job, median of ${ROUNDS} (Run Now → succeeded seen by the client):`,
    `  service ${total.toFixed(0)} ms   script (curl + ogr2ogr + psql) ${median(baseline).toFixed(0)} ms   ratio ${(total / median(baseline)).toFixed(2)}`,
    `  inside the step activities ${steps.toFixed(0)} ms (${[...stepTimes].map(([name, xs]) => `${name} ${median(xs)} ms`).join(', ')}),`,
    `  inside all activities (with recording) ${all.toFixed(0)} ms;`,
    `  outside the activities ${(total - all).toFixed(0)} ms = ${((100 * (total - all)) / total).toFixed(0)}% (queueing, workflow tasks, polling the API)`,
    `Throughput, ${n} Runs across ${JOBS} Jobs:`,
    `  service ${(n / serviceSeconds).toFixed(2)} Runs/s (${serviceSeconds.toFixed(1)} s)   script ${(n / scriptSeconds).toFixed(2)} Runs/s (${scriptSeconds.toFixed(1)} s)   ratio ${(serviceSeconds / scriptSeconds).toFixed(2)}`,
    `  a Run's workflow under this load (median of ${sample.length}): ${loaded('wall').toFixed(0)} ms from start to end, ${loaded('all').toFixed(0)} ms in activities, ${loaded('waiting').toFixed(0)} ms with activities waiting for a worker slot`,
    `  CPU used by the service meanwhile: ${cpuUsed} (2 cores: ${(2 * serviceSeconds).toFixed(0)} CPU seconds available)`,
    ...volume,
  ];
  console.log(`\n${lines.join('\n')}`);
  writeFileSync(path.join(stack.dir, 'result.txt'), `${lines.join('\n')}\n`);
} finally {
  await connection.close();
  files.close();
  await stack.stop();
}
