import { ConnectorError } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import type { ConnectorContext } from '../types.js';
import { apiGet, apiUrl, pageUrl, type Dataset, type GeonodeAccess } from './api.js';

/* The browse helper of a GeoNode connection: its datasets, searched and paged by GeoNode itself. */

export interface DatasetQuery {
  search?: string;
  page: number;
  page_size: number;
}

export async function listDatasets(access: GeonodeAccess, query: DatasetQuery, ctx: ConnectorContext) {
  const params: Record<string, string> = { page: String(query.page), page_size: String(query.page_size) };
  if (query.search) params.search = query.search;
  const got = await apiGet<{ datasets?: Dataset[]; total?: number }>(access, ['datasets'], ctx, params).catch((error: unknown) => {
    // GeoNode (Django REST framework) answers a page past the end with 404 "Invalid page."
    if (query.page > 1 && error instanceof ConnectorError && error.reason === 'not_found') return { datasets: [] as Dataset[], total: undefined };
    throw error;
  });
  if (!Array.isArray(got.datasets)) {
    throw new ConnectorError(
      'invalid_response',
      `${publicUrl(apiUrl(access, ['datasets']))} answered without a datasets list: is ${publicUrl(access.base)} a GeoNode 4 or newer?`,
      {},
      false,
    );
  }
  return {
    items: got.datasets.map((d) => ({
      id: String(d.pk),
      name: d.name ?? null,
      alternate: d.alternate ?? null,
      title: d.title ?? null,
      page_url: pageUrl(access, d),
    })),
    total: typeof got.total === 'number' ? got.total : null,
    page: query.page,
    page_size: query.page_size,
  };
}
