import type { z } from 'zod';
import { changedSince, downloadIfChanged, publicUrl } from '../shared/http/download.js';
import { ConnectorError } from '../../domain/transfers.js';
import { hasHeader } from '../shared/http/http-fields.js';
import { testHttp, testSteps } from '../shared/http/http-test.js';
import { type configuration, httpDeclaration } from './declaration.js';
import { defineConnector, type SourceBehaviour } from '../types.js';

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
const source = {
  extract: (config, _resource, ctx, options) => downloadIfChanged(requestOf(config), ctx, options.sync),
  changeCheck: {
    changed: (config, _resource, ctx, sync) => changedSince(requestOf(config), ctx, sync),
  },
} satisfies SourceBehaviour<Record<string, never>, HttpConfig>;

/** A file behind an authenticated or non-GET HTTP endpoint (an export URL of an internal system). */
export const http = defineConnector(httpDeclaration, {
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
