import { Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import type { Dispatcher } from 'undici';
import { TRANSFER_BUFFER_BYTES } from '../../../platform/file-writer.js';
import { classify, reasonOfStatus } from '../policy/classify.js';
import { egressDispatcher, egressFetch } from '../policy/egress.js';
import { ConnectorError } from '../../../domain/transfers.js';
import { nextHop, publicUrl, REDIRECT_STATUSES, type HopRequest, type RedirectRules } from './redirects.js';

/*
 * HTTP requests for the connectors that speak HTTP themselves (url, http, ogcfeatures, stac,
 * featureserver, hub, ckan, geoserver, geonode, qfieldcloud, merginmaps), every hop through the
 * outbound policy (egress.ts): redirects followed by hand under redirects.ts's rule, so that
 * credentials never travel to another origin, and JSON answers read with a size limit and
 * classified failures.
 *
 * Why not fetch's own redirect: 'follow'? It drops Authorization on a cross-origin redirect but
 * keeps every other header (an API key in X-API-Key) and sends a 307's body (a sign-in's
 * password) wherever the redirect points.
 */

export { publicUrl };

export interface HttpRequest {
  url: string;
  method?: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  /** Text, bytes (a file upload), or a multipart form (fetch sets its Content-Type with the boundary); a redirect that turns the request into a GET drops it. */
  body?: string | Uint8Array<ArrayBuffer> | FormData;
  /** More header names (any case) that carry secrets: dropped when a redirect leaves the origin. */
  secretHeaders?: readonly string[];
  /** The body holds no secret and may follow a 307/308 to another origin (redirects.ts refuses that by default). */
  bodyMayLeaveOrigin?: boolean;
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

/** The answer to one hop of a request, as the redirect loop needs it; `value` is what the transport answered. */
export interface HopAnswer<T> {
  status: number;
  location: string | null;
  /** Discards the body of a redirect. */
  discard(): Promise<void>;
  value: T;
}

export type Send<T, B = HttpRequest['body']> = (
  url: string,
  init: { method: string; headers: Record<string, string>; body: B | undefined; signal: AbortSignal },
) => Promise<HopAnswer<T>>;

/**
 * One request, following up to `maxRedirects` redirects: 301/302 turn a POST into a GET (as
 * browsers do), 303 always does, 307/308 repeat the request. When a redirect changes origin,
 * credential headers and `secretHeaders` are left behind and a body is not sent there
 * (redirects.ts). Network failures are classified; HTTP error statuses are returned for the
 * caller to judge.
 */
export async function httpRequest(request: HttpRequest, signal: AbortSignal): Promise<HttpResponse> {
  const { value, finalUrl } = await followRedirects(redirecting(request), signal, async (url, init) => {
    const response = await egressFetch(url, { ...init, redirect: 'manual' });
    const discard = async () => void (await response.body?.cancel());
    return { status: response.status, location: response.headers.get('location'), discard, value: response };
  });
  return { response: value, finalUrl };
}

/** An answer whose body is a Node stream, for a large download (httpStream). */
export interface StreamedResponse {
  status: number;
  headers: { get(name: string): string | null };
  body: Readable;
  /** The URL that answered, after redirects. */
  finalUrl: string;
}

/**
 * httpRequest for a body to stream to disk: the same outbound policy, redirects and errors, with
 * the body as a Node stream straight from undici's dispatcher. fetch hands its body over as a web
 * stream, and the layers between that and a file cost: 1.29 GB over loopback took 2.5–4.3 s
 * through fetch and 1.6–2.8 s through a Node stream (curl: 1.3–2.1 s; issue 22).
 */
export async function httpStream(request: HttpRequest, signal: AbortSignal): Promise<StreamedResponse> {
  if (request.body instanceof FormData) throw new Error('httpStream sends no multipart forms: use httpRequest');
  const { value, finalUrl } = await followRedirects(redirecting(request), signal, (url, init) => streamOnce(url, init));
  return { ...value, finalUrl };
}

/** Header bytes as text: UTF-8 when they are (a file name in Content-Disposition often is), else Latin-1 as fetch reads them. */
function headerText(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return bytes.toString('latin1');
  }
}

function streamOnce(url: string, init: Parameters<Send<unknown>>[1]): Promise<HopAnswer<Omit<StreamedResponse, 'finalUrl'>>> {
  const target = new URL(url);
  const { signal } = init;
  return new Promise((resolve, reject) => {
    let abort: ((reason?: Error) => void) | undefined;
    let resume: (() => void) | undefined;
    let answered = false;
    const body = new Readable({
      highWaterMark: TRANSFER_BUFFER_BYTES,
      read: () => resume?.(),
      destroy: (error, done) => {
        // The reader stopped (a redirect discarded, a failed save): so does the transfer.
        abort?.(error ?? new Error('download stopped'));
        done(error);
      },
    });
    const onAbort = () => abort?.(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    const done = () => signal.removeEventListener('abort', onAbort);
    egressDispatcher().dispatch(
      {
        origin: target.origin,
        path: `${target.pathname}${target.search}`,
        method: init.method as Dispatcher.HttpMethod,
        // As fetch would: compressed answers are welcome (and inflated below).
        headers: { 'accept-encoding': 'gzip, deflate, br', ...init.headers },
        body: init.body as string | Uint8Array | undefined,
      },
      {
        onConnect(abortRequest) {
          abort = abortRequest;
          if (signal.aborted) onAbort();
          else signal.addEventListener('abort', onAbort, { once: true });
        },
        onHeaders(status, raw, resumeRequest) {
          if (status < 200) return true; // 1xx: the real answer follows
          resume = resumeRequest;
          const headers = new Map<string, string>();
          for (let i = 0; i + 1 < raw.length; i += 2) {
            const name = raw[i]!.toString('latin1').toLowerCase();
            const value = headerText(raw[i + 1]!);
            headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value);
          }
          const get = (name: string) => headers.get(name.toLowerCase()) ?? null;
          answered = true;
          resolve({
            status,
            location: get('location'),
            discard: async () => void body.destroy(),
            value: { status, headers: { get }, body: inflated(body, get('content-encoding')) },
          });
          return true;
        },
        // false pauses the socket until the reader asks for more (read → resume).
        onData: (chunk) => body.push(chunk),
        onComplete() {
          done();
          body.push(null);
        },
        onError(error) {
          done();
          if (answered) body.destroy(error);
          else reject(error);
        },
      },
    );
  });
}

/** The body as sent, decoded when the server compressed it (Content-Encoding), as fetch does. */
function inflated(body: Readable, encoding: string | null): Readable {
  const coding = (encoding ?? '').trim().toLowerCase();
  const decoder =
    coding === 'gzip' || coding === 'x-gzip' ? createGunzip() : coding === 'deflate' ? createInflate() : coding === 'br' ? createBrotliDecompress() : null;
  if (!decoder) return body;
  body.on('error', (error) => decoder.destroy(error));
  decoder.on('close', () => body.destroy());
  return body.pipe(decoder);
}

/** How followRedirects is asked to send: the first request, its label and the redirect rules. */
export interface RedirectingRequest<B> {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: B | undefined;
  label: string;
  maxRedirects: number;
  rules?: Omit<RedirectRules, 'label'>;
}

/**
 * Sends a request and the ones its redirects ask for (up to `maxRedirects`; 0 makes any redirect
 * an invalid_response that names the new address), each hop under redirects.ts's rule. Network
 * failures are classified; HTTP error statuses are returned for the caller to judge.
 */
export async function followRedirects<T, B>(request: RedirectingRequest<B>, signal: AbortSignal, send: Send<T, B>): Promise<{ value: T; finalUrl: string }> {
  const { label, maxRedirects } = request;
  let hop: HopRequest<B> = { url: request.url, method: request.method, headers: request.headers, body: request.body };
  for (let count = 0; ; count++) {
    let answer: HopAnswer<T>;
    try {
      answer = await send(hop.url, {
        method: hop.method,
        headers: hop.headers,
        body: hop.method === 'GET' || hop.method === 'HEAD' ? undefined : hop.body,
        signal,
      });
    } catch (error) {
      throw classify(error, label, { url: label });
    }
    const location = answer.location;
    if (!REDIRECT_STATUSES.includes(answer.status) || !location) return { value: answer.value, finalUrl: hop.url };
    await answer.discard();
    if (maxRedirects === 0) {
      throw new ConnectorError(
        'invalid_response',
        `${label} answered a redirect (HTTP ${answer.status}) to ${publicUrl(new URL(location, hop.url))}: save that address instead`,
        { url: label, http_status: answer.status },
        false,
      );
    }
    if (count >= maxRedirects) {
      throw new ConnectorError('invalid_response', `${label} redirected more than ${maxRedirects} times`, { url: label, http_status: answer.status }, false);
    }
    hop = nextHop(hop, request.url, answer.status, location, { label, ...request.rules });
  }
}

/** An HttpRequest as followRedirects takes it. */
const redirecting = (request: HttpRequest): RedirectingRequest<HttpRequest['body']> => ({
  url: request.url,
  method: request.method ?? 'GET',
  headers: { 'user-agent': 'geoflow', ...request.headers },
  body: request.body,
  label: request.label ?? publicUrl(request.url),
  maxRedirects: request.maxRedirects ?? 10,
  rules: { secretHeaders: request.secretHeaders, bodyMayLeaveOrigin: request.bodyMayLeaveOrigin },
});

/** Throws the classified ConnectorError of a non-2xx answer (its body is discarded). */
export async function failUnlessOk(got: HttpResponse, label: string): Promise<void> {
  if (got.response.ok) return;
  await got.response.body?.cancel();
  throw statusError(got.response.status, label);
}

/** The classified error of a non-2xx status. */
export function statusError(status: number, label: string): ConnectorError {
  return new ConnectorError(reasonOfStatus(status), `${label} answered HTTP ${status}`, { url: label, http_status: status });
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

/** `work`, its not_found said again as "<who> has no <what>" (what the caller was looking for, not a raw URL). */
export async function missingAs<T>(work: Promise<T>, who: string, what: string): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof ConnectorError && error.reason === 'not_found') throw new ConnectorError('not_found', `${who} has no ${what}`, error.details, false);
    throw error;
  }
}

/**
 * A write (POST, PUT, PATCH, DELETE) that follows no redirect. A refusal is classified by its
 * status and keeps the server's own short explanation, which `said` finds in the body's text.
 * Answers the response and the label that names the request in messages.
 */
export async function sendWrite(
  request: Omit<HttpRequest, 'label' | 'maxRedirects'> & { method: 'POST' | 'PUT' | 'PATCH' | 'DELETE' },
  signal: AbortSignal,
  said: (text: string) => string | undefined,
): Promise<{ got: HttpResponse; label: string }> {
  const label = `${request.method} ${publicUrl(request.url)}`;
  const got = await httpRequest({ ...request, label, maxRedirects: 0 }, signal);
  if (got.response.ok) return { got, label };
  const { text } = await readText(got.response, 64 * 1024, label).catch(() => ({ text: '' }));
  const explained = said(text);
  const status = got.response.status;
  throw new ConnectorError(reasonOfStatus(status), `${label} answered HTTP ${status}${explained ? `: ${explained}` : ''}`, {
    url: publicUrl(request.url),
    http_status: status,
  });
}
