import type { FastifyInstance } from 'fastify';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { bearer } from './app.js';
import { fixtureDir, pointsGeoJson } from './fixtures.js';
import { untilRead } from './until.js';

/** A Run as the API answers it (the fields the suites look at). */
export interface RunJson {
  id: string;
  job_id: string;
  status: string;
  trigger: string;
  attempt: number;
  retry_of: string | null;
  retried_by: string | null;
  retry_definition: 'current' | 'original' | null;
  parameters: Record<string, string | number | boolean>;
  triggered_by: { job_id: string; run_id: string } | null;
  started_runs: { job_id: string; run_id: string }[];
  delivery_id: string | null;
  scheduled_for: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  steps: {
    name: string;
    status: string;
    duration_ms: number | null;
    failed_attempts: number;
    last_error: { code: string; message: string; reason?: string } | null;
  }[];
  stats: Record<string, number | null>;
  skipped_reason: string | null;
  error: { code: string; message: string; step: string | null; retryable: boolean; reason?: string } | null;
  workflow: { workflow_id: string; run_id: string | null };
  job_snapshot: Record<string, unknown>;
}

export const finished = (status: string) => ['succeeded', 'failed', 'cancelled'].includes(status);

/** An API client for one token, with the Job calls the suites make. */
export function jobsClient(app: () => FastifyInstance, token: string) {
  const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    app().inject({ method, url, headers: { ...bearer(token), ...headers }, ...(payload === undefined ? {} : { payload: payload as object }) });
  /** Polls a Run until it has finished (or `until` holds), failing after `timeoutMs`. */
  const waitForRun = (jobId: string, runId: string, until: (run: RunJson) => boolean = (r) => finished(r.status), timeoutMs = 90_000): Promise<RunJson> =>
    untilRead(
      `Run ${runId} to get there`,
      async () => {
        const res = await call('GET', `/api/v1/jobs/${jobId}/runs/${runId}`);
        if (res.statusCode !== 200) throw new Error(`GET run: ${res.statusCode} ${res.body}`);
        return res.json() as RunJson;
      },
      until,
      timeoutMs,
    );
  return {
    call,
    waitForRun,
    /** A Job's Runs (up to a hundred), as the API lists them. */
    runsOf: async (jobId: string) => (await call('GET', `/api/v1/jobs/${jobId}/runs?limit=100`)).json().items as RunJson[],
    /** Run Now on a Job, then waits for that Run to finish. */
    runNow: async (jobId: string): Promise<RunJson> => waitForRun(jobId, (await call('POST', `/api/v1/jobs/${jobId}/run`)).json().id),
  };
}

/** Serves five points at /places.geojson and saves two url Sources: `places` that reads them and `gone` whose file is missing (404). */
export async function placesSources(api: ReturnType<typeof jobsClient>, files: FileServer): Promise<{ sourceId: string; missingId: string }> {
  files.put('/places.geojson', fileBody(pointsGeoJson(fixtureDir(), 5)));
  const source = async (name: string, file: string) =>
    (await api.call('POST', '/api/v1/sources', { name, type: 'url', configuration: { url: `${files.url}/${file}` } })).json().id as string;
  return { sourceId: await source('places', 'places.geojson'), missingId: await source('gone', 'gone.geojson') };
}

/** A POST a webhook Destination made. */
export interface Received {
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface FileServer {
  url: string;
  server: Server;
  /** What was POSTed to it (webhook deliveries), in order. */
  received: Received[];
  /**
   * Serves `body` at `path`, with an ETag of its own; `validators: false` sends none, so every Run
   * reads it again (a url Source skips a Run whose file has not changed).
   */
  put(path: string, body: Buffer | string, type?: string, options?: { validators?: boolean }): void;
  remove(path: string): void;
  /** Holds requests to `path` until release() (a slow Source). */
  hold(path: string): { release(): void; waiting(): number };
  /** Requests for `path` so far, of one method if given (HEAD, GET …). */
  requests(path: string, method?: string): number;
  /** The next `times` requests for `path` (GET, or a webhook's POST) answer `status` (a flaky remote). */
  failNext(path: string, status: number, times: number): void;
  close(): Promise<void>;
}

/**
 * A small HTTP server for url Sources: files by path, ETag / If-None-Match, held responses. On
 * loopback, or on `host` (the cluster suite's bridge address, which its hosts reach).
 */
export async function startFileServer(host = '127.0.0.1'): Promise<FileServer> {
  const files = new Map<string, { body: Buffer; type: string; etag: string | null }>();
  const holds = new Map<string, { queue: (() => void)[]; released: boolean }>();
  const counts = new Map<string, number>();
  const failures = new Map<string, { status: number; left: number }>();
  let version = 0;
  const received: Received[] = [];
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0]!;
    counts.set(path, (counts.get(path) ?? 0) + 1);
    counts.set(`${req.method} ${path}`, (counts.get(`${req.method} ${path}`) ?? 0) + 1);
    const failure = failures.get(path);
    if (failure && failure.left > 0) {
      failure.left -= 1;
      req.resume();
      return res.writeHead(failure.status).end('failing on purpose');
    }
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ path, headers: req.headers, body: Buffer.concat(chunks) });
        res.writeHead(204).end();
      });
      return;
    }
    const serve = () => {
      const file = files.get(path);
      if (!file) return res.writeHead(404).end('not found');
      if (file.etag && req.headers['if-none-match'] === file.etag) return res.writeHead(304, { etag: file.etag }).end();
      res.writeHead(200, { 'content-type': file.type, ...(file.etag ? { etag: file.etag } : {}), 'content-length': file.body.length }).end(file.body);
    };
    const hold = holds.get(path);
    if (hold && !hold.released) hold.queue.push(serve);
    else serve();
  };
  const server = createServer(handle);
  await new Promise<void>((r) => server.listen(0, host, r));
  const url = `http://${host}:${(server.address() as AddressInfo).port}`;
  return {
    url,
    server,
    received,
    put(path, body, type = 'application/geo+json', options = {}) {
      files.set(path, { body: Buffer.isBuffer(body) ? body : Buffer.from(body), type, etag: options.validators === false ? null : `"v${++version}"` });
    },
    remove(path) {
      files.delete(path);
    },
    hold(path) {
      const h = { queue: [] as (() => void)[], released: false };
      holds.set(path, h);
      return {
        release() {
          h.released = true;
          h.queue.splice(0).forEach((f) => {
            f();
          });
        },
        waiting: () => h.queue.length,
      };
    },
    requests: (path, method) => counts.get(method ? `${method} ${path}` : path) ?? 0,
    failNext(path, status, times) {
      failures.set(path, { status, left: times });
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

export const fileBody = (file: string) => readFileSync(file);

/** A postgis connection's configuration for a database URL (without TLS). */
export function postgisConfiguration(databaseUrl: string) {
  const url = new URL(databaseUrl);
  return {
    host: url.hostname,
    port: Number(url.port || 5432),
    database: decodeURIComponent(url.pathname.slice(1)),
    username: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
    ssl_mode: 'disable',
  };
}

/**
 * A throwaway PostGIS database on the suite's cluster for Destinations to load into, with a
 * postgis Destination configuration for it and a query helper to look at what arrived.
 */
export async function createPostgisTarget() {
  const { createTestDatabase } = await import('./database.js');
  const pg = (await import('pg')).default;
  const { url, drop } = await createTestDatabase();
  const query = async <T extends Record<string, unknown>>(text: string, values: unknown[] = []) => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      return (await c.query<T>(text, values)).rows;
    } finally {
      await c.end();
    }
  };
  await query('CREATE EXTENSION postgis');
  return { configuration: postgisConfiguration(url), query, drop };
}
