import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { safeFilename } from '../../geo/dataset-files.js';
import type { ConnectorContext } from '../types.js';
import { classify, reasonOfStatus } from './classify.js';
import { ConnectorError } from './errors.js';

export interface DownloadRequest {
  url: string;
  headers?: Record<string, string>;
  method?: 'GET' | 'POST';
  body?: string;
  /** Conditional request: an ETag or Last-Modified value seen on an earlier Run. */
  ifNoneMatch?: string | null;
  ifModifiedSince?: string | null;
  /** How the URL is named in messages (without credentials or query secrets). */
  label?: string;
}

export interface Downloaded {
  /** Absent when the server answered 304 Not Modified. */
  file?: string;
  filename: string;
  bytes: number;
  status: number;
  etag: string | null;
  lastModified: string | null;
  finalUrl: string;
}

/** A URL as shown in messages and results: no user info, no query string (it may carry keys). */
export function publicUrl(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid url)';
  }
}

function filenameFrom(response: Response, finalUrl: string): string {
  const disposition = response.headers.get('content-disposition') ?? '';
  const star = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(disposition);
  const plain = /filename\s*=\s*"?([^";]+)"?/i.exec(disposition);
  let name = star ? decodeURIComponent(star[1]!) : plain?.[1];
  if (!name) name = decodeURIComponent(path.posix.basename(new URL(finalUrl).pathname)) || 'download';
  if (!path.extname(name)) {
    const type = response.headers.get('content-type') ?? '';
    if (/geo\+json|application\/json/.test(type)) name += '.geojson';
    else if (/zip/.test(type)) name += '.zip';
    else if (/csv/.test(type)) name += '.csv';
    else if (/kml/.test(type)) name += '.kml';
    else if (/gml|xml/.test(type)) name += '.gml';
  }
  return safeFilename(name);
}

/**
 * Streams a remote file to disk inside ctx.workDir, never holding it in memory; the size limit
 * is enforced while streaming (and up front when Content-Length says it already). Redirects are
 * followed; 304 answers "unchanged" without a body.
 */
export async function download(request: DownloadRequest, ctx: ConnectorContext): Promise<Downloaded> {
  const label = request.label ?? publicUrl(request.url);
  const headers: Record<string, string> = { 'user-agent': 'geoflow', ...request.headers };
  if (request.ifNoneMatch) headers['if-none-match'] = request.ifNoneMatch;
  if (request.ifModifiedSince) headers['if-modified-since'] = request.ifModifiedSince;
  let response: Response;
  try {
    response = await fetch(request.url, { method: request.method ?? 'GET', headers, body: request.body, redirect: 'follow', signal: ctx.signal });
  } catch (error) {
    throw classify(error, label, { url: label });
  }
  const common = { status: response.status, etag: response.headers.get('etag'), lastModified: response.headers.get('last-modified'), finalUrl: response.url || request.url };
  if (response.status === 304) {
    await response.body?.cancel();
    return { ...common, filename: '', bytes: 0 };
  }
  if (!response.ok) {
    await response.body?.cancel();
    throw new ConnectorError(reasonOfStatus(response.status), `${label} answered HTTP ${response.status}`, { url: label, http_status: response.status });
  }
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > ctx.maxBytes) {
    await response.body?.cancel();
    throw new ConnectorError('too_large', `${label} is ${declared} bytes, more than the limit of ${ctx.maxBytes} bytes`, { url: label, max_bytes: ctx.maxBytes }, false);
  }
  const filename = filenameFrom(response, common.finalUrl);
  const file = path.join(ctx.workDir, filename);
  let bytes = 0;
  let lastReport = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (bytes > ctx.maxBytes) return done(new ConnectorError('too_large', `${label} holds more than the limit of ${ctx.maxBytes} bytes`, { url: label, max_bytes: ctx.maxBytes }, false));
      if (ctx.progress && bytes - lastReport > 8 * 1024 * 1024) {
        lastReport = bytes;
        ctx.progress({ bytes });
      }
      done(null, chunk);
    },
  });
  try {
    if (!response.body) throw new ConnectorError('invalid_response', `${label} sent no body`, { url: label });
    await pipeline(Readable.fromWeb(response.body as never), meter, createWriteStream(file));
  } catch (error) {
    await rm(file, { force: true });
    throw classify(error, label, { url: label });
  }
  if (bytes === 0) throw new ConnectorError('invalid_data', `${label} is empty`, { url: label }, false);
  return { ...common, file, filename, bytes };
}
