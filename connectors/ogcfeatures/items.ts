import { open } from 'node:fs/promises';
import { ConnectorError } from '../../domain/transfers.js';
import { fetchJson, publicUrl } from '../shared/http/fetch.js';
import type { ConnectorContext } from '../types.js';

/*
 * Reading a collection of an OGC API - Features server: GET …/collections/{id}/items pages,
 * following each page's `next` link, written feature by feature into one GeoJSON file (the
 * server answers in GeoJSON, in CRS84, so the features are copied as they come).
 */

export interface ApiAccess {
  /** Landing page, without a trailing slash. */
  url: string;
  headers: Record<string, string>;
  /** Header names that carry secrets (never sent to another origin after a redirect). */
  secretHeaders: string[];
}

export interface ItemsQuery {
  collection: string;
  bbox?: [number, number, number, number];
  /** An RFC 3339 interval for the `datetime` parameter, e.g. "2024-05-01T00:00:00Z/..". */
  datetime?: string;
  pageSize: number;
}

interface Link {
  href: string;
  rel?: string;
  type?: string;
}

interface Feature {
  id?: string | number;
  properties?: Record<string, unknown> | null;
}

interface ItemsPage {
  type?: string;
  features?: Feature[];
  links?: Link[];
  numberMatched?: number;
}

/** A URL under the landing page, keeping the landing page's own query parameters. */
export function apiUrl(access: ApiAccess, ...segments: string[]): URL {
  const base = new URL(access.url);
  const url = new URL(`${base.origin}${base.pathname.replace(/\/+$/, '')}/${segments.map(encodeURIComponent).join('/')}`);
  base.searchParams.forEach((value, key) => {
    url.searchParams.set(key, value);
  });
  return url;
}

export const accept = { accept: 'application/geo+json, application/json;q=0.9' };

/** The `next` link of a page: GeoJSON or JSON preferred when a server lists several formats. */
function nextLink(page: ItemsPage, pageUrl: string): string | null {
  const next = (page.links ?? []).filter((l) => l.rel === 'next' && typeof l.href === 'string');
  const chosen = next.find((l) => /geo\+json|json/.test(l.type ?? '')) ?? next.find((l) => !l.type) ?? next[0];
  return chosen ? new URL(chosen.href, pageUrl).toString() : null;
}

/** Incremental reading: the datetime property to follow, and the newest instant already read. */
export interface Watermark {
  property: string;
  /** The newest value read before, and the ids of the features that carried exactly it. */
  since?: { value: string; ids: string[] } | null;
}

export interface ItemsResult {
  features: number;
  bytes: number;
  /** The newest value of the watermark property now read (or kept), with the ids that carry it. */
  latest: { value: string; ids: string[] } | null;
}

/** Most feature ids remembered at the newest instant; past it, those features may be read again. */
const MAX_IDS = 1000;

/**
 * Streams every page of the query into `file` as one FeatureCollection. The size limit counts
 * the bytes the server sent. With a watermark, the newest value of its property is tracked, and
 * features already read at the previous newest instant (same instant, same id) are left out:
 * the server's datetime interval includes its start.
 */
export async function readItems(access: ApiAccess, query: ItemsQuery, file: string, ctx: ConnectorContext, watermark?: Watermark): Promise<ItemsResult> {
  const first = apiUrl(access, 'collections', query.collection, 'items');
  first.searchParams.set('limit', String(query.pageSize));
  if (query.bbox) first.searchParams.set('bbox', query.bbox.join(','));
  if (query.datetime) first.searchParams.set('datetime', query.datetime);
  const label = publicUrl(first.toString());
  const tooLarge = () =>
    new ConnectorError('too_large', `${label} holds more than the limit of ${ctx.maxBytes} bytes`, { url: label, max_bytes: ctx.maxBytes }, false);
  const out = await open(file, 'w');
  const seen = new Set<string>();
  let features = 0;
  let bytes = 0;
  const track = watermark?.property;
  const since = watermark?.since ? { at: Date.parse(watermark.since.value), ids: new Set(watermark.since.ids) } : null;
  let latest: { value: string; at: number; ids: Set<string> } | null = watermark?.since
    ? { value: watermark.since.value, at: since!.at, ids: new Set(watermark.since.ids) }
    : null;
  const instantOf = (f: Feature): number | null => {
    const value = f.properties?.[track!];
    if (typeof value !== 'string') return null;
    const at = Date.parse(value);
    if (Number.isNaN(at))
      throw new ConnectorError('invalid_data', `${label}: ${track} holds "${value.slice(0, 40)}", not a date and time`, { url: label, property: track }, false);
    return at;
  };
  try {
    await out.write('{"type":"FeatureCollection","features":[\n');
    for (let url: string | null = first.toString(); url; ) {
      if (seen.has(url)) throw new ConnectorError('invalid_response', `${label} sent a next link back to a page already read`, { url: label }, false);
      seen.add(url);
      const got = await fetchJson<ItemsPage>(
        { url, headers: { ...access.headers, ...accept }, secretHeaders: access.secretHeaders, label },
        ctx.signal,
        ctx.maxBytes - bytes,
      ).catch((error) => {
        throw error instanceof ConnectorError && error.reason === 'too_large' ? tooLarge() : error;
      });
      bytes += got.bytes;
      const page = got.json;
      if (page?.type !== 'FeatureCollection' || !Array.isArray(page.features)) {
        throw new ConnectorError('invalid_response', `${label} did not answer a GeoJSON FeatureCollection`, { url: label }, false);
      }
      if (page.features.length === 0) break;
      const fresh = track
        ? page.features.filter((f) => {
            const at = instantOf(f);
            if (at === null) return true;
            const id = String(f.id ?? '');
            if (since && at === since.at && since.ids.has(id)) return false;
            if (!latest || at > latest.at) latest = { value: f.properties![track] as string, at, ids: new Set([id]) };
            else if (at === latest.at && latest.ids.size < MAX_IDS) latest.ids.add(id);
            return true;
          })
        : page.features;
      if (fresh.length) {
        const text = fresh.map((f) => JSON.stringify(f)).join(',\n');
        await out.write(features ? `,\n${text}` : text);
        features += fresh.length;
      }
      ctx.progress?.({ features, bytes });
      url = nextLink(page, got.finalUrl);
    }
    await out.write('\n]}\n');
  } finally {
    await out.close();
  }
  const newest = latest as { value: string; ids: Set<string> } | null;
  return { features, bytes, latest: newest ? { value: newest.value, ids: [...newest.ids] } : null };
}
