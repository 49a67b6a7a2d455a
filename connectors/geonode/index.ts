import { z } from 'zod';
import { download } from '../shared/http/download.js';
import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import { httpUrl, secret, username } from '../shared/fields.js';
import { testSteps } from '../shared/http/http-test.js';
import { defineConnector, type DestinationSupport, type SourceSupport } from '../types.js';
import { accessOf, apiGet, apiUrl, findDataset, type Dataset, type Link } from './api.js';
import { uploadDataset } from './upload.js';

const configuration = z.strictObject({
  url: httpUrl.describe('GeoNode base URL'),
  username: username.optional(),
  password: secret('Password'),
  api_key: secret('API key (an OAuth2 access token, sent as Bearer; used instead of user name and password)'),
});
type GeonodeConfig = z.infer<typeof configuration>;

const resource = z.strictObject({
  dataset: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[^\u0000\s]+$/, 'an id, a name or an alternate name (workspace:name)')
    .describe('Dataset id, name or alternate name (geonode:name)'),
});
type GeonodeResource = z.infer<typeof resource>;

const target = z.strictObject({
  dataset: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[^\u0000\s]+$/)
    .optional()
    .describe('Replace the data of this dataset (id, name or alternate); absent: upload a new dataset'),
  title: z.string().min(1).max(255).describe('Title of the dataset'),
  abstract: z.string().min(1).max(4000).optional().describe('Abstract of the dataset'),
});

/** What a read downloads, best first: a GeoPackage, GeoJSON, a zipped shapefile or CSV among the data links, else download_url. */
const preference = ['gpkg', 'geojson', 'json', 'zip', 'shp', 'csv'];

export function dataLinkOf(d: Dataset): { url: string; extension: string | null } | null {
  const links = (d.links ?? []).filter((l): l is Link & { url: string } => l.link_type === 'data' && typeof l.url === 'string');
  for (const ext of preference) {
    const l = links.find((x) => (x.extension ?? '').toLowerCase() === ext);
    if (l) return { url: l.url, extension: ext === 'shp' ? 'zip' : ext === 'json' ? 'geojson' : ext };
  }
  return d.download_url ? { url: d.download_url, extension: null } : null;
}

const source: SourceSupport<GeonodeResource, GeonodeConfig> = {
  resource,
  shorthand: 'dataset',
  resourceRequired: true,
  importable: true,
  incremental: false,
  async extract(config, selector, ctx) {
    const access = accessOf(config);
    const dataset = await findDataset(access, selector.dataset, ctx);
    if (!dataset)
      throw new ConnectorError(
        'not_found',
        `GeoNode at ${publicUrl(config.url)} has no dataset ${selector.dataset} (or the connection's user may not see it)`,
        { dataset: selector.dataset },
        false,
      );
    const link = dataLinkOf(dataset);
    if (!link)
      throw new ConnectorError(
        'not_found',
        `Dataset ${selector.dataset} at ${publicUrl(config.url)} advertises no download or data link`,
        { dataset: selector.dataset },
        false,
      );
    const url = new URL(link.url, `${access.base}/`).toString();
    const base = (dataset.name ?? `dataset_${dataset.pk}`).replace(/[^A-Za-z0-9_.-]/g, '_');
    const got = await download(
      { url, headers: access.headers, label: publicUrl(url), ...(link.extension ? { filename: `${base}.${link.extension}` } : {}) },
      ctx,
    );
    return { file: got.file!, filename: got.filename, bytes: got.bytes };
  },
};

const destination: DestinationSupport<z.infer<typeof target>, GeonodeConfig> = {
  target,
  deliverable: true,
  deliver: (config, t, input, ctx) => uploadDataset(accessOf(config), t, input, ctx),
};

export const geonode = defineConnector({
  type: 'geonode',
  label: 'GeoNode',
  description: 'Datasets of a GeoNode portal: read and uploaded through its API.',
  configuration,
  secrets: ['password', 'api_key'],
  example: { url: 'https://geonode.example.org', username: 'editor', api_key: '…' },
  implemented: true,
  verifiedAgainst:
    "stand-in checked with the vendor's client: a stand-in for GeoNode's REST API v2 (datasets, uploads, execution requests) written from GeoNode's API reference and code (test/servers/geonode), checked in the suite with the geonodectl 0.3 client library (PyPI, GeoNode API v2): the real GeoNode needs a GeoServer, which cannot run here",
  notes: [
    '**Test**: `GET {url}/api/v2/datasets?page_size=1` with the credentials (an API key as `Authorization: Bearer`, else user name and password as Basic): `authentication_failed` (401), `permission_denied` (403), `not_found` (no API v2 at that URL), `unreachable`, `timeout`.',
    '',
    '**Import / Source** (`source_resource`): `{"dataset": "42"}` (an id), `{"dataset": "boroughs"}` (a name) or `{"dataset": "geonode:boroughs"}` (an alternate name); the string alone means that. The dataset is looked up through `/api/v2/datasets` and read through what it advertises: a `links` entry of `link_type` `data` (GeoPackage, GeoJSON, zipped shapefile, CSV, in that order of preference), else its `download_url` (GeoNode\'s default download, a zipped shapefile). The download is streamed with the size limit; the credentials go along only to the portal\'s own origin.',
    '',
    '**Deliver** (`destination_target`): `{"title": "NYC boroughs", "abstract": "…"}` uploads the output as a new dataset; `{"dataset": "42", "title": …}` replaces that dataset\'s data. The output (one layer) is written as a GeoPackage and posted to `/api/v2/uploads/upload` (`action=replace` and `resource_pk` for a replace); GeoNode imports it asynchronously, so its execution request (`/api/v2/executionrequest/{id}`) is polled every second until `finished` (a `failed` import is `invalid_data`, with GeoNode\'s log). Then `PATCH /api/v2/datasets/{id}` sets title and abstract. The result carries `dataset_id`, the alternate `name` and `page_url` (the dataset\'s page). A new dataset\'s file is named after the title and the delivery id, so a retried delivery finds the dataset of its first attempt by name instead of uploading twice.',
    '',
    "**Browse**: `GET /api/v1/sources/{id}/geonode/datasets?search=…&page=1&page_size=20` (and under `/destinations/{id}`): GeoNode's own search and paging.",
  ].join('\n'),
  test(c, ctx) {
    const access = accessOf(c);
    const url = apiUrl(access, ['datasets']);
    return testSteps({ url: publicUrl(c.url), username: c.username ?? null, api_key: Boolean(c.api_key) }, publicUrl(url), async () => {
      const got = await apiGet<{ datasets?: unknown[]; total?: number }>(access, ['datasets'], ctx, { page_size: '1' });
      if (!Array.isArray(got.datasets))
        throw new ConnectorError(
          'invalid_response',
          `${publicUrl(url)} answered JSON without a datasets list: is ${publicUrl(c.url)} a GeoNode 4 or newer?`,
          {},
          false,
        );
      const who = c.api_key ? 'with the API key' : c.username ? `as ${c.username}` : 'anonymously';
      return `GeoNode at ${publicUrl(c.url)} lists ${typeof got.total === 'number' ? got.total : got.datasets.length} dataset(s) ${who}`;
    });
  },
  source,
  destination,
});
