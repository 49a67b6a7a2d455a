import path from 'node:path';
import { z } from 'zod';
import { changedSince, downloadIfChanged, extensionForMediaType } from '../shared/http/download.js';
import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import { httpUrl, secret } from '../shared/fields.js';
import { testSteps } from '../shared/http/http-test.js';
import { defineConnector, type ConnectorContext, type SourceSupport } from '../types.js';
import { chooseAsset, StacReader, type StacDocument } from './catalog.js';

const configuration = z.strictObject({
  url: httpUrl.describe('Root catalog (catalog.json of a static catalog) or STAC API landing page'),
  token: secret("Bearer token, sent to the catalog's own origin only"),
});
type StacConfig = z.output<typeof configuration>;

const resource = z.strictObject({
  collection: z.string().min(1).max(255).optional().describe('Collection id: narrows the search in a static catalog, required by STAC APIs without search'),
  item: z.string().min(1).max(255).describe('Item id'),
  asset: z.string().min(1).max(255).optional().describe('Asset key; default: the item\'s only asset with the role "data", or its only asset'),
});
type StacResource = z.infer<typeof resource>;

/** The downloaded file's name: the href's last segment, with an extension from the asset's media type when it has none. */
function assetFilename(href: string, key: string, type: string | undefined): string {
  let name = path.posix.basename(new URL(href).pathname);
  try {
    name = decodeURIComponent(name);
  } catch {
    // keep it as it is
  }
  if (!name) name = key;
  const extension = path.extname(name) ? null : extensionForMediaType(type);
  return extension ? `${name}.${extension}` : name;
}

/** An incremental read remembers the asset's address (href) and its validators. */
const source: SourceSupport<StacResource, StacConfig> = {
  resource,
  shorthand: 'item',
  resourceRequired: true,
  importable: true,
  incremental: true,
  incrementalNote: "the asset's ETag / Last-Modified: an unchanged asset (HTTP 304) skips the rest of the Run",
  async extract(config, selector, ctx, options) {
    const { reader, key, href, asset } = await locate(config, selector, ctx);
    return downloadIfChanged({ url: href, headers: reader.headersFor(href), filename: assetFilename(href, key, asset.type) }, ctx, options.sync, { href });
  },
  changeCheck: {
    note: "the item's metadata, then a HEAD of its asset with the last ETag / Last-Modified (an asset at a new address is a change)",
    async changed(config, selector, ctx, sync) {
      const { reader, href } = await locate(config, selector, ctx);
      return changedSince({ url: href, headers: reader.headersFor(href) }, ctx, sync, { href });
    },
  },
};

/** The asset a selector names: the item (found through the catalog or the API) and its chosen asset. */
async function locate(c: StacConfig, selector: StacResource, ctx: ConnectorContext) {
  const reader = new StacReader(c.url, c.token, ctx);
  const root = await reader.read<StacDocument>(c.url);
  const item = await reader.findItem(root, selector.item, selector.collection);
  return { reader, ...chooseAsset(item, selector.asset) };
}

export const stac = defineConnector({
  type: 'stac',
  label: 'STAC catalog',
  description: 'Assets of items in a STAC catalog or STAC API.',
  configuration,
  secrets: ['token'],
  example: { url: 'https://stac.example.org/catalog.json' },
  implemented: true,
  verifiedAgainst:
    'real server in npm test: a static STAC catalog (catalog → collection → item → assets) served over HTTP by the tests, and the same catalog as a STAC API through stac-fastapi-static 1.0.1 (PyPI)',
  notes: [
    'A read finds one Item and downloads one of its assets, streamed to disk with the upload size limit; the file is then inspected like an upload (a GeoTIFF, a GeoPackage, GeoJSON, a zipped shapefile …).',
    '',
    '- **Static catalogs**: from the root, `child` links are followed breadth first to the collection named in `collection` (when given), then its `item` links (and nested catalogs) are searched for the item id. Links whose path names the id (`<id>/<id>.json`, the STAC best-practice layout, or `<id>.json`) are read first, so a well-laid-out catalog costs a few requests; a search gives up after 2000 documents. Broken links (404) are skipped.',
    '- **STAC APIs** (the root declares STAC API conformance or a `search` link): with `collection`, `GET …/collections/{collection}/items/{item}`; without, `GET search?ids={item}`.',
    "- **Asset**: the one named in `asset`; else the item's only asset with the role `data`, else its only asset. Relative hrefs resolve against the item's location. An `s3://` (or other non-http) href is replaced by an http(s) alternate when the item lists one (Alternate Assets extension); otherwise the read fails with `invalid_data` (read object stores with an s3 or azureblob Source).",
    "- **Token**: sent as `Authorization: Bearer` to the catalog's own origin only. Assets on other hosts (CDNs, signed object URLs) are fetched without it, and redirects to another origin drop it.",
    "- **Incremental reads** (Jobs): the asset's address, `ETag` and `Last-Modified` are kept; while the address stays the same, a `304 Not Modified` ends the Run early as unchanged.",
    '- **Connection test**: reads the root, which must be a STAC document (a `stac_version`, or STAC API conformance).',
  ].join('\n'),
  async test(config, ctx) {
    const c = config;
    const label = publicUrl(c.url);
    return testSteps({ url: label, token: Boolean(c.token) }, label, async () => {
      const root = await new StacReader(c.url, c.token, ctx).read<StacDocument>(c.url);
      const api = StacReader.isApi(root.doc);
      if (!root.doc || (typeof root.doc.stac_version !== 'string' && !api)) {
        throw new ConnectorError('invalid_response', `${label} answered JSON that is not a STAC catalog, collection or API`, {}, false);
      }
      return `${label} is a STAC ${api ? 'API' : (root.doc.type ?? 'catalog')} (${root.doc.id ?? 'no id'}, STAC ${root.doc.stac_version ?? '?'})`;
    });
  },
  source,
});
