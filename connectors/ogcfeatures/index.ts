import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { safeFilename } from '../../geo/datasets/dataset-files.js';
import { ConnectorError } from '../../domain/transfers.js';
import { fetchJson, publicUrl } from '../shared/http/fetch.js';
import { httpUrl, secret } from '../shared/fields.js';
import { headerName } from '../shared/http/http-fields.js';
import { testSteps } from '../shared/http/http-test.js';
import { defineConnector, type SourceSupport } from '../types.js';
import { accept, apiUrl, readItems, type ApiAccess } from './items.js';

const configuration = z.strictObject({
  url: httpUrl.describe('Landing page of the API (the URL that lists /collections)'),
  api_key: secret('API key, sent in api_key_header'),
  api_key_header: headerName.default('X-API-Key').describe('Header that carries api_key (Authorization works too, with a value such as "Bearer …")'),
});
type OgcConfig = z.output<typeof configuration>;

const resource = z.strictObject({
  collection: z.string().min(1).max(255).describe('Collection id'),
  bbox: z.tuple([z.number(), z.number(), z.number(), z.number()]).optional().describe('[min_lon, min_lat, max_lon, max_lat] in CRS84'),
  datetime_property: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe("Property holding each feature's datetime, for incremental reads: the server's datetime filter must apply to it"),
  page_size: z.number().int().min(1).max(10_000).default(1000).describe('Features asked for per request (servers may send fewer)'),
});
type OgcResource = z.infer<typeof resource>;

/** What an incremental read remembers: the newest datetime read, of which property, and the ids read at it. */
interface OgcCursor {
  property: string;
  datetime: string | null;
  ids_at_datetime: string[];
}

function accessOf(config: OgcConfig): ApiAccess {
  const headers: Record<string, string> = {};
  if (config.api_key) headers[config.api_key_header] = config.api_key;
  return { url: config.url, headers, secretHeaders: config.api_key ? [config.api_key_header] : [] };
}

const source: SourceSupport<OgcResource, OgcConfig> = {
  resource,
  shorthand: 'collection',
  resourceRequired: true,
  importable: true,
  incremental: true,
  incrementalNote:
    'with datetime_property: each Run asks for datetime=<latest value seen>/.. and keeps the newest value it reads; a Run that finds nothing new is unchanged',
  async extract(config, selector, ctx, options) {
    const previous = (options.sync?.cursor ?? null) as OgcCursor | null;
    const property = selector.datetime_property;
    const since = property && previous?.property === property && previous.datetime ? { value: previous.datetime, ids: previous.ids_at_datetime ?? [] } : null;
    const filename = safeFilename(`${selector.collection}.geojson`);
    const file = path.join(ctx.workDir, filename);
    let read;
    try {
      read = await readItems(
        accessOf(config),
        { collection: selector.collection, bbox: selector.bbox, datetime: since ? `${since.value}/..` : undefined, pageSize: selector.page_size },
        file,
        ctx,
        property ? { property, since } : undefined,
      );
    } catch (error) {
      await rm(file, { force: true });
      throw error;
    }
    const sync = property
      ? { cursor: { property, datetime: read.latest?.value ?? null, ids_at_datetime: read.latest?.ids ?? [] } satisfies OgcCursor }
      : undefined;
    if (since && read.features === 0) {
      await rm(file, { force: true });
      return { file: '', filename: '', bytes: 0, features: 0, sync: sync!, unchanged: true };
    }
    return { file, filename, bytes: (await stat(file)).size, features: read.features, ...(sync ? { sync } : {}) };
  },
};

export const ogcfeatures = defineConnector({
  type: 'ogcfeatures',
  label: 'OGC API – Features',
  description: 'Collections of an OGC API – Features server (pygeoapi, GeoServer, ldproxy, …).',
  configuration,
  secrets: ['api_key'],
  example: { url: 'https://demo.pygeoapi.io/master' },
  implemented: true,
  verifiedAgainst: 'real server in npm test: pygeoapi 0.21 (PyPI) started by the tests, serving local files',
  notes: [
    "A read asks for `{url}/collections/{collection}/items` with `limit=page_size` (plus `bbox` and `datetime` when set) and `Accept: application/geo+json`, then follows each page's `next` link until a page has no `next` or no features. Features are written as they arrive into one GeoJSON file named after the collection (so the layer is named after it too); the upload size limit counts the bytes the server sends. Coordinates are the API's default, CRS84 (longitude, latitude).",
    '',
    "- **Why paged requests and not GDAL's OAPIF driver**: the driver takes HTTP headers only from process-wide GDAL settings, which another request could read, so an API key would not stay private; GDAL 3.6 also cannot send the `datetime` parameter that incremental reads need, nor stop at the size limit while reading.",
    '- **API key**: sent in `api_key_header` (default `X-API-Key`); `Authorization` with a value such as `Bearer …` works as well. It is never sent to another origin if the server redirects.',
    "- **Incremental reads** (Jobs, with `datetime_property`): the newest value of that property is kept, with the ids of the features that carry it (up to 1000); the next Run asks for `datetime=<that value>/..`, so the server must apply its `datetime` filter to the same property (pygeoapi: the provider's `time_field`). The interval includes its start, so the features already read at that instant come back and are left out by id; a feature added later with exactly that timestamp is still read. A Run that finds nothing new is unchanged and skips its later steps. Features without the property are always read. Without `datetime_property` every read is a full read.",
    '- **Connection test**: `GET {url}/collections`, which must answer JSON with a `collections` list.',
  ].join('\n'),
  async test(config, ctx) {
    const c = config;
    const access = accessOf(c);
    const collections = apiUrl(access, 'collections').toString();
    return testSteps({ url: publicUrl(c.url), api_key: Boolean(c.api_key) }, publicUrl(collections), async () => {
      const got = await fetchJson<{ collections?: { id?: string }[] }>(
        { url: collections, headers: { ...access.headers, ...accept }, secretHeaders: access.secretHeaders },
        ctx.signal,
        16 * 1024 * 1024,
      );
      if (!Array.isArray(got.json?.collections)) {
        throw new ConnectorError(
          'invalid_response',
          `${publicUrl(collections)} answered JSON without a collections list: is ${publicUrl(c.url)} the landing page of an OGC API?`,
          {},
          false,
        );
      }
      return `${publicUrl(c.url)} lists ${got.json.collections.length} collection(s)`;
    });
  },
  source,
});
