import { ConnectorError } from '../../domain/transfers.js';
import { failUnlessOk, fetchJson, httpRequest, publicUrl, readText, sendWrite } from '../shared/http/fetch.js';
import type { ConnectorContext } from '../types.js';

/*
 * GeoServer's REST API (/rest/…) and its OGC endpoints, as the geoserver connector calls them:
 * JSON in and out, HTTP Basic authentication from the connection's user and password. Paths
 * are built from escaped segments, so a workspace or layer name cannot reach another resource.
 */

export interface GeoserverAccess {
  /** Base URL of the GeoServer web application (…/geoserver), without a trailing slash. */
  base: string;
  headers: Record<string, string>;
}

export function accessOf(config: { url: string; username?: string; password?: string }): GeoserverAccess {
  const headers: Record<string, string> = {};
  if (config.username) headers.authorization = `Basic ${Buffer.from(`${config.username}:${config.password ?? ''}`).toString('base64')}`;
  return { base: config.url.replace(/\/+$/, ''), headers };
}

/** {base}/rest/<segments…>, each segment escaped; `.json` asks GeoServer for JSON. */
export function restUrl(access: GeoserverAccess, segments: string[], query: Record<string, string> = {}): string {
  const url = new URL(`${access.base}/rest/${segments.map(encodeURIComponent).join('/')}`);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  return url.toString();
}

const MAX_JSON = 32 * 1024 * 1024;

/** GET a REST resource as JSON; null when GeoServer answers 404 (the resource does not exist). */
export async function restGet<T>(access: GeoserverAccess, segments: string[], ctx: ConnectorContext, query: Record<string, string> = {}): Promise<T | null> {
  const url = restUrl(access, segments, query);
  const label = publicUrl(url);
  const got = await httpRequest({ url, headers: { ...access.headers, accept: 'application/json' }, label }, ctx.signal);
  if (got.response.status === 404) {
    await got.response.body?.cancel();
    return null;
  }
  await failUnlessOk(got, label);
  const { text } = await readText(got.response, MAX_JSON, label);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ConnectorError('invalid_response', `${label} did not answer JSON: is ${publicUrl(access.base)} a GeoServer?`, { url: label }, false);
  }
}

/** A REST write (POST/PUT/DELETE); non-2xx answers are classified with GeoServer's own message. */
export async function restSend(
  access: GeoserverAccess,
  method: 'POST' | 'PUT' | 'DELETE',
  segments: string[],
  ctx: ConnectorContext,
  body?: { json?: unknown; bytes?: Uint8Array<ArrayBuffer>; contentType?: string },
  query: Record<string, string> = {},
): Promise<void> {
  const url = restUrl(access, segments, query);
  const { got } = await sendWrite(
    {
      url,
      method,
      headers: {
        ...access.headers,
        ...(body?.json !== undefined ? { 'content-type': 'application/json' } : body?.contentType ? { 'content-type': body.contentType } : {}),
      },
      ...(body?.json !== undefined ? { body: JSON.stringify(body.json) } : body?.bytes ? { body: body.bytes } : {}),
    },
    ctx.signal,
    // GeoServer explains a refusal in a short plain-text body: keep its first line.
    (text) =>
      text
        .split('\n')
        .find((l) => l.trim())
        ?.trim()
        .slice(0, 300),
  );
  await got.response.body?.cancel();
}

/** GeoServer lists are `{"workspaces": {"workspace": [...]}}`, or `{"workspaces": ""}` when empty. */
export function listOf<T>(body: unknown, outer: string, inner: string): T[] {
  const o = (body as Record<string, unknown> | null)?.[outer];
  if (!o || typeof o !== 'object') return [];
  const list = (o as Record<string, unknown>)[inner];
  return Array.isArray(list) ? (list as T[]) : list && typeof list === 'object' ? [list as T] : [];
}

/** A JSON body's one field, checked to be an object (GeoServer wraps every resource in its type name). */
export function wrapped<T>(body: unknown, key: string, label: string): T {
  const value = (body as Record<string, unknown> | null)?.[key];
  if (!value || typeof value !== 'object') throw new ConnectorError('invalid_response', `${label} answered JSON without "${key}"`, { url: label }, false);
  return value as T;
}

export { fetchJson };
