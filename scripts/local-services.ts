import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { freePort, waitForPort } from '../devservers/ports.js';
import type { Wrap } from '../devservers/processes.js';

/**
 * Starts the local infrastructure `npm start` and `npm test` need when no external one is
 * configured: a PostgreSQL cluster under the data folder and a Temporal dev server.
 */
const PG_BIN = '/usr/lib/postgresql/15/bin';
const isRoot = process.getuid?.() === 0;

const here: Wrap = (command, args) => [command, args];

function run(cmd: string, args: string[], opts: { asPostgres?: boolean; wrap?: Wrap } = {}) {
  const [c, a] = opts.asPostgres && isRoot ? (opts.wrap ?? here)('runuser', ['-u', 'postgres', '--', cmd, ...args]) : (opts.wrap ?? here)(cmd, args);
  const r = spawnSync(c, a, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${r.stderr || r.stdout}`);
  return r.stdout;
}

export interface LocalPostgres {
  /** Where the cluster lives (the wanted folder, or its /var/tmp stand-in). */
  dir: string;
  /** The generated password of the `postgres` role, beside the wanted folder, mode 0600. */
  passwordFile: string;
  /** A TCP URL with the password, for the service's processes. */
  url: (database: string) => string;
  stop(): void;
}

export interface PostgresOptions {
  /** Wipe the folder first (throwaway clusters of tests and benches). */
  fresh?: boolean;
  /**
   * fsync on (the default): the cluster of `npm start` must survive a power cut. Only throwaway
   * clusters turn it off, for speed.
   */
  durable?: boolean;
  /**
   * Another host (the cluster suite's network namespaces): the postmaster runs through `wrap`,
   * listens on `listen` and takes password logins from the `clients` range as well as loopback.
   */
  wrap?: Wrap;
  listen?: string;
  clients?: string;
}

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

/**
 * Every cluster we start gets this file, new or made by an older version of these scripts
 * (those trusted any local process on TCP). The socket folder sits in the cluster folder (mode
 * 0700) and the socket itself is 0700, so only the cluster's owner (and root) reach it; they can
 * read the data files anyway, so trusting them there gives nothing away, and it lets these
 * scripts administer the cluster even if the password file was lost.
 */
const PG_HBA = `# Written by scripts/local-services.ts on every start; edits here are overwritten.
# Unix socket in <cluster>/socket: reachable by the cluster's owner only.
local   all   all                  trust
# TCP, what the service uses: the generated password (kept beside the cluster folder, mode 0600).
host    all   all   127.0.0.1/32   scram-sha-256
host    all   all   ::1/128        scram-sha-256
`;

/** PostgreSQL owns its files; as root we write them for the postgres user. */
function writeClusterFile(file: string, content: string) {
  if (existsSync(file) && readFileSync(file, 'utf8') === content) return;
  writeFileSync(file, content, { mode: 0o600 });
  if (isRoot) run('chown', ['postgres:postgres', file]);
}

/** The role's password, generated once; hex, so it needs no escaping in a URL or a shell. */
function ensurePassword(file: string): string {
  if (!existsSync(file)) {
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, `${randomBytes(24).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  }
  chmodSync(file, 0o600);
  return readFileSync(file, 'utf8').trim();
}

function pgCtl(args: string[]) {
  return spawnSync(isRoot ? 'runuser' : `${PG_BIN}/pg_ctl`, isRoot ? ['-u', 'postgres', '--', `${PG_BIN}/pg_ctl`, ...args] : args, { encoding: 'utf8' });
}

/** The port of the postmaster running on `dir`, if one is. */
function runningPort(dir: string): number | undefined {
  if (pgCtl(['status', '-D', dir]).status !== 0) return undefined;
  // postmaster.pid: pid, data folder, start time, port, …
  return Number(readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n')[3]);
}

/** An administrative session over the cluster's own unix socket. */
async function overSocket<T>(socketDir: string, port: number, database: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ host: socketDir, port, user: 'postgres', database });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * A cluster in `dir`, listening on 127.0.0.1:`port` (password, scram-sha-256) and on a unix
 * socket inside it (its owner only). A folder made by an older version of this script (trust on
 * TCP, fsync off) is upgraded in place: pg_hba.conf rewritten, the password set, a running
 * postmaster with other settings restarted. PostgreSQL refuses to run as root, so as root the
 * cluster belongs to the postgres user.
 */
export async function startPostgres(dir: string, port: number, databases: string[], options: PostgresOptions = {}): Promise<LocalPostgres> {
  const wanted = path.resolve(dir);
  const abs = reachableByPostgres(wanted);
  const durable = options.durable ?? true;
  const passwordFile = `${wanted}.password`;
  if (options.fresh) {
    rmSync(abs, { recursive: true, force: true });
    rmSync(passwordFile, { force: true });
  }
  if (!existsSync(path.join(abs, 'PG_VERSION'))) {
    mkdirSync(abs, { recursive: true });
    if (isRoot) run('chown', ['postgres:postgres', abs]);
    chmodSync(abs, 0o700);
    const initdb = ['-D', abs, '-U', 'postgres', '--auth-local=trust', '--auth-host=scram-sha-256', '--encoding=UTF8', '--locale=C.UTF-8'];
    run(`${PG_BIN}/initdb`, durable ? initdb : [...initdb, '--no-sync'], { asPostgres: true });
  }
  const socketDir = path.join(abs, 'socket');
  if (!existsSync(socketDir)) {
    mkdirSync(socketDir);
    if (isRoot) run('chown', ['postgres:postgres', socketDir]);
  }
  const clients = options.clients ? `host    all   all   ${options.clients}   scram-sha-256\n` : '';
  writeClusterFile(path.join(abs, 'pg_hba.conf'), PG_HBA + clients);
  const password = ensurePassword(passwordFile);

  const settings: Record<string, string> = {
    port: String(port),
    listen_addresses: options.listen ?? '127.0.0.1',
    unix_socket_permissions: '0700',
    fsync: durable ? 'on' : 'off',
    max_connections: '200',
  };
  const serverOptions = [`-k ${socketDir}`, ...Object.entries(settings).map(([k, v]) => `-c ${k}=${v}`)].join(' ');
  const pgCtlStart = (verb: 'start' | 'restart') =>
    run(`${PG_BIN}/pg_ctl`, [verb, '-w', '-D', abs, '-l', path.join(abs, 'server.log'), '-o', serverOptions], { asPostgres: true, wrap: options.wrap });
  const running = runningPort(abs);
  if (running === undefined) pgCtlStart('start');
  else {
    const current = await overSocket(socketDir, running, 'postgres', async (c) => {
      const rows = await c.query<{ name: string; value: string }>('SELECT name, current_setting(name) AS value FROM unnest($1::text[]) AS name', [
        Object.keys(settings),
      ]);
      return Object.fromEntries(rows.rows.map((r) => [r.name, r.value]));
    });
    // A postmaster left running by an older script (fsync off, socket open to all) or with
    // other settings is restarted with these; otherwise reloaded, to read the new pg_hba.conf.
    if (Object.entries(settings).some(([k, v]) => current[k] !== v)) pgCtlStart('restart');
    else run(`${PG_BIN}/pg_ctl`, ['reload', '-D', abs], { asPostgres: true });
  }

  await overSocket(socketDir, port, 'postgres', async (c) => {
    // Set on every start: a folder from an older script has none, and a lost file gets a new one.
    await c.query(`ALTER ROLE postgres PASSWORD ${c.escapeLiteral(password)}`);
    for (const db of databases) {
      const exists = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [db]);
      if (!exists.rowCount) await c.query(`CREATE DATABASE ${c.escapeIdentifier(db)}`);
    }
  });
  for (const db of databases) await overSocket(socketDir, port, db, (c) => c.query('CREATE EXTENSION IF NOT EXISTS postgis'));

  return {
    dir: abs,
    passwordFile,
    url: (database: string) => `postgres://postgres:${password}@${options.listen ?? '127.0.0.1'}:${port}/${database}`,
    stop() {
      pgCtl(['stop', '-m', 'fast', '-D', abs]);
    },
  };
}

export interface LocalTemporal {
  address: string;
  process: ChildProcess;
  /** Every TCP port the dev server listens on, once it answers: gRPC, HTTP API, UI, metrics and its internal services. */
  ports: number[];
  stop(): void;
}

/** The TCP ports a process listens on (Linux: its socket inodes matched against /proc/net/tcp and tcp6). */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  // The process's own tables: a process in another network namespace (the cluster suite's hosts) sees other sockets.
  for (const table of [`/proc/${pid}/net/tcp`, `/proc/${pid}/net/tcp6`]) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      // local_address is HEXIP:HEXPORT; state 0A is LISTEN; the inode is the tenth column.
      if (cols[3] === '0A' && inodes.has(cols[9]!)) ports.add(parseInt(cols[1]!.split(':')[1]!, 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** Workflow starts per second Temporal's Schedules may make in the namespace (its default: 30). */
export const SCHEDULE_STARTS_PER_SECOND = 1000;

/** Temporal's internal workers per namespace, which run the Schedules' own workflows (its default: 1). */
export const SCHEDULER_WORKERS = 4;

/**
 * The Temporal dev server from the CLI that scripts/ensure.sh installed. Besides its gRPC port it
 * opens an HTTP API, a metrics endpoint (given a free port here, so it is known) and listeners of
 * its history, matching and worker services on random ports: `ports` lists all of them, for the
 * outbound policy (temporalServiceEnv).
 */
export async function startTemporal(
  dataDir: string,
  port: number,
  options: {
    dbFile?: string;
    uiPort?: number;
    httpPort?: number;
    /**
     * Another host (the cluster suite's network namespaces): the server runs through `wrap` and is
     * reached at `host`. It then listens on all of that host's addresses: the dev server's own
     * services call each other on 127.0.0.1 whatever address it is given.
     */
    wrap?: Wrap;
    host?: string;
  } = {},
): Promise<LocalTemporal> {
  const bin = path.resolve(dataDir, 'tools/venv/bin/temporal');
  if (!existsSync(bin)) throw new Error(`Temporal CLI missing at ${bin}; run scripts/ensure.sh`);
  const ip = options.host ?? '127.0.0.1';
  const metricsPort = await freePort();
  const args = [
    'server',
    'start-dev',
    '--ip',
    options.host ? '0.0.0.0' : ip,
    '--port',
    String(port),
    '--metrics-port',
    String(metricsPort),
    '--log-level',
    'error',
    // Temporal's Schedules start workflows through one token bucket per namespace, 30 a second
    // by default: 500 Jobs due on the same minute would start over 17 s (docs/jobs.md, "Many Jobs
    // on the same minute"). The service's own Temporal lets them start within the second.
    '--dynamic-config-value',
    `worker.schedulerNamespaceStartWorkflowRPS=${SCHEDULE_STARTS_PER_SECOND}`,
    // Each Schedule is a workflow that Temporal's own worker runs, one per namespace by default
    // with two workflow-task pollers: 500 fires on the same second wait in line behind it (p99
    // start lag 13.6 s at 500 Schedules, bench/temporal-floor.ts). Four of them: 5.2 s, which is
    // what the two cores' CPU allows (docs/jobs.md, "Many Jobs on the same minute").
    '--dynamic-config-value',
    `worker.perNamespaceWorkerCount=${SCHEDULER_WORKERS}`,
  ];
  if (options.dbFile) args.push('--db-filename', path.resolve(options.dbFile));
  if (options.httpPort) args.push('--http-port', String(options.httpPort));
  if (options.uiPort) args.push('--ui-port', String(options.uiPort));
  else args.push('--headless');
  const child = spawn(...(options.wrap ?? here)(bin, args), { stdio: ['ignore', 'ignore', 'inherit'], detached: false });
  await waitForPort(port, ip);
  // The frontend answers last; the listeners are read until two reads agree (and hold the known ones).
  let ports: number[] = [];
  const expected = [port, metricsPort, ...(options.httpPort ? [options.httpPort] : [])];
  for (let i = 0; i < 100; i++) {
    const now = existsSync(`/proc/${child.pid}`) ? listeningPorts(child.pid!) : [];
    if (expected.every((p) => now.includes(p)) && now.join() === ports.join()) break;
    ports = now;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    address: `${ip}:${port}`,
    process: child,
    ports,
    stop() {
      child.kill('SIGTERM');
    },
  };
}

/**
 * What the service's processes are told about a local dev server (npm start): its address, its
 * HTTP API port and every other listener, all refused by the outbound policy
 * (application/internal-endpoints.ts).
 */
export function temporalServiceEnv(temporal: LocalTemporal, httpPort: number): Record<string, string> {
  const grpc = Number(temporal.address.split(':').pop());
  return {
    SVC_TEMPORAL_ADDRESS: temporal.address,
    SVC_TEMPORAL_HTTP_PORT: String(httpPort),
    SVC_TEMPORAL_OTHER_PORTS: temporal.ports.filter((p) => p !== grpc && p !== httpPort).join(','),
  };
}

export function resetDir(dir: string) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
}
