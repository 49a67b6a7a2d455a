import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import path from 'node:path';
import { createGzip } from 'node:zlib';
import { listenStandIn, readBody } from '../standin.js';

/*
 * A local HTTP server for the url, http and stac connector suites: static files with ETag and
 * Last-Modified, redirects (also to another origin), basic / bearer / API-key protected paths,
 * chosen status codes, large bodies streamed without Content-Length, a POST export endpoint and
 * an endpoint that never answers. Every request is recorded so suites can check what was sent.
 *
 *   /files/<path>[?noetag=1]          a file under `dir` (HEAD, Range, If-None-Match, If-Modified-Since;
 *                                     Last-Modified only with noetag)
 *   /redirect/<n>/<rest>              n redirects (302), then /<rest>
 *   /redirect-to?url=<absolute>&code= one redirect to any URL (default 302)
 *   /basic/<rest>, /bearer/<rest>, /key/<rest>   401 without the configured credential, else /<rest>
 *   /status/<code>                    that status, a short text body
 *   /stream?bytes=N[&declare=1]       a GeoJSON FeatureCollection of about N bytes, chunked
 *                                     (or with Content-Length when declare=1)
 *   /export                           POST {"count": n} → n points as GeoJSON; GET → 405
 *   /echo                             the request's method, headers and body as JSON
 *   /hang                             headers never come (for deadlines)
 */

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  /** Bytes of body written by /stream before the client finished or went away. */
  sent?: number;
  /** The /stream answer is over (sent whole or cut off): `sent` is final. */
  over?: boolean;
}

export interface HttpFixtureOptions {
  /** Folder served under /files/. */
  dir: string;
  basic?: { username: string; password: string };
  bearer?: string;
  apiKey?: { header: string; value: string };
}

export interface HttpFixtureServer {
  url: string;
  requests: RecordedRequest[];
  stop(): Promise<void>;
}

const types: Record<string, string> = {
  '.geojson': 'application/geo+json',
  '.json': 'application/json',
  '.gpkg': 'application/geopackage+sqlite3',
  '.zip': 'application/zip',
  '.csv': 'text/csv',
  '.tif': 'image/tiff',
};

const point = (i: number) =>
  JSON.stringify({
    type: 'Feature',
    properties: { id: i, name: `feature ${i}` },
    geometry: { type: 'Point', coordinates: [6 + (i % 1000) / 1000, 46 + Math.floor(i / 1000) / 1000] },
  });

async function serveFile(req: IncomingMessage, res: ServerResponse, dir: string, rel: string): Promise<void> {
  const file = path.join(dir, path.normalize(decodeURIComponent(rel)));
  if (!file.startsWith(path.resolve(dir) + path.sep)) return void res.writeHead(403).end();
  let info;
  try {
    info = await stat(file);
  } catch {
    return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  }
  if (!info.isFile()) return void res.writeHead(404).end();
  const url = new URL(req.url!, 'http://x');
  const etag = url.searchParams.get('noetag')
    ? null
    : `"${createHash('sha1')
        .update(await readFile(file))
        .digest('hex')}"`;
  const lastModified = info.mtime.toUTCString();
  const since = req.headers['if-modified-since'];
  const validators = { ...(etag ? { etag } : {}), 'last-modified': lastModified };
  if (
    (etag && req.headers['if-none-match'] === etag) ||
    (!req.headers['if-none-match'] && since && Date.parse(since) >= Math.floor(info.mtimeMs / 1000) * 1000)
  ) {
    return void res.writeHead(304, validators).end();
  }
  const headers: Record<string, string | number> = { ...validators, 'content-type': types[path.extname(file)] ?? 'application/octet-stream' };
  if (url.searchParams.get('disposition')) headers['content-disposition'] = `attachment; filename="${url.searchParams.get('disposition')}"`;
  // A file name sent as raw UTF-8 bytes, as many servers do (Node writes header strings as Latin-1).
  const utf8Name = url.searchParams.get('disposition_utf8');
  if (utf8Name) headers['content-disposition'] = Buffer.from(`attachment; filename="${utf8Name}"`, 'utf8').toString('latin1');
  if (url.searchParams.get('gzip') && /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''))) {
    res.writeHead(200, { ...headers, 'content-encoding': 'gzip' });
    if (req.method === 'HEAD') return void res.end();
    return void createReadStream(file).pipe(createGzip()).pipe(res);
  }
  const range = /^bytes=(\d+)-(\d+)$/.exec(String(req.headers.range ?? ''));
  if (range && req.method === 'GET') {
    const [start, end] = [Number(range[1]), Math.min(Number(range[2]), info.size - 1)];
    res.writeHead(206, { ...headers, 'content-length': end - start + 1, 'content-range': `bytes ${start}-${end}/${info.size}` });
    return void createReadStream(file, { start, end }).pipe(res);
  }
  res.writeHead(200, { ...headers, 'content-length': info.size });
  if (req.method === 'HEAD') return void res.end();
  createReadStream(file).pipe(res);
}

function streamGeoJson(res: ServerResponse, bytes: number, declare: boolean, record: RecordedRequest): void {
  // One feature repeated: a fixed width, so the declared length is known up front.
  const head = '{"type":"FeatureCollection","features":[';
  const feature = point(0);
  const width = feature.length;
  const count = Math.max(1, Math.floor((bytes - head.length - 2) / (width + 1)));
  const total = head.length + count * width + (count - 1) + 2;
  res.writeHead(200, { 'content-type': 'application/geo+json', ...(declare ? { 'content-length': total } : {}) });
  let i = 0;
  record.sent = head.length;
  res.write(head);
  const pump = () => {
    while (i < count) {
      const chunk: string[] = [];
      for (let n = 0; n < 200 && i < count; n++, i++) chunk.push((i ? ',' : '') + feature);
      const text = chunk.join('');
      record.sent! += text.length;
      if (!res.write(text)) return void res.once('drain', pump);
    }
    record.sent! += 2;
    res.end(']}');
  };
  res.on('close', () => {
    i = count + 1;
    record.over = true;
  });
  pump();
}

export async function startHttpFixtureServer(options: HttpFixtureOptions): Promise<HttpFixtureServer> {
  const requests: RecordedRequest[] = [];
  const hanging = new Set<ServerResponse>();

  async function route(req: IncomingMessage, res: ServerResponse, pathname: string, record: RecordedRequest): Promise<void> {
    const body = record.body;
    const url = new URL(req.url!, 'http://x');
    const files = /^\/files\/(.+)$/.exec(pathname);
    if (files) return serveFile(req, res, options.dir, files[1]!);
    let m = /^\/redirect\/(\d+)\/(.*)$/.exec(pathname);
    if (m) {
      const n = Number(m[1]);
      const next = n > 1 ? `/redirect/${n - 1}/${m[2]}` : `/${m[2]}`;
      return void res.writeHead(302, { location: next + url.search }).end();
    }
    if (pathname === '/redirect-to') return void res.writeHead(Number(url.searchParams.get('code') ?? 302), { location: url.searchParams.get('url')! }).end();
    m = /^\/(basic|bearer|key)\/(.*)$/.exec(pathname);
    if (m) {
      const auth = req.headers.authorization ?? '';
      const ok =
        m[1] === 'basic'
          ? Boolean(options.basic) && auth === `Basic ${Buffer.from(`${options.basic!.username}:${options.basic!.password}`).toString('base64')}`
          : m[1] === 'bearer'
            ? Boolean(options.bearer) && auth === `Bearer ${options.bearer}`
            : Boolean(options.apiKey) && req.headers[options.apiKey!.header.toLowerCase()] === options.apiKey!.value;
      if (!ok) return void res.writeHead(401, { 'www-authenticate': m[1] === 'basic' ? 'Basic realm="test"' : 'Bearer' }).end('unauthorized');
      return route(req, res, `/${m[2]}`, record);
    }
    m = /^\/status\/(\d{3})$/.exec(pathname);
    if (m) return void res.writeHead(Number(m[1]), { 'content-type': 'text/plain' }).end(`status ${m[1]}`);
    if (pathname === '/stream') return streamGeoJson(res, Number(url.searchParams.get('bytes') ?? 1000), url.searchParams.get('declare') === '1', record);
    if (pathname === '/export') {
      if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end();
      let count: number;
      try {
        count = Number(JSON.parse(body).count);
      } catch {
        return void res.writeHead(400).end('body must be JSON');
      }
      if (!(req.headers['content-type'] ?? '').startsWith('application/json')) return void res.writeHead(415).end('send application/json');
      const features = Array.from({ length: count }, (_, i) => JSON.parse(point(i)));
      return void res
        .writeHead(200, { 'content-type': 'application/geo+json', 'content-disposition': 'attachment; filename="export.geojson"' })
        .end(JSON.stringify({ type: 'FeatureCollection', features }));
    }
    if (pathname === '/echo')
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ method: req.method, headers: req.headers, body }));
    if (pathname === '/hang') {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
  }

  const standIn = await listenStandIn(async (req, res, url) => {
    const record: RecordedRequest = { method: req.method!, path: req.url!, headers: req.headers, body: (await readBody(req)).toString('utf8') };
    requests.push(record);
    await route(req, res, url.pathname, record);
  });
  return {
    url: standIn.url,
    requests,
    async stop() {
      for (const res of hanging) res.destroy();
      await standIn.stop();
    },
  };
}
