import { CreateBucketCommand, ListMultipartUploadsCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { Connection } from '@temporalio/client';
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { allScopes } from '../../domain/accounts/scopes.js';
import { startPostgres, startTemporal, type LocalPostgres, type LocalTemporal } from '../../scripts/local-services.js';
import { startS3Server } from '../../devservers/s3/server.js';
import { finished, postgisConfiguration, startFileServer, type FileServer, type RunJson } from '../support/jobs.js';
import { createNetwork, type Host, type Network } from '../../devservers/network.js';

/*
 * The whole service on seven hosts of a namespace network (./network.ts), sharing only what
 * README "Running on several machines" says they share: PostgreSQL (host pg: the service's
 * database, and the `target` database Jobs deliver into), Temporal (host tp, its state in a file
 * of its own data folder so that it can be stopped and started again), an S3-compatible store
 * (host s3: moto) and the settings. Two API replicas (api1, api2) and two workers (w1, w2) run as
 * `npm start` runs them, each with its own empty data folder. The test process sits on the bridge
 * (the gateway address) and serves the url Sources' files from there.
 */

const ROOT = process.cwd();
const BUCKET = 'geoflow';
const PREFIX = 'cluster/';
export const ADMIN = { email: 'admin@example.com', password: 'cluster suite password' };
/** The size of w2's data disk. */
export const SMALL_DISK_MB = 64;
const PORTS = { pg: 5432, temporal: 7233, temporalHttp: 7243, s3: 9000, api: 8080 } as const;

/** An API or worker process on its host, started as `npm start` starts it. */
export interface ServiceProcess {
  name: string;
  host: Host;
  kind: 'api' | 'worker';
  /** The running process, if any (its pid is the node process's own: `ip netns exec` execs). */
  child: ChildProcess | null;
  /** Starts it (again) and resolves once it answers (API) or polls the task queue (worker). */
  start(): Promise<void>;
  /** Stops it and waits for the exit (SIGTERM: it drains; SIGKILL: a crash). */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** The last lines it wrote. */
  logTail(): string;
}

export interface ApiClient {
  /** A request with the suite's token, answered within `timeoutMs` or failed. */
  call(method: string, url: string, body?: unknown, options?: { timeoutMs?: number; headers?: Record<string, string> }): Promise<Answer>;
  base: string;
}

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
  text: string;
}

/** What the install held at one moment: the suite prints it after each fault. */
export interface ClusterState {
  runs: Record<string, number>;
  tables: Record<string, number>;
  /** Staging tables a delivery left in the target database (none, when nothing is half-written). */
  staging: string[];
  bucket: Record<string, number>;
  /** Multipart uploads begun and neither finished nor aborted. */
  openUploads: number;
}

export interface Cluster {
  network: Network;
  /** Where the API and worker processes write their logs (kept after the cluster is gone). */
  logDir: string;
  apis: ServiceProcess[];
  workers: ServiceProcess[];
  /** The API replica `name` (default api1) as a client with the suite's token. */
  api(name?: string): ApiClient;
  files: FileServer;
  /** The suite's personal access token (every scope). */
  token: string;
  /** A postgis Destination's configuration for the `target` database on host pg. */
  target: Record<string, unknown>;
  /** SQL as the superuser in the service database or the target database. */
  sql<T extends pg.QueryResultRow = Record<string, any>>(database: 'geoflow' | 'target', text: string, values?: unknown[]): Promise<T[]>;
  temporal: { address: string; stop(): Promise<void>; start(): Promise<void>; connection(): Promise<Connection> };
  /** The worker process (by pid) Temporal names as the identity that ran or runs something. */
  workerOf(identity: string | null | undefined): ServiceProcess | undefined;
  bucketKeys(prefix?: string): Promise<string[]>;
  state(): Promise<ClusterState>;
  /** Prints the state under a title and returns it. */
  report(title: string): Promise<ClusterState>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string | (() => string), probe: () => Promise<T | undefined | false>, timeoutMs: number, every = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    await sleep(every);
  }
  const said = typeof what === 'function' ? what() : what;
  throw new Error(`${said} after ${timeoutMs} ms${lastError ? `: ${(lastError as Error).message}` : ''}`);
}

export async function startCluster(): Promise<Cluster> {
  const base = mkdtempSync(path.join(tmpdir(), 'svc-cluster-'));
  // The pg host's cluster runs as the postgres user, who must reach its folder.
  chmodSync(base, 0o755);
  const network = createNetwork(base);
  try {
    return await build(network);
  } catch (error) {
    network.destroy();
    throw error;
  }
}

async function build(network: Network): Promise<Cluster> {
  // The services' logs outlive the cluster (for a failure's story), under the test data folder
  // that `npm test` empties when it starts.
  const logDir = path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'test', `cluster-${network.id}`);
  mkdirSync(logDir, { recursive: true });
  const [pgHost, tpHost, s3Host] = ['pg', 'tp', 's3'].map((n) => network.addHost(n)) as [Host, Host, Host];
  const apiHosts = ['api1', 'api2'].map((n) => network.addHost(n));
  const workerHosts = ['w1', 'w2'].map((n) => network.addHost(n));
  // w2's data folder is a disk of its own, small enough to fill (the disk-full fault).
  workerHosts[1]!.smallDisk(SMALL_DISK_MB, 'data');

  // PostgreSQL, Temporal and the store start together.
  const [postgres, s3] = await Promise.all([
    startPostgres(path.join(pgHost.dataDir, 'pg'), PORTS.pg, ['geoflow', 'target'], {
      fresh: true,
      durable: false,
      wrap: pgHost.wrap,
      listen: pgHost.address,
      clients: network.cidr,
    }),
    startS3Server({ host: s3Host.address, port: PORTS.s3, wrap: s3Host.wrap }),
  ]);
  let temporal: LocalTemporal | null = null;
  // Temporal keeps its state in a file (it is stopped and started again by a test), on a memory
  // disk of the tp host: SQLite syncing every write to the shared, busy disk slowed it to timeouts.
  const temporalState = tpHost.smallDisk(512, 'state');
  const temporalOptions = { host: tpHost.address, wrap: tpHost.wrap, httpPort: PORTS.temporalHttp, dbFile: path.join(temporalState, 'temporal.db') };
  const dataDir = path.resolve(process.env.SVC_DATA_DIR ?? '.data');
  temporal = await startTemporal(dataDir, PORTS.temporal, temporalOptions);
  const temporalAddress = temporal.address;

  const credentials = { accessKeyId: s3.writer.access_key, secretAccessKey: s3.writer.secret_key };
  const admin = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials });
  await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
  const files = await startFileServer(network.gateway);

  const pgUrl = (database: string) => postgres.url(database);
  await query(postgres, 'target', 'CREATE EXTENSION IF NOT EXISTS postgis');
  const target = postgisConfiguration(pgUrl('target'));

  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    SVC_DATABASE_URL: pgUrl('geoflow'),
    SVC_TEMPORAL_ADDRESS: temporalAddress,
    SVC_TEMPORAL_HTTP_PORT: String(PORTS.temporalHttp),
    SVC_STORAGE_URL: `s3://${BUCKET}/${PREFIX}`,
    SVC_STORAGE_ENDPOINT: s3.endpoint,
    SVC_STORAGE_PATH_STYLE: 'true',
    AWS_ACCESS_KEY_ID: credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    AWS_REGION: 'us-east-1',
    SVC_SECRET_KEY: randomBytes(32).toString('hex'),
    SVC_ADMIN_EMAIL: ADMIN.email,
    SVC_ADMIN_PASSWORD: ADMIN.password,
    SVC_PORT: String(PORTS.api),
    // A cut-off worker's step moves to the other one after this long without a heartbeat.
    SVC_HEARTBEAT_TIMEOUT_S: '5',
    // Jobs deliver into the `target` database on the service's own PostgreSQL server.
    SVC_OUTBOUND_ALLOW: `${pgHost.address}:${PORTS.pg}`,
    SVC_LOG_LEVEL: 'warn',
    UV_THREADPOOL_SIZE: '8',
  };
  for (const name of ['SVC_TEST_DATABASE_URL', 'SVC_TEST_TEMPORAL_ADDRESS', 'SVC_TASK_QUEUE']) delete env[name];

  const connections: Connection[] = [];
  const temporalConnection = async () => {
    const c = await Connection.connect({ address: temporalAddress });
    connections.push(c);
    return c;
  };

  const service = (kind: 'api' | 'worker', host: Host): ServiceProcess => {
    const logFile = path.join(logDir, `${host.name}-${kind}.log`);
    const proc: ServiceProcess = {
      name: host.name,
      host,
      kind,
      child: null,
      async start() {
        const script = kind === 'api' ? 'api/server.ts' : 'worker/worker.ts';
        const out = openSync(logFile, 'a');
        const child = host.spawn(process.execPath, ['--expose-gc', '--import', 'tsx', script], {
          cwd: ROOT,
          env: { ...env, SVC_DATA_DIR: path.join(host.dataDir, 'data'), SVC_HOST: host.address },
          stdio: ['ignore', out, out],
        });
        closeSync(out);
        proc.child = child;
        const exited = () => child.exitCode !== null || child.signalCode !== null;
        if (kind === 'api') {
          await until(
            () => `${host.name}'s API answering /healthz\n${proc.logTail()}`,
            async () => !exited() && (await fetch(`http://${host.address}:${PORTS.api}/healthz`, { signal: AbortSignal.timeout(2000) })).ok,
            180_000,
            250,
          );
        } else {
          const connection = await temporalConnection();
          await until(
            () => `${host.name}'s worker polling\n${proc.logTail()}`,
            async () => {
              if (exited()) throw new Error(`exited with ${child.exitCode ?? child.signalCode}`);
              const r = await connection.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: 'geoflow' }, taskQueueType: 2 });
              return (r.pollers ?? []).some((p) => p.identity?.startsWith(`${child.pid}@`));
            },
            180_000,
            250,
          );
        }
      },
      async stop(signal = 'SIGTERM') {
        const child = proc.child;
        if (!child) return;
        proc.child = null;
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill(signal);
        const force = setTimeout(() => child.kill('SIGKILL'), 30_000);
        await exited;
        clearTimeout(force);
      },
      logTail() {
        try {
          return readFileSync(logFile, 'utf8').slice(-3000);
        } catch {
          return '';
        }
      },
    };
    return proc;
  };
  const apis = apiHosts.map((h) => service('api', h));
  const workers = workerHosts.map((h) => service('worker', h));
  // The first API creates the schemas and the first user; then the rest, side by side.
  await apis[0]!.start();
  await Promise.all([apis[1]!.start(), ...workers.map((w) => w.start())]);

  const login = await fetch(`http://${apiHosts[0]!.address}:${PORTS.api}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(ADMIN),
  });
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const made = await fetch(`http://${apiHosts[0]!.address}:${PORTS.api}/api/v1/account/tokens`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ name: 'cluster suite', scopes: allScopes }),
  });
  const token = ((await made.json()) as { token: string }).token;

  const client = (host: Host): ApiClient => {
    const base = `http://${host.address}:${PORTS.api}`;
    return {
      base,
      async call(method, url, body, options = {}) {
        const res = await fetch(base + url, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
        });
        const text = await res.text();
        let parsed: unknown = text;
        try {
          parsed = JSON.parse(text);
        } catch {
          /* not JSON */
        }
        return { status: res.status, headers: res.headers, body: parsed, text };
      },
    };
  };

  const bucketKeys = async (prefix = PREFIX) => {
    const found: string[] = [];
    let next: string | undefined;
    do {
      const page = await admin.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix, ContinuationToken: next }));
      found.push(...(page.Contents ?? []).map((o) => o.Key!));
      next = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (next);
    return found;
  };

  const cluster: Cluster = {
    network,
    logDir,
    apis,
    workers,
    api: (name = 'api1') => client(network.host(name)),
    files,
    token,
    target,
    sql: (database, text, values) => query(postgres, database, text, values),
    temporal: {
      address: temporalAddress,
      async stop() {
        const t = temporal;
        temporal = null;
        if (!t) return;
        const exited = new Promise((r) => (t.process.exitCode !== null ? r(null) : t.process.once('exit', r)));
        t.stop();
        await exited;
      },
      async start() {
        temporal = await startTemporal(dataDir, PORTS.temporal, temporalOptions);
      },
      connection: temporalConnection,
    },
    workerOf(identity) {
      const pid = Number(/^(\d+)@/.exec(identity ?? '')?.[1]);
      return workers.find((w) => w.child?.pid === pid);
    },
    bucketKeys,
    async state() {
      const runs = Object.fromEntries(
        (await cluster.sql<{ status: string; n: string }>('geoflow', 'SELECT status, count(*) AS n FROM rm.runs GROUP BY status ORDER BY status')).map((r) => [
          r.status,
          Number(r.n),
        ]),
      );
      const tables: Record<string, number> = {};
      const names = await cluster.sql<{ name: string }>(
        'target',
        "SELECT tablename AS name FROM pg_tables WHERE schemaname = 'public' AND tablename NOT IN ('spatial_ref_sys') ORDER BY 1",
      );
      for (const { name } of names) {
        if (name.startsWith('_geoflow')) continue;
        tables[name] = Number((await cluster.sql<{ n: string }>('target', `SELECT count(*) AS n FROM public."${name}"`))[0]!.n);
      }
      const staging = names.map((n) => n.name).filter((n) => n.startsWith('_geoflow_stage') || n.startsWith('_geoflow_old'));
      const bucket: Record<string, number> = {};
      for (const key of await bucketKeys()) {
        const area = key.slice(PREFIX.length).split('/')[0]!;
        bucket[area] = (bucket[area] ?? 0) + 1;
      }
      const uploads = await admin.send(new ListMultipartUploadsCommand({ Bucket: BUCKET, Prefix: PREFIX }));
      return { runs, tables, staging, bucket, openUploads: (uploads.Uploads ?? []).length };
    },
    async report(title) {
      const state = await cluster.state();
      const line = (o: Record<string, number>) =>
        Object.entries(o)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ') || 'none';
      console.log(
        `[cluster] ${title}\n  Runs: ${line(state.runs)}\n  target tables (rows): ${line(state.tables)}; staging tables left: ${state.staging.join(', ') || 'none'}\n  bucket objects: ${line(state.bucket)}; unfinished multipart uploads: ${state.openUploads}`,
      );
      return state;
    },
    async stop() {
      try {
        await Promise.all([...apis, ...workers].map((p) => p.stop('SIGTERM')));
        for (const c of connections) await c.close().catch(() => undefined);
        await cluster.temporal.stop();
        await files.close();
        await s3.stop();
        postgres.stop();
      } finally {
        network.destroy();
      }
    },
  };
  return cluster;
}

async function query<T extends pg.QueryResultRow>(postgres: LocalPostgres, database: string, text: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: postgres.url(database), connectionTimeoutMillis: 10_000 });
  await c.connect();
  try {
    return (await c.query<T>(text, values)).rows;
  } finally {
    await c.end();
  }
}

/** Polls a Run (through `api`) until `until` holds, failing after `timeoutMs` with the last state seen. */
export async function waitForRun(
  api: ApiClient,
  jobId: string,
  runId: string,
  done: (run: RunJson) => boolean = (r) => finished(r.status),
  timeoutMs = 120_000,
): Promise<RunJson> {
  let last: RunJson | undefined;
  return until(
    () => `Run ${runId} did not get there; last seen: ${JSON.stringify(last)}`,
    async () => {
      const res = await api.call('GET', `/api/v1/jobs/${jobId}/runs/${runId}`, undefined, { timeoutMs: 10_000 });
      if (res.status !== 200) return false;
      last = res.body as RunJson;
      return done(last) && last;
    },
    timeoutMs,
    250,
  );
}

export { until, sleep };
