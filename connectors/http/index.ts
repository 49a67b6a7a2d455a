import { z } from 'zod';
import { changedSince, downloadIfChanged, publicUrl } from '../shared/http/download.js';
import { ConnectorError } from '../../domain/transfers.js';
import { httpUrl, secret } from '../shared/fields.js';
import { hasHeader, headerName, plainHeaders } from '../shared/http/http-fields.js';
import { testHttp, testSteps } from '../shared/http/http-test.js';
import { defineConnector, type SourceSupport } from '../types.js';

const configuration = z.strictObject({
  url: httpUrl.describe('Address of the endpoint that answers with one file (GeoJSON, zipped shapefile, GeoPackage, CSV …)'),
  method: z.enum(['GET', 'POST']).default('GET').describe('HTTP method'),
  headers: plainHeaders.describe('Extra request headers, stored in plain text (credentials belong in the auth fields)'),
  body: z
    .string()
    .max(100_000)
    .optional()
    .describe('Request body, sent with POST only; its Content-Type is the one in headers, else application/json when the body is JSON, else text/plain'),
  auth: z
    .enum(['none', 'basic', 'bearer', 'header'])
    .default('none')
    .describe('none; basic (username + password); bearer (bearer_token); header (api_key in the header api_key_header)'),
  username: z.string().min(1).max(255).optional().describe('User for basic authentication'),
  password: secret('Password for basic authentication'),
  bearer_token: secret('Token for bearer authentication (Authorization: Bearer …)'),
  api_key_header: headerName.optional().describe('Header that carries api_key when auth is "header" (e.g. X-API-Key)'),
  api_key: secret('Value sent in api_key_header when auth is "header"'),
});
type HttpConfig = z.output<typeof configuration>;

const missing = (auth: string, field: string) =>
  new ConnectorError('authentication_failed', `auth is "${auth}" but no ${field} is saved: set ${field}`, { auth }, false);

/** The request a configuration describes; `secretHeaders` never follow a redirect to another origin. */
export function requestOf(config: HttpConfig): {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  secretHeaders: string[];
} {
  const headers = { ...config.headers };
  const secretHeaders: string[] = [];
  if (config.auth === 'basic') {
    if (!config.username) throw missing('basic', 'username');
    if (!config.password) throw missing('basic', 'password');
    headers.authorization = `Basic ${Buffer.from(`${config.username}:${config.password}`).toString('base64')}`;
  } else if (config.auth === 'bearer') {
    if (!config.bearer_token) throw missing('bearer', 'bearer_token');
    headers.authorization = `Bearer ${config.bearer_token}`;
  } else if (config.auth === 'header') {
    if (!config.api_key_header) throw missing('header', 'api_key_header');
    if (!config.api_key) throw missing('header', 'api_key');
    headers[config.api_key_header] = config.api_key;
    secretHeaders.push(config.api_key_header);
  }
  if (config.method === 'POST' && config.body !== undefined && !hasHeader(headers, 'content-type')) {
    headers['content-type'] = isJson(config.body) ? 'application/json' : 'text/plain; charset=utf-8';
  }
  return {
    url: config.url,
    method: config.method,
    headers,
    ...(config.method === 'POST' && config.body !== undefined ? { body: config.body } : {}),
    secretHeaders,
  };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** An http Source remembers the validators (ETag, Last-Modified) of the answer it last read. */
const source: SourceSupport<Record<string, never>, HttpConfig> = {
  resource: z.strictObject({}),
  resourceRequired: false,
  importable: true,
  incremental: true,
  incrementalNote: 'ETag / Last-Modified: an unchanged answer (HTTP 304) skips the rest of the Run',
  extract: (config, _resource, ctx, options) => downloadIfChanged(requestOf(config), ctx, options.sync),
  changeCheck: {
    note: 'a HEAD (a POST source: its own request, answer dropped after the headers) with the last ETag / Last-Modified: 304 (or the same validators) is unchanged',
    changed: (config, _resource, ctx, sync) => changedSince(requestOf(config), ctx, sync),
  },
};

/** A file behind an authenticated or non-GET HTTP endpoint (an export URL of an internal system). */
export const http = defineConnector({
  type: 'http',
  label: 'HTTP endpoint',
  description: 'Downloads one file from an http(s) endpoint with authentication, custom headers or a POST body.',
  configuration,
  secrets: ['password', 'bearer_token', 'api_key'],
  example: { url: 'https://intranet.example.org/export/roads.zip', method: 'GET', auth: 'bearer', bearer_token: '…' },
  implemented: true,
  verifiedAgainst: 'real server in npm test: a local HTTP server in the tests (basic, bearer and API-key auth, POST export, redirects, ETag)',
  notes: [
    'Each use sends one request and streams the answer to disk, with the upload size limit enforced while it streams. The file name comes from `Content-Disposition`, else from the URL, and an extension is added from `Content-Type` when the name has none.',
    '',
    '- **Authentication**: `basic` sends `Authorization: Basic` from `username` and `password`; `bearer` sends `Authorization: Bearer <bearer_token>`; `header` sends `api_key` in the header named by `api_key_header` (for `X-API-Key`-style keys, or `Authorization: Token …` schemes). The secret values are sealed and never shown; `headers` is plain text and refuses `Authorization` and `Cookie`.',
    '- **Redirects** are followed (at most 10). A redirect to another origin (scheme, host or port) leaves the credentials behind: `Authorization`, `Cookie` and the API-key header are sent only to the configured origin. 301/302/303 turn a POST into a GET, as browsers do.',
    '- **POST**: `body` is sent with `method: "POST"` only; without a `Content-Type` in `headers` it goes as `application/json` when it parses as JSON, else as `text/plain`. A connection test of a POST endpoint sends the real request (and does not read the answer); a GET endpoint gets a `HEAD`, then a one-byte ranged `GET` if `HEAD` is refused.',
    '- **Incremental reads** (Jobs): the `ETag` and `Last-Modified` of the last answer are kept and sent back as `If-None-Match` / `If-Modified-Since`; a `304 Not Modified` ends the Run early as unchanged.',
    '- **Failures**: 401 → `authentication_failed`, 403 → `permission_denied`, 404/410 → `not_found`, 408/504 → `timeout`, 429 and 5xx → `server_error` (retried by Runs); refused connections and DNS failures → `unreachable`.',
  ].join('\n'),
  async test(config, ctx) {
    const c = config;
    const tried = { url: publicUrl(c.url), method: c.method, auth: c.auth };
    let request;
    try {
      request = requestOf(c);
    } catch (error) {
      return testSteps(tried, tried.url, () => Promise.reject(error));
    }
    return testHttp(request, ctx, tried);
  },
  source,
});
