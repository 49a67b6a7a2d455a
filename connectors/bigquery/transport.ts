import { createRequire } from 'node:module';
import { randomUUID } from 'node:crypto';
import { stringify } from 'node:querystring';
import { PassThrough, Readable } from 'node:stream';
import { nodeReadable, policyFetch } from '../shared/http/policy-fetch.js';

/*
 * The BigQuery client's HTTP transport. @google-cloud/bigquery sends every request through
 * @google-cloud/common, which sends through teeny-request, which loads node-fetch and takes no
 * fetch of ours: node-fetch 3.3.2 throws where nothing catches on a 307 followed by another
 * redirect (the process ends: issue 32) and keeps Authorization on a redirect to another port
 * of the same host. So the `teenyRequest` that @google-cloud/common calls is replaced, in the
 * copy of teeny-request it loads, by this one: the same request options and answers (callback,
 * stream and two-part multipart uploads, the forms @google-cloud/common uses) over
 * connectors/shared/http/policy-fetch.ts, so every hop passes the outbound policy and redirects.ts's
 * rule. An HTTP(S)_PROXY in the environment is not used (as for every other connector).
 */

/** The options teeny-request takes (the `request` module's), as far as @google-cloud/common sends them. */
interface TeenyOptions {
  uri?: string;
  url?: string;
  method?: string;
  headers?: Record<string, string> | Headers;
  json?: unknown;
  body?: unknown;
  qs?: Record<string, unknown>;
  useQuerystring?: boolean;
  multipart?: { 'Content-Type': string; body: string | Readable }[];
}

/** A response in the `request` module's shape, as @google-cloud/common reads it. */
interface TeenyResponse {
  statusCode: number;
  statusMessage: string;
  request: { href: string; headers: Record<string, string> };
  headers: Record<string, string>;
  body: unknown;
  toJSON(): { headers: Record<string, string> };
}

type Callback = (error: Error | null, response: TeenyResponse | null, body: unknown) => void;

/** The fetch of the BigQuery client and its auth client. */
export const bigQueryFetch = policyFetch({ secretHeaders: ['x-goog-api-key'] });

function fetchArguments(options: TeenyOptions): { url: string; init: RequestInit & { duplex?: 'half' } } {
  const headers = Object.fromEntries(new Headers((options.headers as HeadersInit | undefined) ?? undefined));
  let body: BodyInit | undefined;
  if (options.json !== undefined && typeof options.json === 'object') {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.body !== undefined) {
    body = Buffer.isBuffer(options.body) || typeof options.body === 'string' ? (options.body as BodyInit) : JSON.stringify(options.body);
  }
  let url = options.uri ?? options.url;
  if (!url) throw new Error('Missing uri or url in reqOpts.');
  if (options.useQuerystring === true || typeof options.qs === 'object') url = `${url}?${stringify(options.qs as Record<string, string>)}`;
  return { url, init: { method: options.method ?? 'GET', headers, ...(body === undefined ? {} : { body }) } };
}

function toTeenyResponse(init: RequestInit, response: Response): TeenyResponse {
  const headers = Object.fromEntries(response.headers);
  return {
    statusCode: response.status,
    statusMessage: response.statusText,
    request: { href: response.url, headers: init.headers as Record<string, string> },
    headers,
    body: undefined,
    toJSON: () => ({ headers }),
  };
}

/** The two parts of an upload (the job as JSON, then the data) as one multipart/related body. */
function multipartBody(boundary: string, parts: NonNullable<TeenyOptions['multipart']>): Readable {
  return Readable.from(
    (async function* () {
      for (const part of parts) {
        yield `--${boundary}\r\nContent-Type: ${part['Content-Type']}\r\n\r\n`;
        if (typeof part.body === 'string') yield part.body;
        else for await (const chunk of part.body) yield chunk as Buffer;
        yield '\r\n';
      }
      yield `--${boundary}--`;
    })(),
  );
}

function teenyRequest(options: TeenyOptions): PassThrough;
function teenyRequest(options: TeenyOptions, callback: Callback): undefined;
function teenyRequest(options: TeenyOptions, callback?: Callback): PassThrough | undefined {
  const { url, init } = fetchArguments(options);
  if (options.multipart?.length === 2) {
    if (!callback) throw new Error('Multipart without callback is not implemented.');
    const boundary = randomUUID();
    (init.headers as Record<string, string>)['content-type'] = `multipart/related; boundary=${boundary}`;
    init.body = multipartBody(boundary, options.multipart) as unknown as BodyInit;
    init.duplex = 'half';
  }
  if (!callback) {
    // Stream mode: the response's body flows through the returned stream, 'response' first.
    const out = new PassThrough();
    bigQueryFetch(url, init).then(
      (response) => {
        out.emit('response', toTeenyResponse(init, response));
        const body = nodeReadable(response.body);
        body.on('error', (error) => out.destroy(error));
        body.on('end', () => out.emit('complete'));
        body.pipe(out);
      },
      (error: Error) => out.destroy(error),
    );
    return out;
  }
  bigQueryFetch(url, init).then(
    async (response) => {
      const answer = toTeenyResponse(init, response);
      let body: unknown;
      try {
        const type = response.headers.get('content-type') ?? '';
        const text = await response.text();
        body = /^application\/json(;\s*charset=utf-8)?$/i.test(type) && response.status !== 204 && text ? JSON.parse(text) : text;
      } catch (error) {
        callback(error as Error, answer, undefined);
        return;
      }
      answer.body = body;
      callback(null, answer, body);
    },
    (error: Error) => callback(error, null, null),
  );
  return undefined;
}

/** teeny-request's `defaults`: a request function with these options under every call's own. */
function defaults(base: TeenyOptions) {
  return (options: TeenyOptions, callback?: Callback) => (callback ? teenyRequest({ ...base, ...options }, callback) : teenyRequest({ ...base, ...options }));
}

/** Puts this transport in place of teeny-request's, in the copy @google-cloud/common loads (once). */
export function useBigQueryTransport(): void {
  const fromCommon = createRequire(createRequire(import.meta.url).resolve('@google-cloud/common'));
  const module = fromCommon('teeny-request') as { teenyRequest: { policy?: true; stats?: unknown } };
  if (module.teenyRequest.policy) return;
  module.teenyRequest = Object.assign(teenyRequest, { defaults, stats: module.teenyRequest.stats, policy: true as const });
}
