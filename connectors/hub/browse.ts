import { arcgis } from '../featureserver/rest.js';
import { ConnectorError } from '../../domain/transfers.js';
import type { ConnectorContext } from '../types.js';
import { currentUser, getItem, isFeatureService, openPortal, searchItems, serviceUrlOf, userFolders, type HubConfig, type PortalItem } from './portal.js';

/*
 * What the browser's pickers and the Python client list before choosing a Source's item or a
 * Destination's target: items found by a search, the signed-in user's folders, and the layers
 * of a feature layer item. Secret-free: items as the portal describes them, without tokens.
 */

export interface HubItemSummary {
  id: string;
  title: string;
  type: string;
  owner: string;
  url: string | null;
  tags: string[];
  access: string | null;
  modified: string | null;
}

const summary = (i: PortalItem): HubItemSummary => ({
  id: i.id,
  title: i.title,
  type: i.type,
  owner: i.owner,
  url: i.url ?? null,
  tags: i.tags ?? [],
  access: i.access ?? null,
  modified: typeof i.modified === 'number' ? new Date(i.modified).toISOString() : null,
});

export async function browseItems(
  config: HubConfig,
  query: { q?: string | undefined; start: number; num: number; owner_only: boolean },
  ctx: ConnectorContext,
) {
  const portal = await openPortal(config, ctx);
  const parts = [query.q?.trim() || ''];
  if (query.owner_only) parts.push(`owner:${await currentUser(portal, ctx)}`);
  const q = parts.filter(Boolean).join(' AND ') || '*';
  const page = await searchItems(portal, q, ctx, { start: query.start, num: query.num, sortField: 'modified', sortOrder: 'desc' });
  return {
    portal: portal.label,
    query: q,
    total: page.total ?? 0,
    start: page.start ?? query.start,
    next_start: page.nextStart > 0 ? page.nextStart : null,
    items: (page.results ?? []).map(summary),
  };
}

export async function browseFolders(config: HubConfig, ctx: ConnectorContext) {
  const portal = await openPortal(config, ctx);
  const user = await currentUser(portal, ctx);
  return { portal: portal.label, username: user, folders: await userFolders(portal, user, ctx) };
}

export async function browseLayers(config: HubConfig, itemId: string, ctx: ConnectorContext) {
  const portal = await openPortal(config, ctx);
  const item = await getItem(portal, itemId, ctx);
  if (!isFeatureService(item)) {
    throw new ConnectorError(
      'invalid_data',
      `item ${item.id} is a ${item.type}: only feature layer items have layers`,
      { item_id: item.id, type: item.type },
      false,
    );
  }
  const access = { service: serviceUrlOf(item), ...(portal.token ? { token: portal.token } : {}) };
  const { json } = await arcgis<{ layers?: { id: number; name: string; geometryType?: string }[]; tables?: { id: number; name: string }[] }>(
    access,
    '',
    {},
    ctx,
    16 * 1024 * 1024,
  );
  return {
    item: summary(item),
    layers: [
      ...(json.layers ?? []).map((l) => ({ id: l.id, name: l.name, kind: 'layer' as const, geometry_type: l.geometryType ?? null })),
      ...(json.tables ?? []).map((t) => ({ id: t.id, name: t.name, kind: 'table' as const, geometry_type: null })),
    ],
  };
}
