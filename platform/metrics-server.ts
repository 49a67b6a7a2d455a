import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { collectProcessMetrics, exposition } from './metrics.js';

/*
 * The metrics listener: GET /metrics in Prometheus text format on a port of its own
 * (SVC_METRICS_PORT for the API, SVC_WORKER_METRICS_PORT for a worker), bound to 127.0.0.1 unless
 * SVC_METRICS_HOST says otherwise, with an optional bearer token (SVC_METRICS_TOKEN). A listener
 * of its own rather than a route of the API (docs/metrics.md, says why): the worker
 * has no HTTP server, Prometheus holds no user account, and the public API stays what the
 * contract says it is.
 */

export interface MetricsListenerOptions {
  host: string;
  port: number;
  /** Required as `Authorization: Bearer <token>` when set. */
  token: string | null;
  log: Pick<Logger, 'info' | 'warn' | 'error'>;
}

const digest = (value: string) => createHash('sha256').update(value).digest();

const isLoopback = (host: string) => host === 'localhost' || host === '::1' || /^127\./.test(host);

/** Compares in constant time (both sides hashed first, so their lengths say nothing). */
function tokenMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer (.+)$/i.exec(header ?? '')?.[1] ?? '';
  return timingSafeEqual(digest(given), digest(token));
}

/**
 * Starts the listener; resolves with a way to stop it, or null when it could not listen (the port
 * is taken: logged as an error, and the process goes on without serving metrics — a Run must not
 * fail because a scrape cannot happen).
 */
export async function startMetricsListener(options: MetricsListenerOptions): Promise<{ port: number; close(): Promise<void> } | null> {
  collectProcessMetrics();
  if (!isLoopback(options.host) && !options.token) {
    options.log.warn(
      { host: options.host, port: options.port },
      'the metrics listener is reachable beyond this machine without SVC_METRICS_TOKEN: keep it on a private network, or set a token',
    );
  }
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD' }).end();
    if (path !== '/metrics') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('only /metrics is served here\n');
    if (options.token && !tokenMatches(req.headers.authorization, options.token)) {
      return void res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('a bearer token is required (SVC_METRICS_TOKEN)\n');
    }
    exposition().then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(req.method === 'HEAD' ? undefined : body),
      (error: unknown) => {
        options.log.error({ err: error }, 'could not render the metrics');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('could not render the metrics\n');
      },
    );
  });
  // A scrape is small; nothing should hold a connection open for long.
  server.requestTimeout = 30_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (error) {
    options.log.error({ err: error, host: options.host, port: options.port }, 'the metrics listener could not start; going on without it');
    return null;
  }
  server.unref();
  const port = (server.address() as AddressInfo).port;
  options.log.info({ host: options.host, port }, 'metrics at /metrics');
  return {
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
