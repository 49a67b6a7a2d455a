import type { z } from 'zod';
import { download } from '../shared/http/download.js';
import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import { testSteps } from '../shared/http/http-test.js';
import { accessOf, apiGet, apiUrl, findDataset, type Dataset, type Link } from './api.js';
import { uploadDataset } from './upload.js';
import { type configuration, type resource, type target, geonodeDeclaration } from './declaration.js';
import { defineConnector, type DestinationBehaviour, type SourceBehaviour } from '../types.js';

type GeonodeConfig = z.infer<typeof configuration>;

type GeonodeResource = z.infer<typeof resource>;

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

const source = {
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
} satisfies SourceBehaviour<GeonodeResource, GeonodeConfig>;

const destination = {
  deliver: (config, t, input, ctx) => uploadDataset(accessOf(config), t, input, ctx),
} satisfies DestinationBehaviour<z.infer<typeof target>, GeonodeConfig>;

export const geonode = defineConnector(geonodeDeclaration, {
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
