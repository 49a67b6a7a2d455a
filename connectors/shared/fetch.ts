import { classify, reasonOfStatus } from './classify.js';
import { egressFetch } from './egress.js';
import { ConnectorError } from './errors.js';

/*
 * HTTP requests for the HTTP-family connectors (url, http, ogcfeatures, stac, featureserver),
 * every hop through the outbound policy (egress.ts):
 * redirects followed by hand so that credentials never travel to another origin, and JSON
 * answers read with a size limit and classified failures.
 *
 * Why not fetch's own redirect: 'follow'? It drops Authorization on a cross-origin redirect but
 * keeps every other header, so an API key in X-API-Key (or any custom header a user marked
 * secret) would be sent to whatever host a redirect names.
 */

/** Headers that carry credentials by definition; never sent to another origin after a redirect. */
const credentialHeaders = ['authorization', 'proxy-authorization', 'cookie'];

export interface HttpRequest {
  url: string;
  method?: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  /** Text, bytes (a file upload), or a multipart form (fetch sets its Content-Type with the boundary); a redirect that turns the request into a GET drops it. */
  body?: string | Uint8Array<ArrayBuffer> | FormData;
  /** More header names (any case) that carry secrets: dropped when a redirect leaves the origin. */
  secretHeaders?: readonly string[];
  /** How the URL is named in messages (without credentials or query secrets). */
  label?: string;
  /** Most redirects to follow (default 10); 0 makes any redirect an invalid_response. */
  maxRedirects?: number;
}

export interface HttpResponse {
  response: Response;
  /** The URL that answered, after redirects. */
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

/**
 * One request, following up to `maxRedirects` redirects: 301/302 turn a POST into a GET (as
 * browsers do), 303 always does, 307/308 repeat the request. When a redirect changes origin,
 * credential headers and `secretHeaders` are left behind. Network failures are classified;
 * HTTP error statuses are returned for the caller to judge.
 */
export async function httpRequest(request: HttpRequest, signal: AbortSignal): Promise<HttpResponse> {
  const label = request.label ?? publicUrl(request.url);
  const secret = new Set([...credentialHeaders, ...(request.secretHeaders ?? []).map((h) => h.toLowerCase())]);
  const origin = new URL(request.url).origin;
  let url = request.url;
  let method = request.method ?? 'GET';
  let body = request.body;
  let headers: Record<string, string> = { 'user-agent': 'geoflow', ...request.headers };
  const maxRedirects = request.maxRedirects ?? 10;
  for (let hop = 0; ; hop++) {
    let response: Response;
    try {
      response = await egressFetch(url, { method, headers, body: method === 'GET' || method === 'HEAD' ? undefined : body, redirect: 'manual', signal });
    } catch (error) {
      throw classify(error, label, { url: label });
    }
    const location = response.headers.get('location');
    if (![301, 302, 303, 307, 308].includes(response.status) || !location) return { response, finalUrl: url };
    await response.body?.cancel();
    const next = new URL(location, url);
    if (maxRedirects === 0) {
      throw new ConnectorError(
        'invalid_response',
        `${label} answered a redirect (HTTP ${response.status}) to ${publicUrl(next.toString())}: save that address instead`,
        { url: label, http_status: response.status },
        false,
      );
    }
    if (hop >= maxRedirects) {
      throw new ConnectorError('invalid_response', `${label} redirected more than ${maxRedirects} times`, { url: label, http_status: response.status }, false);
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      throw new ConnectorError('invalid_response', `${label} redirected to a ${next.protocol} URL, which is not followed`, { url: label }, false);
    }
    if (next.origin !== origin) headers = Object.fromEntries(Object.entries(headers).filter(([name]) => !secret.has(name.toLowerCase())));
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
      method = method === 'HEAD' ? 'HEAD' : 'GET';
      body = undefined;
      headers = Object.fromEntries(Object.entries(headers).filter(([name]) => !/^content-(type|length|encoding)$/i.test(name)));
    }
    url = next.toString();
  }
}

/** Throws the classified ConnectorError of a non-2xx answer (its body is discarded). */
export async function failUnlessOk(got: HttpResponse, label: string): Promise<void> {
  if (got.response.ok) return;
  await got.response.body?.cancel();
  throw new ConnectorError(reasonOfStatus(got.response.status), `${label} answered HTTP ${got.response.status}`, {
    url: label,
    http_status: got.response.status,
  });
}

/** Reads a body as text, refusing more than `maxBytes` while it streams. */
export async function readText(response: Response, maxBytes: number, label: string): Promise<{ text: string; bytes: number }> {
  if (!response.body) return { text: '', bytes: 0 };
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body.cancel();
    throw new ConnectorError(
      'too_large',
      `${label} sent ${declared} bytes, more than the limit of ${maxBytes} bytes`,
      { url: label, max_bytes: maxBytes },
      false,
    );
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      bytes += chunk.length;
      if (bytes > maxBytes)
        throw new ConnectorError('too_large', `${label} sent more than the limit of ${maxBytes} bytes`, { url: label, max_bytes: maxBytes }, false);
      chunks.push(Buffer.from(chunk));
    }
  } catch (error) {
    throw classify(error, label, { url: label });
  }
  return { text: Buffer.concat(chunks).toString('utf8'), bytes };
}

/**
 * GETs (or POSTs) a JSON document: redirects as httpRequest, non-2xx classified, the body read
 * with a size limit and parsed. `bytes` is what the body weighed, for the caller's budget.
 */
export async function fetchJson<T = unknown>(
  request: HttpRequest,
  signal: AbortSignal,
  maxBytes: number,
): Promise<{ json: T; bytes: number; finalUrl: string }> {
  const label = request.label ?? publicUrl(request.url);
  const got = await httpRequest({ ...request, headers: { accept: 'application/json', ...request.headers } }, signal);
  await failUnlessOk(got, label);
  const { text, bytes } = await readText(got.response, maxBytes, label);
  try {
    return { json: JSON.parse(text) as T, bytes, finalUrl: got.finalUrl };
  } catch {
    throw new ConnectorError('invalid_response', `${label} did not answer JSON`, { url: label, content_type: got.response.headers.get('content-type') }, false);
  }
}
