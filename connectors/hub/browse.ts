import { arcgis } from '../shared/arcgis/rest.js';
import { ConnectorError } from '../../domain/transfers.js';
import type { ConnectorContext } from '../types.js';
import {
  currentUser,
  explainWithheld,
  getItem,
  isFeatureService,
  openPortal,
  searchItems,
  serviceAccess,
  userFolders,
  type HubConfig,
  type PortalItem,
} from './portal.js';

/*
 * What the browser's pickers and the Python client list before choosing a Source's item or a
 * Destination's target: items found by a search, the signed-in user's folders, and the layers
 * of a feature layer item. Secret-free: items as the portal describes them, without tokens.
 */

export interface HubItemSummary {
  id: string;
  title: string;
  type: string;
  owner: string | null;
  url: string | null;
  tags: string[];
  access: string | null;
  modified: string | null;
}

/** An item as listed: what the portal said, each field of the type it must have (a portal may leave any out). */
const text = (v: unknown) => (typeof v === 'string' ? v : null);
const summary = (i: PortalItem): HubItemSummary => ({
  id: i.id,
  title: text(i.title) ?? '',
  type: text(i.type) ?? '',
  owner: text(i.owner),
  url: text(i.url),
  tags: Array.isArray(i.tags) ? i.tags.filter((t): t is string => typeof t === 'string') : [],
  access: text(i.access),
  modified: typeof i.modified === 'number' && Number.isFinite(new Date(i.modified).getTime()) ? new Date(i.modified).toISOString() : null,
});
/** Items without an id cannot be chosen: they are left out. */
const listable = (i: unknown): i is PortalItem => typeof (i as PortalItem | null)?.id === 'string';

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
    items: (Array.isArray(page.results) ? page.results : []).filter(listable).map(summary),
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
  const access = await serviceAccess(portal, item, ctx);
  const { json } = await explainWithheld(access, portal, () => arcgis<{ layers?: unknown; tables?: unknown }>(access, '', {}, ctx, 16 * 1024 * 1024));
  const entries = (v: unknown) =>
    (Array.isArray(v) ? v : []).filter(
      (l): l is { id: number; name: string; geometryType?: unknown } => typeof l?.id === 'number' && typeof l?.name === 'string',
    );
  return {
    item: summary(item),
    layers: [
      ...entries(json.layers).map((l) => ({ id: l.id, name: l.name, kind: 'layer' as const, geometry_type: text(l.geometryType) })),
      ...entries(json.tables).map((t) => ({ id: t.id, name: t.name, kind: 'table' as const, geometry_type: null })),
    ],
  };
}
