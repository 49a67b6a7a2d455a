import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { allScopes } from '../../domain/accounts/scopes.js';
import { loadConfig } from '../../platform/config.js';
import { freePort } from '../../devservers/ports.js';
import { createTestDatabase } from './database.js';
import { until } from './until.js';
import { waitForPollers } from '../../devservers/temporal.js';
import { temporalAddress } from './worker.js';

/** Every scope a personal access token can have. */
export const ALL_SCOPES = allScopes;

export interface ServiceProcesses {
  base: string;
  api: ChildProcess;
  worker: ChildProcess;
  env: Record<string, string>;
  /** The admin's token as an Authorization header (every scope). */
  headers: Record<string, string>;
  /** Everything both processes wrote (their logs). */
  output(): string;
  /** A call with the admin's token (all scopes), JSON in and out. */
  call(method: string, url: string, body?: unknown): Promise<{ status: number; text: string; json: () => any }>;
  /** Whether a process is still running. */
  running(child: ChildProcess): boolean;
  stop(): Promise<void>;
}

/**
 * The API and a worker as their own processes (`node --import tsx api/server.ts`, as `npm start`
 * runs them) on a fresh database, with the admin signed in and a token of every scope: for
 * suites that look at what happens to the processes themselves.
 */
export async function startServiceProcesses(extraEnv: Record<string, string> = {}): Promise<ServiceProcesses> {
  if (!temporalAddress) throw new Error('SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');
  const db = await createTestDatabase();
  const port = await freePort();
  const admin = { email: 'admin@example.com', password: `processes ${randomBytes(6).toString('hex')}` };
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    SVC_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'svc-processes-')),
    SVC_DATABASE_URL: db.url,
    SVC_TEMPORAL_ADDRESS: temporalAddress,
    SVC_TASK_QUEUE: `processes-${randomBytes(4).toString('hex')}`,
    SVC_PORT: String(port),
    SVC_LOG_LEVEL: 'info',
    SVC_ADMIN_EMAIL: admin.email,
    SVC_ADMIN_PASSWORD: admin.password,
    ...extraEnv,
  };
  let output = '';
  const start = (script: string) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', script], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    return child;
  };
  const worker = start('worker/worker.ts');
  const api = start('api/server.ts');
  const base = `http://127.0.0.1:${port}`;
  const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;
  const stop = async () => {
    for (const child of [api, worker]) if (running(child)) child.kill('SIGTERM');
    await Promise.all([api, worker].map((c) => new Promise((r) => (running(c) ? c.once('exit', r) : r(null)))));
    await db.drop();
  };
  try {
    await until(
      () => `the API to answer /healthz:\n${output.slice(-4000)}`,
      () => {
        if (!running(api)) throw new Error(`the API exited while starting:\n${output.slice(-4000)}`);
        return fetch(`${base}/healthz`).then(
          (r) => r.ok,
          () => false,
        );
      },
      90_000,
      250,
    );
    await waitForPollers(loadConfig(env), { timeoutMs: 60_000 });
    const login = await fetch(`${base}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: base },
      body: JSON.stringify(admin),
    });
    const cookie = login.headers
      .getSetCookie()
      .map((c) => c.split(';')[0])
      .join('; ');
    const created = await fetch(`${base}/api/v1/account/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie, origin: base },
      body: JSON.stringify({ name: 'processes', scopes: ALL_SCOPES }),
    });
    const headers = { authorization: `Bearer ${((await created.json()) as { token: string }).token}` };
    return {
      base,
      api,
      worker,
      env,
      headers,
      output: () => output,
      running,
      async call(method, url, body) {
        const res = await fetch(`${base}${url}`, {
          method,
          headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.text();
        return { status: res.status, text, json: () => JSON.parse(text) };
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
