import { ConnectorError } from '../../domain/transfers.js';
import { fetchJson, httpRequest, failUnlessOk, publicUrl, readText, sendWrite } from '../shared/http/fetch.js';
import type { ConnectorContext } from '../types.js';

/*
 * GeoNode's REST API v2 (/api/v2/…) as the geonode connector calls it: datasets, uploads and
 * execution requests. Credentials: an API key (OAuth2 access token) as a Bearer header, else
 * the user name and password as HTTP Basic, only ever sent to the portal's own origin.
 */

export interface GeonodeAccess {
  /** Portal base URL without a trailing slash. */
  base: string;
  headers: Record<string, string>;
}

export function accessOf(config: { url: string; username?: string; password?: string; api_key?: string }): GeonodeAccess {
  const headers: Record<string, string> = {};
  if (config.api_key) headers.authorization = `Bearer ${config.api_key}`;
  else if (config.username) headers.authorization = `Basic ${Buffer.from(`${config.username}:${config.password ?? ''}`).toString('base64')}`;
  return { base: config.url.replace(/\/+$/, ''), headers };
}

export function apiUrl(access: GeonodeAccess, segments: string[], query: Record<string, string> = {}): string {
  const url = new URL(`${access.base}/api/v2/${segments.map(encodeURIComponent).join('/')}`);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
  return url.toString();
}

export interface Link {
  extension?: string;
  link_type?: string;
  name?: string;
  mime?: string;
  url?: string;
}

export interface Dataset {
  pk: number | string;
  name?: string;
  alternate?: string;
  title?: string;
  abstract?: string;
  detail_url?: string;
  download_url?: string;
  links?: Link[];
  subtype?: string;
}

const MAX_JSON = 32 * 1024 * 1024;

export async function apiGet<T>(access: GeonodeAccess, segments: string[], ctx: ConnectorContext, query: Record<string, string> = {}): Promise<T> {
  const url = apiUrl(access, segments, query);
  return (await fetchJson<T>({ url, headers: access.headers, label: publicUrl(url) }, ctx.signal, MAX_JSON)).json;
}

/** A write with a JSON or multipart body; the JSON answer is returned. Refusals keep GeoNode's own short message. */
export async function apiSend<T>(
  access: GeonodeAccess,
  method: 'POST' | 'PATCH',
  segments: string[],
  body: { json?: unknown; form?: FormData },
  ctx: ConnectorContext,
): Promise<T> {
  const url = apiUrl(access, segments);
  const { got, label } = await sendWrite(
    {
      url,
      method,
      headers: { ...access.headers, accept: 'application/json', ...(body.json !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body.json !== undefined ? JSON.stringify(body.json) : body.form,
    },
    ctx.signal,
    (text) => {
      try {
        const j = JSON.parse(text) as Record<string, unknown>;
        return String(j.detail ?? j.message ?? (Array.isArray(j.errors) ? j.errors.join('; ') : '')).slice(0, 300);
      } catch {
        return undefined; // not JSON: the status says enough
      }
    },
  );
  const { text } = await readText(got.response, MAX_JSON, label);
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ConnectorError('invalid_response', `${label} did not answer JSON`, { url: publicUrl(url) }, false);
  }
}

/** A dataset by its id (digits) or its name / alternate (workspace:name). */
export async function findDataset(access: GeonodeAccess, key: string, ctx: ConnectorContext): Promise<Dataset | null> {
  if (/^\d+$/.test(key)) {
    const url = apiUrl(access, ['datasets', key]);
    const got = await httpRequest({ url, headers: { ...access.headers, accept: 'application/json' }, label: publicUrl(url) }, ctx.signal);
    if (got.response.status === 404) {
      await got.response.body?.cancel();
      return null;
    }
    await failUnlessOk(got, publicUrl(url));
    const { text } = await readText(got.response, MAX_JSON, publicUrl(url));
    try {
      return (JSON.parse(text) as { dataset?: Dataset }).dataset ?? null;
    } catch {
      throw new ConnectorError('invalid_response', `${publicUrl(url)} did not answer JSON`, { url: publicUrl(url) }, false);
    }
  }
  const field = key.includes(':') ? 'alternate' : 'name';
  const found = await apiGet<{ datasets?: Dataset[] }>(access, ['datasets'], ctx, { [`filter{${field}}`]: key, page_size: '2' });
  if (!Array.isArray(found.datasets))
    throw new ConnectorError(
      'invalid_response',
      `${publicUrl(apiUrl(access, ['datasets']))} answered without a datasets list: is ${publicUrl(access.base)} a GeoNode 4 or newer?`,
      {},
      false,
    );
  return found.datasets.find((d) => d[field] === key) ?? null;
}

/** The dataset's page in the portal, absolute. */
export const pageUrl = (access: GeonodeAccess, d: Dataset) => (d.detail_url ? new URL(d.detail_url, `${access.base}/`).toString() : null);
