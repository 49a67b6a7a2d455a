import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { availableParallelism, cpus, loadavg } from 'node:os';
import { createRequire } from 'node:module';
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort, waitForPort } from '../devservers/ports.js';
import { startStack } from '../scripts/stack.js';

/**
 * `npm run bench:api`: requests per second and p99 latency of this service's authenticated
 * `GET /api/v1/recipes/{id}` (a PAT) and public `GET /api/v1/system`, against two baselines
 * started in the same run on the same machine: fastify hello world, and fastify + `pg` doing the
 * same two queries as the authenticated path (bench/api/). 10 connections, autocannon.
 * Goals: authenticated ≥ 1.0 × the fastify + pg baseline with p99 ≤ 10 ms; public ≥ 0.5 × hello.
 *
 * The API runs as `npm start` runs it (SVC_LOG_LEVEL=info unless set, a worker beside it polling
 * Temporal), its log written to a file.
 * BENCH_PROFILE=1 writes a CPU profile of the API process (node --cpu-prof) to .data/bench/api/.
 */
const require = createRequire(import.meta.url);
const autocannon = require('autocannon') as (opts: Record<string, unknown>) => Promise<AutocannonResult>;
interface AutocannonResult {
  requests: { average: number; total: number };
  /** Added here: CPU time of the server process per request, in µs (from /proc; robust to a busy machine). */
  cpuPerRequest?: number;
  latency: { p50: number; p99: number; average: number };
  non2xx: number;
  errors: number;
}

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const CONNECTIONS = 10;
const profile = process.env.BENCH_PROFILE === '1';

const dataDir = path.resolve(process.env.SVC_DATA_DIR ?? '.data');
const out = path.join(dataDir, 'bench', 'api');
mkdirSync(out, { recursive: true });
const stack = await startStack(
  'api',
  { SVC_LOG_LEVEL: process.env.SVC_LOG_LEVEL ?? 'info' },
  {
    apiLog: path.join(out, 'api.log'),
    apiNodeArgs: profile ? ['--cpu-prof', `--cpu-prof-dir=${out}`] : [],
  },
);
const children: ChildProcess[] = [];

async function startBaseline(script: string, env: Record<string, string> = {}): Promise<{ url: string; pid: number }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', script], { env: { ...process.env, ...env, PORT: String(port) }, stdio: 'inherit' });
  children.push(child);
  await waitForPort(port);
  pin(child.pid!, 1);
  return { url: `http://127.0.0.1:${port}`, pid: child.pid! };
}

/**
 * Load generator on CPU 0, servers on CPU 1 (PostgreSQL where the scheduler puts it): on a
 * two-core machine, a server that shares a core with autocannon measures the scheduler more than
 * itself, and hello world swung between 35,000 and 75,000 req/s from run to run.
 */
function pin(pid: number, cpu: number): void {
  // BENCH_PIN=0 leaves every process where the scheduler puts it (as a user's own load test would).
  if (availableParallelism() < 2 || process.env.BENCH_PIN === '0') return;
  spawnSync('taskset', ['-a', '-cp', String(cpu), String(pid)], { stdio: 'ignore' });
}

/** User + system CPU time of a process so far, in µs (clock ticks of 10 ms). */
function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

async function json(res: Response) {
  if (!res.ok) throw new Error(`${res.url}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
}

pin(process.pid, 0);
pin(stack.apiPid, 1);
try {
  // A recipe and a PAT that may read it, made through the API as a user would.
  const login = await fetch(`${stack.base}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(stack.admin),
  });
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const { token } = (await json(
    await fetch(`${stack.base}/api/v1/account/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({ name: 'bench-api', scopes: ['recipes:read', 'recipes:write'] }),
    }),
  )) as { token: string };
  const auth = { authorization: `Bearer ${token}` };
  const { id } = (await json(
    await fetch(`${stack.base}/api/v1/recipes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth },
      body: JSON.stringify({
        name: 'Tidy parcels',
        operations: [
          { type: 'rename_column', from: 'PARCEL_ID', to: 'parcel_id' },
          { type: 'buffer', distance: 5, units: 'meters' },
        ],
      }),
    }),
  )) as { id: string };

  const hello = await startBaseline('bench/api/hello.ts');
  const withPg = await startBaseline('bench/api/pg-baseline.ts', { DATABASE_URL: stack.databaseUrl });

  const targets = [
    { key: 'hello', label: 'fastify hello world', url: `${hello.url}/`, headers: {}, pid: hello.pid },
    { key: 'system', label: 'GET /api/v1/system (public)', url: `${stack.base}/api/v1/system`, headers: {}, pid: stack.apiPid },
    { key: 'pg', label: 'fastify + pg, same two queries', url: `${withPg.url}/recipes/${id}`, headers: auth, pid: withPg.pid },
    { key: 'recipe', label: 'GET /api/v1/recipes/{id} (PAT)', url: `${stack.base}/api/v1/recipes/${id}`, headers: auth, pid: stack.apiPid },
  ] as const;
  for (const t of targets) {
    const check = await fetch(t.url, { headers: t.headers });
    if (check.status !== 200) throw new Error(`${t.label}: ${check.status} ${await check.text()}`);
  }

  const results = new Map<string, AutocannonResult[]>();
  // BENCH_TARGETS=recipe (for a profile of one route); the summary needs all four.
  const only = process.env.BENCH_TARGETS?.split(',');
  const load: number[] = [loadavg()[0]!];
  for (let round = 0; round < ROUNDS; round++) {
    // Each route right beside its baseline, and every other round in reverse order (ABBA), so
    // that load from the rest of the machine, rising or falling, hits route and baseline alike.
    const chosen = targets.filter((x) => !only || only.includes(x.key));
    for (const t of round % 2 === 0 ? chosen : [...chosen].reverse()) {
      await autocannon({ url: t.url, headers: t.headers, connections: CONNECTIONS, duration: 2 }); // warm-up
      const cpuBefore = cpuMicros(t.pid);
      const r = await autocannon({ url: t.url, headers: t.headers, connections: CONNECTIONS, duration: DURATION });
      r.cpuPerRequest = (cpuMicros(t.pid) - cpuBefore) / r.requests.total;
      if (r.non2xx || r.errors) throw new Error(`${t.label}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
      results.set(t.key, [...(results.get(t.key) ?? []), r]);
      console.log(
        `round ${round + 1} ${t.label.padEnd(34)} ${Math.round(r.requests.average).toString().padStart(6)} req/s  p99 ${r.latency.p99} ms  server CPU ${r.cpuPerRequest.toFixed(0)} µs/request  load ${loadavg()[0]!.toFixed(1)}`,
      );
      load.push(loadavg()[0]!);
    }
  }

  if (only) throw new Error('BENCH_TARGETS set: no summary');
  // Best round of each (least disturbed by the rest of the machine).
  const best = (key: string) => results.get(key)!.reduce((a, b) => (b.requests.average > a.requests.average ? b : a));
  const row = (key: string, label: string, baseline?: string) => {
    const r = best(key);
    const ratio = baseline ? (r.requests.average / best(baseline).requests.average).toFixed(2) : '';
    const cpu = Math.min(...results.get(key)!.map((x) => x.cpuPerRequest!));
    return `| ${label} | ${Math.round(r.requests.average).toLocaleString('en')} | ${r.latency.p99} ms | ${ratio} | ${cpu.toFixed(0)} µs |`;
  };
  console.log(
    `\n${CONNECTIONS} connections, ${DURATION} s per run, best of ${ROUNDS} rounds, log level ${process.env.SVC_LOG_LEVEL ?? 'info'} (npm start's default), ` +
      `1-minute load average ${Math.min(...load).toFixed(1)}–${Math.max(...load).toFixed(1)} on ${cpus().length} cores, ` +
      `${process.env.BENCH_PIN === '0' ? 'unpinned (BENCH_PIN=0)' : 'load generator pinned to CPU 0 and servers to CPU 1'}:\n`,
  );
  console.log('| route | req/s | p99 | ratio to its baseline | server CPU per request (least) |\n|---|---|---|---|---|');
  console.log(row('hello', 'fastify hello world (baseline)'));
  console.log(row('system', '`GET /api/v1/system`', 'hello'));
  console.log(row('pg', 'fastify + `pg`, two queries (baseline)'));
  console.log(row('recipe', '`GET /api/v1/recipes/{id}` with a PAT', 'pg'));
  const authRatio = best('recipe').requests.average / best('pg').requests.average;
  const publicRatio = best('system').requests.average / best('hello').requests.average;
  console.log(
    `\ngoals: authenticated ≥ 1.0× (${authRatio.toFixed(2)}) with p99 ≤ 10 ms (${best('recipe').latency.p99} ms): ${authRatio >= 1 && best('recipe').latency.p99 <= 10 ? 'met' : 'NOT met'}`,
  );
  console.log(`       public ≥ 0.5× hello world (${publicRatio.toFixed(2)}): ${publicRatio >= 0.5 ? 'met' : 'NOT met'}`);
} finally {
  for (const c of children) c.kill('SIGTERM');
  if (profile) {
    // SIGINT: the API shuts down cleanly, and node writes its CPU profile on the way out.
    process.kill(stack.apiPid, 'SIGINT');
    await stack.apiExited;
    console.log(`CPU profile of the API: ${out}/*.cpuprofile`);
  }
  await stack.stop();
}
