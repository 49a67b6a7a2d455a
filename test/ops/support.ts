import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { until } from '../support/until.js';

export { temporalMissing } from '../support/worker.js';

/** Runs an npm script's program (`node --import tsx <script>`) with `env`; resolves with its exit code and output. */
export function runScript(script: string, args: string[], env: Record<string, string>, cwd = process.cwd()): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (c: Buffer) => (output += c.toString()));
    child.stderr.on('data', (c: Buffer) => (output += c.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** The next whole minute at least `ms` from now (a daily schedule's fire time in UTC). */
export function nextMinuteAfter(ms: number): Date {
  return new Date(Math.ceil((Date.now() + ms) / 60_000) * 60_000);
}

export interface ServiceProcesses {
  base: string;
  /** Stops both (SIGTERM: the API finishes its requests, the worker drains) and waits for them. */
  stop(): Promise<void>;
  /** What they printed last (for a failure's message). */
  output(): string;
}

/**
 * The API and a worker as processes, as `npm start` runs them, from the code in `cwd` (another
 * release's checkout, or this one). Resolves once the API answers and the worker polls.
 */
export async function startServiceProcesses(cwd: string, env: Record<string, string>): Promise<ServiceProcesses> {
  const { Connection } = await import('@temporalio/client');
  const { freePort, waitForPort } = await import('../../devservers/ports.js');
  const port = await freePort();
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-6000));
  const start = (script: string) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', script], {
      cwd,
      env: { ...process.env, UV_THREADPOOL_SIZE: '8', ...env, SVC_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    return child;
  };
  // The worker's entry point moved to worker/ after v0.1.0 (issue 36).
  const workerScript = existsSync(path.join(cwd, 'worker/worker.ts')) ? 'worker/worker.ts' : 'workflows/worker.ts';
  const children = [start(workerScript), start('api/server.ts')];
  const stop = async () => {
    await Promise.all(
      children.map(
        (c) =>
          new Promise<void>((resolve) => {
            if (c.exitCode !== null || c.signalCode !== null) return resolve();
            const force = setTimeout(() => c.kill('SIGKILL'), 30_000);
            c.once('exit', () => {
              clearTimeout(force);
              resolve();
            });
            c.kill('SIGTERM');
          }),
      ),
    );
  };
  try {
    await waitForPort(port, '127.0.0.1', 120_000);
    const connection = await Connection.connect({ address: env.SVC_TEMPORAL_ADDRESS! });
    try {
      const worker = children[0]!;
      await until(
        () => `the worker in ${cwd} to poll:\n${output}`,
        async () => {
          if (worker.exitCode !== null) throw new Error(`the worker in ${cwd} exited:\n${output}`);
          const r = await connection.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: env.SVC_TASK_QUEUE! }, taskQueueType: 2 });
          return (r.pollers ?? []).some((p) => p.identity?.startsWith(`${worker.pid}@`));
        },
        120_000,
        250,
      );
    } finally {
      await connection.close();
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { base: `http://127.0.0.1:${port}`, stop, output: () => output };
}

/** A small client of a running API with a token: JSON in, status and JSON out. */
export function apiClient(base: string, token: string) {
  return async (method: string, url: string, body?: unknown): Promise<{ status: number; body: any }> => {
    const res = await fetch(base + url, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
}

/** Logs in to a running API and makes a token with `scopes`. */
export async function tokenFor(base: string, credentials: { email: string; password: string }, scopes: string[]): Promise<string> {
  const login = await fetch(`${base}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(credentials),
  });
  if (login.status !== 200) throw new Error(`login: ${login.status} ${await login.text()}`);
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const made = await fetch(`${base}/api/v1/account/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ name: 'suite', scopes }),
  });
  if (made.status !== 201) throw new Error(`token: ${made.status} ${await made.text()}`);
  return ((await made.json()) as { token: string }).token;
}
