import path from 'node:path';
import { safeFilename } from '../../../geo/datasets/dataset-files.js';
import type { ConnectorContext, ExtractResult, SyncState } from '../../types.js';
import { httpStream, publicUrl, statusError } from './fetch.js';
import { refuseDeclaredSize, saveStream } from '../files/save-stream.js';

export { publicUrl };

export interface DownloadRequest {
  url: string;
  headers?: Record<string, string>;
  method?: 'GET' | 'POST';
  body?: string;
  /** Conditional request: an ETag or Last-Modified value seen on an earlier Run. */
  ifNoneMatch?: string | null;
  ifModifiedSince?: string | null;
  /** Header names besides Authorization and Cookie that carry secrets (kept from other origins). */
  secretHeaders?: readonly string[];
  /** How the URL is named in messages (without credentials or query secrets). */
  label?: string;
  /** The file's name when the caller knows it better than the URL and headers (a STAC asset). */
  filename?: string;
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

/** File extensions for the media types remote servers label geodata with (when a name has none). */
const extensionsByType: [RegExp, string][] = [
  [/geo\+json|application\/json/, 'geojson'],
  [/geopackage|x-sqlite3/, 'gpkg'],
  [/tiff/, 'tif'],
  [/flatgeobuf/, 'fgb'],
  [/parquet/, 'parquet'],
  [/zip/, 'zip'],
  [/csv/, 'csv'],
  [/kml/, 'kml'],
  [/gml|xml/, 'gml'],
];

/** The extension (without dot) for a media type, when it is one of geodata's usual ones. */
export function extensionForMediaType(type: string | null | undefined): string | null {
  return extensionsByType.find(([pattern]) => pattern.test(type ?? ''))?.[1] ?? null;
}

const decoded = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** The name of a downloaded file: Content-Disposition, else the URL's last segment; an extension from its type when it has none. */
function filenameFrom(headers: { get(name: string): string | null }, finalUrl: string): string {
  const disposition = headers.get('content-disposition') ?? '';
  const star = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(disposition);
  const plain = /filename\s*=\s*"?([^";]+)"?/i.exec(disposition);
  let name = star ? decoded(star[1]!) : plain?.[1];
  if (!name) name = decoded(path.posix.basename(new URL(finalUrl).pathname)) || 'download';
  const extension = path.extname(name) ? null : extensionForMediaType(headers.get('content-type'));
  return safeFilename(extension ? `${name}.${extension}` : name);
}

/**
 * Streams a remote file to disk inside ctx.workDir, never holding it in memory; the size limit
 * is enforced while streaming (and up front when Content-Length says it already). Redirects are
 * followed (credentials stay with the original origin, see fetch.ts); 304 answers "unchanged"
 * without a body.
 */
export async function download(request: DownloadRequest, ctx: ConnectorContext): Promise<Downloaded> {
  const label = request.label ?? publicUrl(request.url);
  const headers: Record<string, string> = { ...request.headers };
  if (request.ifNoneMatch) headers['if-none-match'] = request.ifNoneMatch;
  if (request.ifModifiedSince) headers['if-modified-since'] = request.ifModifiedSince;
  const got = await httpStream(
    { url: request.url, method: request.method ?? 'GET', headers, body: request.body, secretHeaders: request.secretHeaders, label },
    ctx.signal,
  );
  const common = { status: got.status, etag: got.headers.get('etag'), lastModified: got.headers.get('last-modified'), finalUrl: got.finalUrl };
  if (got.status === 304 || got.status < 200 || got.status >= 300) {
    got.body.destroy();
    if (got.status === 304) return { ...common, filename: '', bytes: 0 };
    throw statusError(got.status, label);
  }
  // Of the bytes as sent (compressed, if they are): more than the limit is more once inflated too.
  const declared = got.headers.get('content-length');
  try {
    refuseDeclaredSize(declared === null ? undefined : Number(declared), ctx, label, { url: label });
  } catch (error) {
    got.body.destroy();
    throw error;
  }
  const filename = request.filename ? safeFilename(request.filename) : filenameFrom(got.headers, common.finalUrl);
  const file = path.join(ctx.workDir, filename);
  // Progress counts the bytes as decoded: a compressed answer's Content-Length is no total for them.
  const encoded = !['', 'identity'].includes((got.headers.get('content-encoding') ?? '').trim().toLowerCase());
  const total = declared === null || encoded ? undefined : Number(declared);
  const bytes = await saveStream(got.body, file, ctx, label, { url: label }, total);
  return { ...common, file, filename, bytes };
}

/**
 * The cursor of a conditional download: the validators of what was read last, plus `scope`
 * fields naming what they belong to (a STAC asset's href). Stored as a Job's sync cursor.
 */
export type ValidatorCursor<S extends Record<string, string> = Record<string, never>> = S & { etag: string | null; last_modified: string | null };

/** The previous Run's validators when its cursor names the same `scope`; null otherwise. */
function cursorOfScope<S extends Record<string, string>>(sync: SyncState | null | undefined, scope: S): ValidatorCursor<S> | null {
  const previous = (sync?.cursor ?? null) as ValidatorCursor<S> | null;
  return previous && Object.entries(scope).every(([k, v]) => (previous as Record<string, unknown>)[k] === v) ? previous : null;
}

/**
 * An extract that downloads only what changed (url, http, stac): the previous Run's `ETag` and
 * `Last-Modified` go out as `If-None-Match` / `If-Modified-Since` when its cursor has the same
 * `scope`; a 304 answers `unchanged` (the Run skips its other steps) and keeps the old cursor.
 */
export async function downloadIfChanged<S extends Record<string, string> = Record<string, never>>(
  request: DownloadRequest,
  ctx: ConnectorContext,
  sync: SyncState | null | undefined,
  scope: S = {} as S,
): Promise<ExtractResult> {
  const same = cursorOfScope(sync, scope);
  const got = await download({ ...request, ifNoneMatch: same?.etag, ifModifiedSince: same?.last_modified }, ctx);
  const next: SyncState = { cursor: { ...scope, etag: got.etag, last_modified: got.lastModified } satisfies ValidatorCursor<S> };
  if (!got.file) return { file: '', filename: '', bytes: 0, sync: sync ?? next, unchanged: true };
  return { file: got.file, filename: got.filename, bytes: got.bytes, sync: next };
}

/**
 * The on-change check of a conditional download (url, http, stac): the same validators go out
 * with a HEAD (a POST source sends its own request, conditional, and drops the answer after its
 * headers), and the answer says whether the file changed: 304, or the same ETag / Last-Modified
 * from a server that ignores conditions, is unchanged. A server that refuses HEAD (405, 501) is
 * asked with a conditional GET whose body is dropped unread. Without a cursor of the same
 * `scope` the Source counts as changed (no succeeded Run has read it yet).
 */
export async function changedSince<S extends Record<string, string> = Record<string, never>>(
  request: DownloadRequest,
  ctx: ConnectorContext,
  sync: SyncState | null | undefined,
  scope: S = {} as S,
): Promise<boolean> {
  const same = cursorOfScope(sync, scope);
  if (!same || (!same.etag && !same.last_modified)) return true;
  const label = request.label ?? publicUrl(request.url);
  const headers: Record<string, string> = { ...request.headers };
  if (same.etag) headers['if-none-match'] = same.etag;
  if (same.last_modified) headers['if-modified-since'] = same.last_modified;
  const ask = async (method: 'GET' | 'HEAD' | 'POST') => {
    const got = await httpStream(
      { url: request.url, method, headers, ...(method === 'POST' ? { body: request.body } : {}), secretHeaders: request.secretHeaders, label },
      ctx.signal,
    );
    got.body.destroy();
    return got;
  };
  let got = await ask(request.method === 'POST' ? 'POST' : 'HEAD');
  if (got.status === 405 || got.status === 501) got = await ask('GET');
  if (got.status === 304) return false;
  if (got.status < 200 || got.status >= 300) throw statusError(got.status, label);
  const etag = got.headers.get('etag');
  const lastModified = got.headers.get('last-modified');
  if (same.etag && etag) return etag !== same.etag;
  if (same.last_modified && lastModified) return lastModified !== same.last_modified;
  return true;
}
