import { Client, Connection } from '@temporalio/client';
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEnvFile } from '../../platform/env-file.js';
import { freePort, portAnswers } from '../../devservers/ports.js';
import { manyPointsGpkg } from '../support/fixtures.js';
import { temporalAddress } from '../support/worker.js';
import { until } from '../support/until.js';

/**
 * `npm start` as a user runs it (scripts/start.ts, real processes): its own PostgreSQL cluster
 * in a fresh data folder, the API and a worker; Temporal is the suite's dev server. What the
 * README promises is done beside it, and its children are killed to see them come back.
 */
const PG_BIN = '/usr/lib/postgresql/15/bin';
const skip =
  (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal') ||
  (!existsSync(`${PG_BIN}/initdb`) && `PostgreSQL 15 is not installed at ${PG_BIN}: run with \`npm test\`, whose scripts/ensure.sh installs it`);

const root = process.cwd();
const run = promisify(execFile);
const id = randomBytes(4).toString('hex');
const dataDir = path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'test', `start-${id}`);
const taskQueue = `start-e2e-${id}`;
/** What a user's shell has: no SVC_DATABASE_URL (the bug was that commands needed one). */
const userEnv = () => {
  const env: NodeJS.ProcessEnv = { ...process.env, SVC_DATA_DIR: dataDir, SVC_LOG_LEVEL: 'warn' };
  for (const k of ['SVC_DATABASE_URL', 'SVC_ADMIN_EMAIL', 'SVC_ADMIN_PASSWORD', 'SVC_TEST_DATABASE_URL']) delete env[k];
  return env;
};

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe.skipIf(skip)('npm start (scripts/start.ts)', () => {
  let start: ChildProcess;
  let output = '';
  let port: number;
  let pgPort: number;
  let base: string;
  let temporal: Client;
  let connection: Connection;
  let token: string;
  let workspaceId: string;

  /** The pid start.ts last reported for a child. */
  const pidOf = (name: string) => Number([...output.matchAll(new RegExp(`\\[start\\] ${name} running \\(pid (\\d+)\\)`, 'g'))].at(-1)?.[1]);
  const api = (url: string, init: RequestInit = {}) =>
    fetch(`${base}${url}`, {
      ...init,
      headers: {
        authorization: `Bearer ${token}`,
        ...(init.body && typeof init.body === 'string' ? { 'content-type': 'application/json' } : {}),
        ...init.headers,
      },
    });

  beforeAll(async () => {
    mkdirSync(dataDir, { recursive: true });
    [port, pgPort] = [await freePort(), await freePort()];
    base = `http://127.0.0.1:${port}`;
    start = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
      cwd: root,
      env: { ...userEnv(), SVC_PORT: String(port), SVC_PG_PORT: String(pgPort), SVC_TEMPORAL_ADDRESS: temporalAddress, SVC_TASK_QUEUE: taskQueue },
      stdio: ['ignore', 'pipe', 'pipe'],
      // its own process group, as in a terminal: Ctrl-C signals the whole group
      detached: true,
    });
    start.stdout!.on('data', (d) => (output += d));
    start.stderr!.on('data', (d) => (output += d));
    await until(
      '[start] ready',
      () => {
        if (start.exitCode !== null) throw new Error(`start.ts exited ${start.exitCode}:\n${output}`);
        return output.includes('[start] ready');
      },
      180_000,
    );
    connection = await Connection.connect({ address: temporalAddress! });
    temporal = new Client({ connection });
  }, 200_000);

  afterAll(async () => {
    await connection?.close();
    if (start && start.exitCode === null) {
      start.kill('SIGTERM');
      await until('start.ts to stop', () => start.exitCode !== null, 60_000).catch(() => process.kill(-start.pid!, 'SIGKILL'));
    }
    // Whatever a failed test left behind: the cluster first, then the folder.
    const pgDir = path.join(dataDir, 'pg');
    if (existsSync(path.join(pgDir, 'postmaster.pid'))) {
      const args = [`${PG_BIN}/pg_ctl`, 'stop', '-m', 'immediate', '-D', pgDir];
      if (process.getuid?.() === 0) spawnSync('runuser', ['-u', 'postgres', '--', ...args]);
      else spawnSync(args[0]!, args.slice(1));
    }
    rmSync(dataDir, { recursive: true, force: true });
  }, 90_000);

  it('runs its cluster durable and closed to other local users, and commands run beside it find it by themselves', async () => {
    const localDatabase = path.join(dataDir, 'local-database.env');
    for (const secret of [localDatabase, path.join(dataDir, 'pg.password'), path.join(dataDir, 'initial-admin.env')]) {
      expect(statSync(secret).mode & 0o777, secret).toBe(0o600);
    }
    const { SVC_DATABASE_URL: url } = readEnvFile(localDatabase);
    expect(url).toMatch(new RegExp(`^postgres://postgres:[0-9a-f]{48}@127\\.0\\.0\\.1:${pgPort}/geoflow$`));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    expect((await client.query('SHOW fsync')).rows).toEqual([{ fsync: 'on' }]);
    await client.end();
    const intruder = new pg.Client({ host: '127.0.0.1', port: pgPort, user: 'postgres', database: 'geoflow', password: 'guess' });
    await expect(intruder.connect()).rejects.toMatchObject({ code: '28P01' });

    // users:add and projections:rebuild, with nothing but the data folder (the default one, for a user)
    const added = await run(process.execPath, ['--import', 'tsx', 'scripts/add-user.ts', '--email', 'carol@example.com'], {
      cwd: root,
      env: { ...userEnv(), SVC_NEW_USER_PASSWORD: 'carol has a long password' },
    });
    expect(added.stdout).toMatch(/^created carol@example\.com \(usr_/m);
    const login = await fetch(`${base}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'carol@example.com', password: 'carol has a long password' }),
    });
    expect(login.status).toBe(200);
    const rebuilt = await run(process.execPath, ['--import', 'tsx', 'scripts/rebuild-projections.ts'], { cwd: root, env: userEnv() });
    expect(rebuilt.stdout).toContain('read models rebuilt from the event store');
    // nothing on the way printed the password
    const password = readFileSync(path.join(dataDir, 'pg.password'), 'utf8').trim();
    expect(output + added.stdout + added.stderr + rebuilt.stdout + rebuilt.stderr).not.toContain(password);
  }, 120_000);

  it("runs the README's curl walk-through as written", async () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## Walk-through with curl'));
    const block = /```bash\n([\s\S]*?)```/.exec(section)![1]!;
    // Each line that prints a status code and promises one (`# 404 …`) must print exactly that.
    let checks = 0;
    const script = block
      .split('\n')
      .map((line, i) => {
        if (/^B=/.test(line)) return `B=${base}`;
        const promise = /^(.*%\{http_code\}.*?)\s+#\s*(\d{3})\b/.exec(line);
        if (!promise) return line;
        checks++;
        return `got=$(${promise[1]} | tail -n 1); [ "$got" = ${promise[2]} ] || { echo "README walk-through line ${i + 1}: expected ${promise[2]}, got $got" >&2; exit 1; }`;
      })
      .join('\n');
    expect(checks).toBeGreaterThanOrEqual(5);
    // A user's checkout: .data beside them, npm scripts of this repository.
    const cwd = path.join(dataDir, 'walkthrough');
    mkdirSync(cwd);
    symlinkSync(dataDir, path.join(cwd, '.data'));
    writeFileSync(path.join(cwd, 'walkthrough.sh'), `set -eu\nnpm() { command npm --prefix ${JSON.stringify(root)} "$@"; }\n${script}\n`);
    const result = spawnSync('bash', ['walkthrough.sh'], { cwd, env: userEnv(), encoding: 'utf8', timeout: 120_000 });
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/rcp_\w+\n/);
  }, 150_000);

  it('restarts a worker killed during a convert; the convert still answers 200', async () => {
    const admin = readEnvFile(path.join(dataDir, 'initial-admin.env'));
    const login = await fetch(`${base}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: admin.SVC_ADMIN_EMAIL, password: admin.SVC_ADMIN_PASSWORD }),
    });
    expect(login.status).toBe(200);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const created = await fetch(`${base}/api/v1/account/tokens`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: JSON.stringify({ name: 'e2e', scopes: ['workspaces:read', 'workspaces:write', 'workspaces:run'] }),
    });
    token = ((await created.json()) as { token: string }).token;

    // Enough points that GDAL works for a few seconds: time to kill the worker mid-conversion.
    const points = manyPointsGpkg(dataDir, 200_000);
    const form = new FormData();
    form.append('file', new Blob([readFileSync(points)]), 'points.gpkg');
    const upload = await api('/api/v1/workspaces', { method: 'POST', body: form });
    expect(upload.status).toBe(201);
    const ws = (await upload.json()) as { id: string };
    workspaceId = ws.id;

    const worker = pidOf('worker');
    expect(alive(worker)).toBe(true);
    const convert = api(`/api/v1/workspaces/${ws.id}/convert`, { method: 'POST', body: JSON.stringify({ output_format: 'GeoJSON' }) });
    const workflowId = await until(
      'the convert workflow',
      async () => {
        for await (const w of temporal.workflow.list({ query: `TaskQueue = '${taskQueue}' AND WorkflowType = 'convertWorkspaceWorkflow'` }))
          return w.workflowId;
        return undefined;
      },
      30_000,
    );
    const handle = temporal.workflow.getHandle(workflowId);
    await until(
      'the convertWorkspace activity to be running',
      async () => {
        const { raw } = await handle.describe();
        return (raw.pendingActivities ?? []).some((a) => a.activityType?.name === 'convertWorkspace' && String(a.state) === '2' /* STARTED */) || undefined;
      },
      30_000,
    );
    process.kill(worker, 'SIGKILL');

    const answer = await convert;
    const body = await answer.text();
    expect(answer.status, body).toBe(200);
    expect(JSON.parse(body)).toMatchObject({ status: 'completed' });
    expect(output).toMatch(/\[start\] worker was killed by SIGKILL after [\d.]+ s; restarting it in [\d.]+ s/);
    expect(pidOf('worker')).not.toBe(worker);
    expect(alive(pidOf('worker'))).toBe(true);
    // The conversion the killed worker had started was done again by its successor.
    const history = await handle.fetchHistory();
    const attempts = (history.events ?? []).flatMap((e) => (e.activityTaskStartedEventAttributes ? [e.activityTaskStartedEventAttributes.attempt] : []));
    expect(Math.max(...attempts.map(Number))).toBeGreaterThanOrEqual(2);

    const download = await api(`/api/v1/workspaces/${ws.id}/download`);
    expect(download.status).toBe(200);
    const geojson = JSON.parse(await download.text()) as { features: unknown[] };
    expect(geojson.features).toHaveLength(200_000);
  }, 240_000);

  it('restarts a killed API, which serves again', async () => {
    const apiPid = pidOf('api');
    process.kill(apiPid, 'SIGKILL');
    await until('a new API', () => pidOf('api') !== apiPid || undefined, 30_000);
    const health = await until(
      'the API to answer',
      async () => ((await fetch(`${base}/healthz`).catch(() => undefined))?.status === 200 ? true : undefined),
      120_000,
    );
    expect(health).toBe(true);
    const ws = await api(`/api/v1/workspaces/${workspaceId}`);
    expect(ws.status).toBe(200);
    expect(await ws.json()).toMatchObject({ status: 'completed' });
    expect(output).toMatch(/\[start\] api was killed by SIGKILL after [\d.]+ s; restarting it in/);
    expect(start.exitCode).toBeNull();
  }, 150_000);

  it('stops everything on Ctrl-C, quietly: the API, the worker and the cluster', async () => {
    const children = [pidOf('api'), pidOf('worker')];
    const before = output.length;
    process.kill(-start.pid!, 'SIGINT'); // what a terminal does on Ctrl-C: the whole group
    const code = await until('start.ts to exit', () => start.exitCode ?? undefined, 60_000);
    expect(code).toBe(0);
    expect(children.map(alive)).toEqual([false, false]);
    expect(await portAnswers(port)).toBe(false);
    expect(await portAnswers(pgPort)).toBe(false);
    const after = output.slice(before);
    expect(after).not.toContain('restarting');
    // each child stops once, though it gets SIGINT from the terminal and SIGTERM from start.ts
    expect(after).not.toMatch(/Error|exited with code|killed by/);
  }, 90_000);
});
