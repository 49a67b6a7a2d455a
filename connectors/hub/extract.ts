import path from 'node:path';
import { safeFilename } from '../../geo/datasets/dataset-files.js';
import { arcgis } from '../shared/arcgis/rest.js';
import { readLayer, type LayerInfo } from '../shared/arcgis/read-layer.js';
import { download } from '../shared/http/download.js';
import { ConnectorError } from '../../domain/transfers.js';
import type { ConnectorContext, ExtractOptions, ExtractResult } from '../types.js';
import {
  downloadHeaders,
  explainWithheld,
  getItem,
  isFeatureService,
  openPortal,
  searchItems,
  serviceAccess,
  type HubConfig,
  type Portal,
  type PortalItem,
} from './portal.js';

/*
 * A hub Source: one portal item, found by id or as the newest result of a search. A hosted
 * feature layer is read through its FeatureServer (shared/arcgis/read-layer.ts pages it); a file
 * item (GeoJSON, a zipped shapefile, CSV, GeoPackage …) is downloaded from content/items/{id}/data.
 */

export interface HubResource {
  item_id?: string | undefined;
  search?: string | undefined;
  layer?: number | undefined;
  where: string;
}

/** What a hub Source remembers between Runs: which item (and layer) it read, and when that last changed. */
interface HubCursor {
  item_id: string;
  layer: number | null;
  modified: number | null;
}

/** Extensions of the file item types GDAL reads, by portal item type. */
const fileTypes: Record<string, string> = {
  GeoJson: 'geojson',
  Shapefile: 'zip',
  CSV: 'csv',
  GeoPackage: 'gpkg',
  'File Geodatabase': 'zip',
  KML: 'kml',
  'Microsoft Excel': 'xlsx',
  GeoTIFF: 'tif',
  Image: 'tif',
};

export async function findItem(portal: Portal, resource: Pick<HubResource, 'item_id' | 'search'>, ctx: ConnectorContext): Promise<PortalItem> {
  if (resource.item_id) return getItem(portal, resource.item_id, ctx);
  const page = await searchItems(portal, resource.search!, ctx, { num: 1, sortField: 'modified', sortOrder: 'desc' });
  const item = page.results?.[0];
  if (!item)
    throw new ConnectorError('not_found', `no item of ${portal.label} matches the search ${JSON.stringify(resource.search)}`, { url: portal.label }, false);
  return item;
}

/**
 * Which item (and layer) a selector names now, and when its data last changed: a feature
 * layer's last edit date (edits do not change the item's modified date), a file item's
 * modified date. Metadata only; extract and the change check share it.
 */
async function locate(config: HubConfig, resource: HubResource, ctx: ConnectorContext) {
  const portal = await openPortal(config, ctx);
  const item = await findItem(portal, resource, ctx);
  if (isFeatureService(item)) {
    const access = await serviceAccess(portal, item, ctx);
    const layerId = resource.layer ?? 0;
    // Edits do not change the item's modified date; the layer's last edit date says when its data did.
    const info = (
      await explainWithheld(access, portal, () =>
        arcgis<LayerInfo & { editingInfo?: { lastEditDate?: number } }>(access, String(layerId), {}, ctx, 16 * 1024 * 1024),
      )
    ).json;
    const cursor: HubCursor = { item_id: item.id, layer: layerId, modified: info.editingInfo?.lastEditDate ?? item.modified ?? null };
    return { portal, item, cursor, layer: { access, id: layerId } };
  }
  const cursor: HubCursor = { item_id: item.id, layer: null, modified: item.modified ?? null };
  return { portal, item, cursor, layer: null };
}

/** The same item (and layer), with a known change date that has not moved. */
const sameAsBefore = (previous: HubCursor | null, cursor: HubCursor) =>
  previous !== null &&
  cursor.modified !== null &&
  previous.item_id === cursor.item_id &&
  previous.layer === cursor.layer &&
  previous.modified === cursor.modified;

/** On-change: whether the item's (or layer's) change date moved since the last Run, or another item is found now. */
export async function hubChanged(config: HubConfig, resource: HubResource, ctx: ConnectorContext, kept: unknown): Promise<boolean> {
  return !sameAsBefore((kept ?? null) as HubCursor | null, (await locate(config, resource, ctx)).cursor);
}

export async function extractHub(config: HubConfig, resource: HubResource, ctx: ConnectorContext, options: ExtractOptions): Promise<ExtractResult> {
  const { portal, item, cursor, layer } = await locate(config, resource, ctx);
  const previous = (options.sync?.cursor ?? null) as HubCursor | null;
  if (sameAsBefore(previous, cursor)) return { file: '', filename: '', bytes: 0, sync: { cursor: previous }, unchanged: true };
  if (layer) {
    const read = await explainWithheld(layer.access, portal, () => readLayer(layer.access, layer.id, resource.where, ctx));
    return { file: read.file, filename: read.filename, bytes: read.bytes, features: read.features, sync: { cursor } };
  }
  const extension = fileTypes[item.type];
  if (!extension) {
    throw new ConnectorError(
      'invalid_data',
      `item ${item.id} is a ${item.type}: a hub Source reads hosted feature layers and data files (${Object.keys(fileTypes).join(', ')})`,
      { item_id: item.id, type: item.type },
      false,
    );
  }
  const name = item.name && path.extname(item.name) ? item.name : `${item.title || item.id}.${extension}`;
  const got = await download(
    {
      url: `${portal.sharing}/content/items/${encodeURIComponent(item.id)}/data`,
      headers: downloadHeaders(portal),
      secretHeaders: ['x-esri-authorization'],
      filename: safeFilename(name),
    },
    ctx,
  );
  return { file: got.file!, filename: got.filename, bytes: got.bytes, sync: { cursor } };
}
