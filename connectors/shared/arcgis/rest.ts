import { ConnectorError, type ConnectorFailureReason } from '../../../domain/transfers.js';
import { failUnlessOk, httpRequest, publicUrl, readText } from '../http/fetch.js';
import type { ConnectorContext } from '../../types.js';

/*
 * Requests to the ArcGIS REST API. Every request is a POST with a form body: the token then
 * travels in the body (never in a URL that a proxy or server log keeps), and long where clauses
 * and objectIds lists fit. ArcGIS reports most failures as HTTP 200 with {"error": {code, …}}.
 */

export interface RestAccess {
  /** The service URL (…/FeatureServer or …/MapServer), without a trailing slash or query. */
  service: string;
  token?: string;
}

interface RestError {
  error?: { code?: number; message?: string; details?: unknown[] };
}

/** The reason of an ArcGIS error object (its code is HTTP-like, its message says more). */
export function reasonOfArcgisError(code: number | undefined, message: string): ConnectorFailureReason {
  if (code === 498 || code === 499) return 'authentication_failed';
  if (code === 401) return 'authentication_failed';
  if (code === 403) return 'permission_denied';
  if (code === 404 || /invalid url|not found|does not exist/i.test(message)) return 'not_found';
  if (code !== undefined && code >= 500) return 'server_error';
  return 'invalid_response';
}

export interface RestAnswer<T> {
  json: T;
  /** The body as received, for the caller to keep (a query page is read by GDAL from it). */
  text: string;
  bytes: number;
}

/** POSTs `params` (plus f=json and the token) to `path` under the service; ArcGIS errors are classified. */
export async function arcgis<T>(
  access: RestAccess,
  path: string,
  params: Record<string, string>,
  ctx: ConnectorContext,
  maxBytes: number,
): Promise<RestAnswer<T>> {
  return arcgisPost<T>(`${access.service}${path ? `/${path}` : ''}`, params, access.token, ctx, maxBytes);
}

/** A file sent in a multipart body (a portal's addItem). */
export interface RestFile {
  field: string;
  name: string;
  data: Blob;
}

/**
 * POSTs `params` (plus f=json and the token) to any ArcGIS REST URL (a service, or a portal's
 * sharing API): a form body, or a multipart body when `files` are given.
 */
export async function arcgisPost<T>(
  url: string,
  params: Record<string, string>,
  token: string | undefined,
  ctx: ConnectorContext,
  maxBytes: number,
  files: RestFile[] = [],
): Promise<RestAnswer<T>> {
  const label = publicUrl(url);
  const fields: Record<string, string> = { ...params, f: 'json', ...(token ? { token } : {}) };
  let body: string | FormData;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (files.length) {
    body = new FormData();
    for (const [k, v] of Object.entries(fields)) body.set(k, v);
    for (const f of files) body.set(f.field, f.data, f.name);
  } else {
    body = new URLSearchParams(fields).toString();
    headers['content-type'] = 'application/x-www-form-urlencoded';
  }
  // No redirects: a 307 would carry the token in the body to wherever it points, and a 301/302
  // would turn the query into a GET without its parameters. The error names the new address.
  const got = await httpRequest({ url, method: 'POST', headers, body, label, maxRedirects: 0 }, ctx.signal);
  await failUnlessOk(got, label);
  const { text, bytes } = await readText(got.response, maxBytes, label);
  let json: T & RestError;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ConnectorError('invalid_response', `${label} did not answer JSON: is it an ArcGIS REST service?`, { url: label }, false);
  }
  if (json && typeof json === 'object' && json.error) {
    const message = String(json.error.message ?? 'error').slice(0, 200);
    const reason = reasonOfArcgisError(json.error.code, message);
    throw new ConnectorError(reason, `${label} answered error ${json.error.code ?? '?'}: ${message}`, { url: label, arcgis_code: json.error.code ?? null });
  }
  return { json, text, bytes };
}
