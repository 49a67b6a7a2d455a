import { spawn, type ChildProcess } from 'node:child_process';
import { openSync } from 'node:fs';
import path from 'node:path';
import { resetDir, startPostgres, startTemporal } from './local-services.js';
import { freePort, waitForPort } from '../devservers/ports.js';

/**
 * The whole service started for a benchmark run (or a standalone schemathesis run), in `.data/bench/<name>`: PostgreSQL, Temporal,
 * the API and a worker as separate processes (as `npm start` runs them), plus a logged-in token.
 */
export async function startStack(
  name: string,
  env: Record<string, string> = {},
  options: { apiNodeArgs?: string[]; workerNodeArgs?: string[]; apiLog?: string; noWorker?: boolean; scopes?: string[]; databases?: string[] } = {},
) {
  const dataDir = path.resolve(process.env.SVC_DATA_DIR ?? '.data');
  const dir = path.join(dataDir, 'bench', name);
  resetDir(path.join(dir, 'server'));
  const pg = await startPostgres(path.join(dir, 'pg'), await freePort(), ['bench', ...(options.databases ?? [])], { fresh: true, durable: false });
  const temporal = await startTemporal(dataDir, await freePort());
  const port = await freePort();
  const serverEnv = {
    ...process.env,
    SVC_DATA_DIR: path.join(dir, 'server'),
    SVC_DATABASE_URL: pg.url('bench'),
    SVC_TEMPORAL_ADDRESS: temporal.address,
    SVC_PORT: String(port),
    SVC_ADMIN_EMAIL: 'bench@example.com',
    SVC_ADMIN_PASSWORD: 'benchmark password',
    SVC_TASK_QUEUE: `bench-${name}`,
    SVC_LOG_LEVEL: 'warn',
    UV_THREADPOOL_SIZE: '8',
    // options.databases are delivery targets in the service's own cluster, which the outbound
    // policy refuses by default: the bench allows that port (as scripts/test.ts does for tests).
    ...(options.databases?.length ? { SVC_OUTBOUND_ALLOW: [process.env.SVC_OUTBOUND_ALLOW, new URL(pg.url('bench')).host].filter(Boolean).join(',') } : {}),
    ...env,
  };
  // The API's log lines go to a file when asked (a bench at info level would flood the terminal).
  const apiStdio = options.apiLog ? ['ignore', openSync(options.apiLog, 'w'), 'inherit'] : 'inherit';
  const api = spawn(process.execPath, ['--expose-gc', ...(options.apiNodeArgs ?? []), '--import', 'tsx', 'api/server.ts'], {
    env: serverEnv,
    stdio: apiStdio as never,
  });
  const children: ChildProcess[] = [api];
  const spawnWorker = () => {
    const worker = spawn(process.execPath, ['--expose-gc', ...(options.workerNodeArgs ?? []), '--import', 'tsx', 'worker/worker.ts'], {
      env: serverEnv,
      stdio: 'inherit',
    });
    children.push(worker);
    return worker;
  };
  const { waitForPollers } = await import('../devservers/temporal.js');
  const { loadConfig } = await import('../platform/config.js');
  if (!options.noWorker) spawnWorker();
  await waitForPort(port, '127.0.0.1', 120_000);
  if (!options.noWorker) {
    await waitForPollers(loadConfig(serverEnv), { timeoutMs: 60_000 });
  }
  const base = `http://127.0.0.1:${port}`;

  const login = await fetch(`${base}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: serverEnv.SVC_ADMIN_EMAIL, password: serverEnv.SVC_ADMIN_PASSWORD }),
  });
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const tokenRes = await fetch(`${base}/api/v1/account/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ name: 'bench', scopes: options.scopes ?? ['workspaces:read', 'workspaces:write', 'workspaces:run'] }),
  });
  const token = ((await tokenRes.json()) as { token: string }).token;

  return {
    base,
    token,
    dir,
    /** A request with the token: the JSON answer, or an error naming the status. */
    async call(method: string, url: string, body?: unknown): Promise<any> {
      const res = await fetch(`${base}${url}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
      return res.status === 204 ? null : res.json();
    },
    admin: { email: serverEnv.SVC_ADMIN_EMAIL, password: serverEnv.SVC_ADMIN_PASSWORD },
    databaseUrl: serverEnv.SVC_DATABASE_URL,
    /** A TCP URL of one of the cluster's databases (with its password): options.databases are created beside `bench`. */
    databaseUrlOf: (database: string) => pg.url(database),
    temporalAddress: temporal.address,
    /** Process ids for CPU accounting: the worker (when started), the Temporal server, the cluster's folder. */
    workerPid: children[1]?.pid,
    /**
     * Starts one more worker process on the same task queue (a second host's worker, here on the
     * same machine); resolves with its pid once it polls. Its CPU profile (workerNodeArgs) too.
     */
    async addWorker(): Promise<number> {
      const worker = spawnWorker();
      await waitForPollers(loadConfig(serverEnv), { count: children.length - 1, timeoutMs: 60_000 });
      return worker.pid!;
    },
    temporalPid: temporal.process.pid!,
    pgDir: pg.dir,
    apiPid: api.pid!,
    /** Resolves when the API process has exited (after stop(), or a SIGINT for its CPU profile). */
    apiExited: new Promise<void>((resolve) => api.once('exit', () => resolve())),
    async stop() {
      for (const c of children) c.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 1000));
      temporal.stop();
      pg.stop();
    },
  };
}

/** Uploads with curl so the client's own memory is not what we measure. */
export async function uploadWithCurl(base: string, token: string, file: string): Promise<{ id: string }> {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  // Not execFileSync: a bench samples the service's memory on timers while the upload runs.
  const { stdout } = await promisify(execFile)(
    'curl',
    ['-s', '-f', '-H', `Authorization: Bearer ${token}`, '-F', `file=@${file}`, `${base}/api/v1/workspaces`],
    {
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  return JSON.parse(stdout) as { id: string };
}
