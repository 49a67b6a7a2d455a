import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/**
 * Starts the local infrastructure `npm start` and `npm test` need when no external one is
 * configured: a PostgreSQL cluster under the data folder and a Temporal dev server.
 */
const PG_BIN = '/usr/lib/postgresql/15/bin';
const isRoot = process.getuid?.() === 0;

function run(cmd: string, args: string[], opts: { asPostgres?: boolean } = {}) {
  const [c, a] = opts.asPostgres && isRoot ? ['runuser', ['-u', 'postgres', '--', cmd, ...args]] : [cmd, args];
  const r = spawnSync(c, a, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
  return r.stdout;
}

export async function waitForPort(port: number, host = '127.0.0.1', timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, host, () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`nothing listens on ${host}:${port} after ${timeoutMs} ms`);
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export interface LocalPostgres {
  /** Where the cluster lives (the wanted folder, or its /var/tmp stand-in). */
  dir: string;
  url: (database: string) => string;
  stop(): void;
}

/**
 * A cluster in `dir`, listening on 127.0.0.1:`port`, trust auth for local connections only.
 * PostgreSQL refuses to run as root, so as root the cluster belongs to the postgres user.
 */
/**
 * As root the cluster runs as the postgres user, who must be able to reach the folder. When a
 * parent folder is private (a checkout under /root), the cluster goes to /var/tmp instead, under
 * a name derived from the wanted folder, and a line says so.
 */
function reachableByPostgres(dir: string): string {
  if (!isRoot) return dir;
  let probe = path.dirname(dir);
  while (!existsSync(probe)) probe = path.dirname(probe);
  const ok = spawnSync('runuser', ['-u', 'postgres', '--', 'test', '-x', probe]).status === 0;
  if (ok) return dir;
  const fallback = path.join('/var/tmp', `geoflow-pg-${createHash('sha256').update(dir).digest('hex').slice(0, 12)}`);
  console.log(`[services] ${probe} is not reachable by the postgres user; the cluster lives in ${fallback}`);
  return fallback;
}

export async function startPostgres(dir: string, port: number, databases: string[], options: { fresh?: boolean } = {}): Promise<LocalPostgres> {
  const abs = reachableByPostgres(path.resolve(dir));
  if (options.fresh) rmSync(abs, { recursive: true, force: true });
  if (!existsSync(path.join(abs, 'PG_VERSION'))) {
    mkdirSync(abs, { recursive: true });
    if (isRoot) run('chown', ['postgres:postgres', abs]);
    chmodSync(abs, 0o700);
    run(`${PG_BIN}/initdb`, ['-D', abs, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8'], { asPostgres: true });
  }
  const socketDir = path.join(abs, 'socket');
  if (!existsSync(socketDir)) {
    mkdirSync(socketDir);
    if (isRoot) run('chown', ['postgres:postgres', socketDir]);
  }
  const logFile = path.join(abs, 'server.log');
  const status = spawnSync(isRoot ? 'runuser' : `${PG_BIN}/pg_ctl`, isRoot ? ['-u', 'postgres', '--', `${PG_BIN}/pg_ctl`, 'status', '-D', abs] : ['status', '-D', abs]);
  if (status.status !== 0) {
    run(`${PG_BIN}/pg_ctl`, ['start', '-w', '-D', abs, '-l', logFile, '-o', `-p ${port} -k ${socketDir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`], { asPostgres: true });
  }
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  for (const db of databases) {
    const exists = run('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-tAc', `SELECT 1 FROM pg_database WHERE datname='${db}'`]).trim();
    if (exists !== '1') run('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-c', `CREATE DATABASE "${db}"`]);
    run('psql', ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', '-d', db, '-c', 'CREATE EXTENSION IF NOT EXISTS postgis']);
  }
  return {
    dir: abs,
    url,
    stop() {
      spawnSync(isRoot ? 'runuser' : `${PG_BIN}/pg_ctl`, isRoot ? ['-u', 'postgres', '--', `${PG_BIN}/pg_ctl`, 'stop', '-m', 'fast', '-D', abs] : ['stop', '-m', 'fast', '-D', abs]);
    },
  };
}

export interface LocalTemporal {
  address: string;
  process: ChildProcess;
  stop(): void;
}

/** The Temporal dev server from the CLI that scripts/ensure.sh installed. */
export async function startTemporal(dataDir: string, port: number, options: { dbFile?: string; uiPort?: number } = {}): Promise<LocalTemporal> {
  const bin = path.resolve(dataDir, 'tools/venv/bin/temporal');
  if (!existsSync(bin)) throw new Error(`Temporal CLI missing at ${bin}; run scripts/ensure.sh`);
  const args = ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(port), '--log-level', 'error'];
  if (options.dbFile) args.push('--db-filename', path.resolve(options.dbFile));
  if (options.uiPort) args.push('--ui-port', String(options.uiPort));
  else args.push('--headless');
  const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'inherit'], detached: false });
  await waitForPort(port);
  return {
    address: `127.0.0.1:${port}`,
    process: child,
    stop() {
      child.kill('SIGTERM');
    },
  };
}

export function resetDir(dir: string) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
}

export function writeEnvFile(file: string, env: Record<string, string>) {
  writeFileSync(file, Object.entries(env).map(([k, v]) => `${k}=${v}`).join('\n') + '\n');
}
