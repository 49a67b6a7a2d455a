import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/*
 * The plumbing every stand-in under test/servers shares: a loopback HTTP server whose handler may
 * throw an HttpAnswer to send a status (any other error answers 500), stopped with every
 * connection closed; `serveStandIn` also records every request (method, path, query,
 * Authorization) so suites can check what a client sent, while stand-ins whose suites look at
 * something else (where a token travelled, bytes streamed) keep a log of their own on
 * `listenStandIn`. The answers themselves are each stand-in's, written from its vendor's reference.
 */

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | null;
}

export class HttpAnswer extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(`HTTP ${status}`);
  }
}

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A JSON or form body as an object (clients send either). */
export function formOrJson(body: Buffer, type: string | undefined): Record<string, string> {
  const text = body.toString('utf8');
  if ((type ?? '').includes('json')) return JSON.parse(text || '{}') as Record<string, string>;
  return Object.fromEntries(new URLSearchParams(text));
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Sends `body`, or the part a `Range: bytes=a-b` header asks for (206), as storage services do. */
export function sendBytes(req: IncomingMessage, res: ServerResponse, body: Buffer, type: string, headers: Record<string, string> = {}): void {
  const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range ?? '');
  if (range && body.length > 0) {
    const start = Number(range[1]);
    const end = Math.min(range[2] ? Number(range[2]) : body.length - 1, body.length - 1);
    if (start >= body.length) {
      res.writeHead(416, { 'content-range': `bytes */${body.length}` });
      res.end();
      return;
    }
    res.writeHead(206, { 'content-type': type, 'content-length': end - start + 1, 'content-range': `bytes ${start}-${end}/${body.length}`, ...headers });
    res.end(body.subarray(start, end + 1));
    return;
  }
  res.writeHead(200, { 'content-type': type, 'content-length': body.length, 'accept-ranges': 'bytes', ...headers });
  res.end(body);
}

/** The Authorization header of HTTP Basic for a user name and password. */
export const basicAuth = (username: string, password: string) => `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;

export type StandInHandler = (req: IncomingMessage, res: ServerResponse, url: URL) => unknown;

export interface Listening {
  /** http://127.0.0.1:<port>, without a trailing slash. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

export interface StandIn extends Listening {
  requests: SeenRequest[];
}

/** A stand-in's server on a free loopback port; `stop` closes every connection (held ones too), then the server. */
export async function listenStandIn(handler: StandInHandler): Promise<Listening> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://standin');
    Promise.resolve()
      .then(() => handler(req, res, url))
      .catch((error: unknown) => {
        if (res.headersSent) return res.destroy();
        if (error instanceof HttpAnswer) return sendJson(res, error.status, error.body, error.headers);
        sendJson(res, 500, { detail: String(error) });
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** listenStandIn with every request recorded in `requests`. */
export async function serveStandIn(handler: StandInHandler): Promise<StandIn> {
  const requests: SeenRequest[] = [];
  const listening = await listenStandIn((req, res, url) => {
    requests.push({ method: req.method!, path: url.pathname, query: url.searchParams, authorization: req.headers.authorization ?? null });
    return handler(req, res, url);
  });
  return { ...listening, requests };
}

/** The log as `METHOD /path` lines (what suites that compare request lines read). */
export const requestLines = (requests: SeenRequest[]) => requests.map((r) => `${r.method} ${r.path}`);
