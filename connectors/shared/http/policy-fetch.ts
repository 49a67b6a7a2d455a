import { Readable } from 'node:stream';
import { egressFetch } from '../policy/egress.js';
import { followRedirects } from './fetch.js';
import { publicUrl } from './redirects.js';

/*
 * A fetch() for the SDKs that take one (gaxios, under google-auth-library and the Drive client;
 * the BigQuery client's transport, bigquery/transport.ts), in place of the node-fetch they would
 * load: every hop through the outbound policy (egress.ts) and redirects.ts's rule for what a
 * redirect may carry, followed by the same loop as the connectors' own requests (fetch.ts).
 *
 * node-fetch 3.3.2, the latest there is, throws a TypeError inside an HTTP response handler when
 * a 307 (with a request body) is followed by another redirect: nothing can catch it and the
 * process ends (issue 32). It also sends Authorization to another port of the same host.
 */

/** What the SDKs pass besides a standard RequestInit (node-fetch's options; ignored here). */
export interface SdkRequestInit extends RequestInit {
  /** node-fetch's limit on redirects. */
  follow?: number;
  /** node-fetch's agent: connections go through the policy's dispatcher instead. */
  agent?: unknown;
  duplex?: 'half';
}

export interface PolicyFetchOptions {
  /** Header names (any case) besides Authorization and Cookie that carry secrets (an API key header). */
  secretHeaders?: readonly string[];
}

const repeatable = (body: unknown) =>
  body === undefined ||
  body === null ||
  typeof body === 'string' ||
  body instanceof URLSearchParams ||
  ArrayBuffer.isView(body) ||
  body instanceof ArrayBuffer ||
  body instanceof Blob ||
  body instanceof FormData;

/** A stream body as undici takes it (a web stream; Node's Readable is converted). */
const sendable = (body: unknown) => (body instanceof Readable ? Readable.toWeb(body) : body) as BodyInit | null | undefined;

/** A fetch() with the outbound policy and redirects.ts's rule, for `fetchImplementation` options. */
export function policyFetch(options: PolicyFetchOptions = {}) {
  return async function fetchUnderPolicy(input: string | URL | Request, init: SdkRequestInit = {}): Promise<Response> {
    const url = input instanceof Request ? input.url : String(input);
    const method = (init.method ?? 'GET').toUpperCase();
    const headers = Object.fromEntries(new Headers(init.headers ?? undefined));
    const body = init.body ?? undefined;
    const signal = init.signal ?? new AbortController().signal;
    const once = (target: string, hop: { method: string; headers: Record<string, string>; body: unknown }) =>
      egressFetch(target, {
        method: hop.method,
        headers: hop.headers,
        body: sendable(hop.body),
        signal,
        redirect: 'manual',
        ...(hop.body !== undefined && !repeatable(hop.body) ? { duplex: 'half' } : {}),
      } as RequestInit);
    if (init.redirect === 'manual') return once(url, { method, headers, body });
    const { value } = await followRedirects(
      {
        url,
        method,
        headers,
        body,
        label: publicUrl(url),
        maxRedirects: init.redirect === 'error' ? 0 : (init.follow ?? 20),
        rules: { secretHeaders: options.secretHeaders, bodyRepeatable: repeatable(body) },
      },
      signal,
      async (target, hop) => {
        const response = await once(target, hop);
        return {
          status: response.status,
          location: response.headers.get('location'),
          discard: async () => void (await response.body?.cancel()),
          value: response,
        };
      },
    );
    return value;
  };
}

/** A response body as a Node stream: SDKs hand over a fetch body (a web stream) where callers want a Readable. */
export function nodeReadable(body: unknown): Readable {
  if (body instanceof Readable) return body;
  if (body && typeof (body as ReadableStream).getReader === 'function') return Readable.fromWeb(body as import('node:stream/web').ReadableStream);
  return Readable.from([]);
}
