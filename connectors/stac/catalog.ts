import { ConnectorError } from '../../domain/transfers.js';
import { fetchJson, publicUrl } from '../shared/http/fetch.js';
import type { ConnectorContext } from '../types.js';

/*
 * Finding one Item in a STAC catalog: a STAC API answers it by URL (or by search), a static
 * catalog is walked from its root through `child` and `item` links. Documents are JSON, read
 * with a size limit; the token goes only to the catalog's own origin.
 */

export interface Link {
  href: string;
  rel?: string;
  type?: string;
}

export interface Asset {
  href: string;
  type?: string;
  roles?: string[];
  title?: string;
  /** Alternate Assets extension: the same file at other locations (e.g. https beside s3). */
  alternate?: Record<string, { href?: string }>;
}

export interface StacDocument {
  type?: string;
  id?: string;
  stac_version?: string;
  conformsTo?: string[];
  links?: Link[];
  assets?: Record<string, Asset>;
  features?: StacDocument[];
}

export interface Located<T> {
  doc: T;
  /** Where it was read from: relative links and asset hrefs resolve against it. */
  url: string;
}

/** Most JSON documents a search reads, and most bytes in one, before giving up. */
const LIMITS = { documents: 2000, bytesPerDocument: 16 * 1024 * 1024, depth: 12 };

export class StacReader {
  private readonly origin: string;
  private fetched = 0;

  constructor(
    readonly rootUrl: string,
    private readonly token: string | undefined,
    private readonly ctx: ConnectorContext,
  ) {
    this.origin = new URL(rootUrl).origin;
  }

  /** The bearer token, for URLs of the catalog's own origin only (assets may live elsewhere). */
  headersFor(url: string): Record<string, string> {
    return this.token && new URL(url).origin === this.origin ? { authorization: `Bearer ${this.token}` } : {};
  }

  async read<T = StacDocument>(url: string): Promise<Located<T>> {
    if (++this.fetched > LIMITS.documents) {
      throw new ConnectorError(
        'not_found',
        `gave up after reading ${LIMITS.documents} documents of ${publicUrl(this.rootUrl)}`,
        { url: publicUrl(this.rootUrl) },
        false,
      );
    }
    const got = await fetchJson<T>(
      { url, headers: { ...this.headersFor(url), accept: 'application/json, application/geo+json;q=0.9' } },
      this.ctx.signal,
      LIMITS.bytesPerDocument,
    );
    return { doc: got.json, url: got.finalUrl };
  }

  /** A linked document, or null when the link is broken (404): one broken link does not end a search. */
  private async readLinked(url: string): Promise<Located<StacDocument> | null> {
    try {
      return await this.read(url);
    } catch (error) {
      if (error instanceof ConnectorError && error.reason === 'not_found' && error.details.http_status) return null;
      throw error;
    }
  }

  /** Whether the root is a STAC API (it answers items by URL and search) rather than static files. */
  static isApi(root: StacDocument): boolean {
    return (
      (root.conformsTo ?? []).some((c) => /api\.stacspec\.org\/[^/]+\/(core|item-search|ogcapi-features)/.test(c)) ||
      (root.links ?? []).some((l) => l.rel === 'search')
    );
  }

  /** Finds item `item` (optionally within collection `collection`) from the root. */
  async findItem(root: Located<StacDocument>, item: string, collection?: string): Promise<Located<StacDocument>> {
    return StacReader.isApi(root.doc) ? this.findInApi(root, item, collection) : this.findInStatic(root, item, collection);
  }

  private async findInApi(root: Located<StacDocument>, item: string, collection?: string): Promise<Located<StacDocument>> {
    const link = (rel: string) => (root.doc.links ?? []).find((l) => l.rel === rel && typeof l.href === 'string');
    if (collection) {
      const data = link('data');
      const collections = data ? new URL(data.href, root.url).toString().replace(/\/+$/, '') : `${root.url.replace(/\/+$/, '')}/collections`;
      return this.read(`${collections}/${encodeURIComponent(collection)}/items/${encodeURIComponent(item)}`);
    }
    const search = link('search');
    if (!search) throw new ConnectorError('not_found', `${publicUrl(root.url)} offers no search: name the item's collection in source_resource`, {}, false);
    const url = new URL(search.href, root.url);
    url.searchParams.set('ids', item);
    url.searchParams.set('limit', '1');
    const found = await this.read(url.toString());
    const feature = (found.doc.features ?? []).find((f) => f.id === item);
    if (!feature) throw notFound(root.url, item, collection);
    const self = (feature.links ?? []).find((l) => l.rel === 'self');
    return { doc: feature, url: self ? new URL(self.href, found.url).toString() : found.url };
  }

  private async findInStatic(root: Located<StacDocument>, item: string, collection?: string): Promise<Located<StacDocument>> {
    let start = root;
    if (collection && root.doc.id !== collection) {
      const node = await this.breadthFirst(root, (n) => (n.doc.id === collection && n.doc.type !== 'Feature' ? n : null));
      if (!node) throw new ConnectorError('not_found', `${publicUrl(root.url)} has no collection "${collection}"`, { collection }, false);
      start = node;
    }
    const found = await this.breadthFirst(start, (node) => this.itemAmong(node, item));
    if (!found) throw notFound(root.url, item, collection);
    return found;
  }

  /**
   * Walks `child` links breadth first (depth-limited, each document once, read only when its
   * turn comes) and returns the first non-null answer of `visit` for a catalog or collection.
   */
  private async breadthFirst<T>(start: Located<StacDocument>, visit: (node: Located<StacDocument>) => T | null | Promise<T | null>): Promise<T | null> {
    const seen = new Set([start.url]);
    const queue: { href: string; depth: number }[] = [];
    const enqueue = (node: Located<StacDocument>, depth: number) => {
      if (depth >= LIMITS.depth) return;
      for (const href of linksOf(node, 'child')) {
        if (seen.has(href)) continue;
        seen.add(href);
        queue.push({ href, depth: depth + 1 });
      }
    };
    const first = await visit(start);
    if (first) return first;
    enqueue(start, 0);
    for (let next = queue.shift(); next; next = queue.shift()) {
      const node = await this.readLinked(next.href);
      if (!node) continue;
      const answer = await visit(node);
      if (answer) return answer;
      enqueue(node, next.depth);
    }
    return null;
  }

  /**
   * The item among a node's `item` links (or its `items` ItemCollection). Links whose path names
   * the id (the best-practice layout `<id>/<id>.json`, or `<id>.json`) are read first, so a
   * well-laid-out catalog costs one request per level.
   */
  private async itemAmong(node: Located<StacDocument>, item: string): Promise<Located<StacDocument> | null> {
    const links = linksOf(node, 'item');
    const named = (href: string) => {
      const parts = new URL(href).pathname.split('/').map((p) => decodeURIComponent(p));
      const file = parts.at(-1) ?? '';
      return file === `${item}.json` || parts.at(-2) === item;
    };
    for (const href of [...links.filter(named), ...links.filter((h) => !named(h))]) {
      const doc = await this.readLinked(href);
      if (doc?.doc.id === item) return doc;
    }
    for (const href of linksOf(node, 'items')) {
      const collection = await this.readLinked(href);
      const feature = (collection?.doc.features ?? []).find((f) => f.id === item);
      if (feature) {
        const self = (feature.links ?? []).find((l) => l.rel === 'self');
        return { doc: feature, url: self ? new URL(self.href, collection!.url).toString() : collection!.url };
      }
    }
    return null;
  }
}

function linksOf(node: Located<StacDocument>, rel: string): string[] {
  return (node.doc.links ?? []).filter((l) => l.rel === rel && typeof l.href === 'string').map((l) => new URL(l.href, node.url).toString());
}

function notFound(root: string, item: string, collection?: string): ConnectorError {
  return new ConnectorError(
    'not_found',
    `${publicUrl(root)} has no item "${item}"${collection ? ` in collection "${collection}"` : ''}`,
    { item, ...(collection ? { collection } : {}) },
    false,
  );
}

/**
 * The asset to download: the one named, else the item's only asset with the role "data", else
 * its only asset. Its href resolves against the item's location; an s3:// (or other) href is
 * replaced by an http(s) alternate when the item lists one.
 */
export function chooseAsset(item: Located<StacDocument>, key: string | undefined): { key: string; href: string; asset: Asset } {
  const assets = item.doc.assets ?? {};
  const keys = Object.keys(assets);
  let chosen = key;
  if (!chosen) {
    const data = keys.filter((k) => assets[k]!.roles?.includes('data'));
    chosen = data.length === 1 ? data[0] : keys.length === 1 ? keys[0] : undefined;
    if (!chosen) {
      throw new ConnectorError(
        'not_found',
        `item "${item.doc.id}" has ${keys.length} assets (${keys.slice(0, 20).join(', ')}): name one in source_resource.asset`,
        { assets: keys.slice(0, 50) },
        false,
      );
    }
  }
  const asset = assets[chosen];
  if (!asset || typeof asset.href !== 'string') {
    throw new ConnectorError(
      'not_found',
      `item "${item.doc.id}" has no asset "${chosen}" (it has ${keys.slice(0, 20).join(', ') || 'none'})`,
      { asset: chosen, assets: keys.slice(0, 50) },
      false,
    );
  }
  const candidates = [
    asset.href,
    ...Object.values(asset.alternate ?? {})
      .map((a) => a.href)
      .filter((h): h is string => typeof h === 'string'),
  ];
  for (const candidate of candidates) {
    const href = new URL(candidate, item.url);
    if (href.protocol === 'http:' || href.protocol === 'https:') return { key: chosen, href: href.toString(), asset };
  }
  const scheme = new URL(asset.href, item.url).protocol;
  throw new ConnectorError(
    'invalid_data',
    `asset "${chosen}" is stored at a ${scheme} address, and only http(s) assets can be downloaded (an s3 or azureblob Source reads object stores)`,
    { asset: chosen, scheme },
    false,
  );
}
