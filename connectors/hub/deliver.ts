import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { arcgis } from '../shared/arcgis/rest.js';
import { ConnectorError, type DeliveryResult } from '../../domain/transfers.js';
import { runOgr2ogr, transferFailure } from '../shared/files/ogr2ogr.js';
import { vectorInput, type VectorInput } from '../shared/files/vector-input.js';
import type { ConnectorContext, DeliverInput } from '../types.js';
import { toEsriGeometry, type GeoJsonGeometry } from './esri-json.js';
import {
  currentUser,
  explainWithheld,
  getItem,
  isFeatureService,
  openPortal,
  portalCall,
  searchItems,
  serviceAccess,
  userFolders,
  type HubConfig,
  type Portal,
  type PortalItem,
} from './portal.js';

/*
 * A hub Destination: a hosted feature layer. A new one is created from the output (addItem of a
 * GeoJSON file, publish, share); an existing one is updated in place through its FeatureServer's
 * applyEdits, in one request with rollbackOnFailure, which the service applies as one edit
 * transaction: `replace` deletes the old features and adds the new ones in that same request,
 * so a reader sees the old rows or the new ones, never an empty layer.
 */

export interface HubTarget {
  item_id?: string | undefined;
  title?: string | undefined;
  tags: string[];
  folder?: string | undefined;
  sharing?: 'private' | 'org' | 'public' | undefined;
  layer: number;
  write_mode: 'replace' | 'append' | 'create';
}

interface LayerDescription {
  name?: string;
  type?: string;
  geometryType?: string;
  objectIdField?: string;
  spatialReference?: { wkid?: number; latestWkid?: number };
  fields?: { name: string; type: string; editable?: boolean }[];
}

interface EditResult {
  objectId?: number;
  success: boolean;
  error?: { code?: number; description?: string };
}

const PUBLISH_WAIT_MS = 10 * 60_000;
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

/** The output as GeoJSON features in `srs` (an EPSG code), or WGS 84 by RFC 7946 when `srs` is null. */
async function outputFeatures(
  layer: VectorInput,
  srs: string | null,
  ctx: ConnectorContext,
  name: string,
): Promise<{ file: string; features: { properties: Record<string, unknown>; geometry: GeoJsonGeometry | null }[] }> {
  const file = path.join(ctx.workDir, `${name}.geojson`);
  const noGeometry = layer.base === 100;
  await runOgr2ogr(
    {
      args: [
        '-f',
        'GeoJSON',
        file,
        layer.ref.path,
        layer.layer,
        ...layer.ref.openOptions.flatMap((o) => ['-oo', o]),
        ...(layer.ref.assumedCrs && layer.epsg === null ? ['-s_srs', layer.ref.assumedCrs] : []),
        ...(noGeometry ? [] : srs ? ['-t_srs', srs, '-lco', 'RFC7946=NO'] : ['-lco', 'RFC7946=YES']),
        '-dim',
        'XY',
        '-lco',
        'WRITE_NAME=NO',
      ],
      label: 'Preparing the features for the portal',
    },
    ctx,
    transferFailure([], 'Preparing the features for the portal', {}),
  );
  const json = JSON.parse(await readFile(file, 'utf8')) as { features: { properties: Record<string, unknown> | null; geometry: GeoJsonGeometry | null }[] };
  return { file, features: json.features.map((f) => ({ properties: f.properties ?? {}, geometry: f.geometry })) };
}

/** The layer's SRS as an EPSG code GDAL knows (Web Mercator's Esri code 102100 is EPSG:3857). */
function srsOf(info: LayerDescription): string | null {
  const wkid = info.spatialReference?.latestWkid ?? info.spatialReference?.wkid;
  if (!wkid) return null;
  return `EPSG:${wkid === 102100 || wkid === 102113 ? 3857 : wkid}`;
}

/** The service's own fields that edits may not set. */
const systemField = (name: string, info: LayerDescription) =>
  name === info.objectIdField || /^(globalid|shape__area|shape__length|shape_area|shape_length|objectid|fid)$/i.test(name);

/** Output rows as applyEdits adds: attributes under the layer's own field names (case-insensitive match). */
function addsFor(features: Awaited<ReturnType<typeof outputFeatures>>['features'], info: LayerDescription, title: string) {
  const byLower = new Map((info.fields ?? []).filter((f) => !systemField(f.name, info) && f.editable !== false).map((f) => [f.name.toLowerCase(), f.name]));
  const unknown = new Set<string>();
  const adds = features.map((f) => {
    const attributes: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(f.properties)) {
      const name = byLower.get(k.toLowerCase());
      if (name) attributes[name] = v;
      else if (!systemField(k, info)) unknown.add(k);
    }
    let geometry;
    try {
      geometry = toEsriGeometry(f.geometry);
    } catch (error) {
      throw new ConnectorError('invalid_data', `${title}: ${(error as Error).message}`, {}, false);
    }
    return geometry ? { attributes, geometry } : { attributes };
  });
  if (unknown.size) {
    throw new ConnectorError(
      'invalid_data',
      `${title} has no field ${[...unknown].map((n) => `"${n}"`).join(', ')}: deliver the layer's own fields (rename or drop the others), or publish a new layer`,
      { fields: [...unknown] },
      false,
    );
  }
  return adds;
}

function failedEdits(results: EditResult[] | undefined, what: string, title: string): void {
  const failed = (results ?? []).filter((r) => !r.success);
  if (failed.length) {
    const first = failed[0]!.error;
    throw new ConnectorError(
      'invalid_data',
      `${title}: ${failed.length} ${what} refused (${first?.code ?? '?'}: ${String(first?.description ?? 'no reason given').slice(0, 200)}); nothing was changed`,
      { refused: failed.length },
      false,
    );
  }
}

/** replace / append into an existing hosted feature layer, in one applyEdits request. */
async function updateLayer(item: PortalItem, portal: Portal, target: HubTarget, input: DeliverInput, ctx: ConnectorContext): Promise<number> {
  const access = await serviceAccess(portal, item, ctx);
  const title = `layer ${target.layer} of "${item.title}" (${item.id})`;
  const info = (await explainWithheld(access, portal, () => arcgis<LayerDescription>(access, String(target.layer), {}, ctx, 16 * 1024 * 1024))).json;
  const layer = await vectorInput(input, ctx.workDir);
  const { features } = await outputFeatures(layer, info.geometryType ? srsOf(info) : null, ctx, 'edits');
  const adds = addsFor(features, info, title);
  let deletes: number[] = [];
  if (target.write_mode === 'replace') {
    const ids = (
      await explainWithheld(access, portal, () =>
        arcgis<{ objectIds?: number[] | null }>(access, `${target.layer}/query`, { where: '1=1', returnIdsOnly: 'true' }, ctx, 256 * 1024 * 1024),
      )
    ).json;
    deletes = ids.objectIds ?? [];
  }
  const params: Record<string, string> = { adds: JSON.stringify(adds), rollbackOnFailure: 'true' };
  if (deletes.length) params.deletes = deletes.join(',');
  const { json } = await explainWithheld(access, portal, () =>
    arcgis<{ addResults?: EditResult[]; deleteResults?: EditResult[] }>(access, `${target.layer}/applyEdits`, params, ctx, 256 * 1024 * 1024),
  );
  failedEdits(json.addResults, 'added features were', title);
  failedEdits(json.deleteResults, 'deletes were', title);
  return adds.length;
}

/** A name a new service may take: the title's letters, digits and underscores, free in the organisation. */
async function serviceName(portal: Portal, title: string, ctx: ConnectorContext): Promise<string> {
  let base =
    title
      .normalize('NFKD')
      .replace(/[^\w]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 80) || 'layer';
  if (/^\d/.test(base)) base = `l_${base}`;
  for (let n = 1; n <= 20; n++) {
    const name = n === 1 ? base : `${base}_${n}`;
    const { json } = await portalCall<{ available?: boolean }>(portal, 'portals/self/isServiceNameAvailable', { name, type: 'Feature Service' }, ctx);
    if (json.available) return name;
  }
  throw new ConnectorError('target_exists', `no free service name for "${title}" (${base}, ${base}_2 … are taken)`, { title }, false);
}

async function folderId(portal: Portal, owner: string, title: string | undefined, ctx: ConnectorContext): Promise<string | null> {
  if (!title) return null;
  const found = (await userFolders(portal, owner, ctx)).find((f) => f.title === title || f.id === title);
  if (found) return found.id;
  const { json } = await portalCall<{ folder?: { id: string } }>(portal, `content/users/${encodeURIComponent(owner)}/createFolder`, { title }, ctx);
  if (!json.folder?.id) throw new ConnectorError('invalid_response', `${portal.label} answered createFolder without a folder id`, {}, false);
  return json.folder.id;
}

async function share(portal: Portal, owner: string, itemId: string, sharing: HubTarget['sharing'], ctx: ConnectorContext): Promise<void> {
  if (!sharing) return;
  await portalCall(
    portal,
    `content/users/${encodeURIComponent(owner)}/items/${encodeURIComponent(itemId)}/share`,
    {
      everyone: String(sharing === 'public'),
      org: String(sharing === 'org' || sharing === 'public'),
      ...(sharing === 'private' ? { groups: '' } : {}),
    },
    ctx,
  );
}

/** addItem (the output as a GeoJSON file item) + publish, then waits until the service is ready. */
async function publishLayer(
  portal: Portal,
  owner: string,
  target: HubTarget,
  input: DeliverInput,
  ctx: ConnectorContext,
): Promise<{ item: PortalItem; rows: number }> {
  const title = target.title!;
  const layer = await vectorInput(input, ctx.workDir);
  const { file, features } = await outputFeatures(layer, null, ctx, 'publish');
  const folder = await folderId(portal, owner, target.folder, ctx);
  const userPath = `content/users/${encodeURIComponent(owner)}`;
  const added = (
    await portalCall<{ success?: boolean; id?: string }>(
      portal,
      `${userPath}${folder ? `/${encodeURIComponent(folder)}` : ''}/addItem`,
      {
        type: 'GeoJson',
        title,
        tags: target.tags.join(','),
        typeKeywords: 'geoflow',
        filename: `${layer.layer}.geojson`,
      },
      ctx,
      [{ field: 'file', name: `${layer.layer}.geojson`, data: new Blob([await readFile(file)], { type: 'application/geo+json' }) }],
    )
  ).json;
  if (!added.id) throw new ConnectorError('invalid_response', `${portal.label} answered addItem without an item id`, {}, false);
  const name = await serviceName(portal, title, ctx);
  const published = (
    await portalCall<{ services?: { serviceItemId?: string; serviceurl?: string; jobId?: string; success?: boolean; error?: { message?: string } }[] }>(
      portal,
      `${userPath}/publish`,
      {
        itemId: added.id,
        filetype: 'geojson',
        publishParameters: JSON.stringify({ name, maxRecordCount: 2000, layerInfo: { capabilities: 'Query,Editing,Create,Update,Delete' } }),
      },
      ctx,
    )
  ).json;
  const service = published.services?.[0];
  if (!service?.serviceItemId) {
    throw new ConnectorError(
      'invalid_data',
      `${portal.label} could not publish "${title}": ${String(service?.error?.message ?? 'no service item in the answer').slice(0, 200)}`,
      { item_id: added.id },
      false,
    );
  }
  // Publishing runs as a job on the portal: wait until it says completed.
  const deadline = Date.now() + PUBLISH_WAIT_MS;
  for (let poll = 0; ; poll++) {
    const status = (
      await portalCall<{ status?: string; statusMessage?: string }>(
        portal,
        `${userPath}/items/${encodeURIComponent(service.serviceItemId)}/status`,
        {
          ...(service.jobId ? { jobId: service.jobId } : {}),
          jobType: 'publish',
        },
        ctx,
      )
    ).json;
    if (status.status === 'completed') break;
    if (status.status === 'failed')
      throw new ConnectorError(
        'invalid_data',
        `${portal.label} failed to publish "${title}": ${String(status.statusMessage ?? '').slice(0, 200)}`,
        { item_id: service.serviceItemId },
        false,
      );
    if (Date.now() > deadline || ctx.signal.aborted)
      throw new ConnectorError('timeout', `${portal.label} was still publishing "${title}" after ${PUBLISH_WAIT_MS / 60_000} minutes`, {
        item_id: service.serviceItemId,
      });
    await sleep(Math.min(250 * 2 ** poll, 5000), ctx.signal);
  }
  await share(portal, owner, service.serviceItemId, target.sharing, ctx);
  return { item: await getItem(portal, service.serviceItemId, ctx), rows: features.length };
}

/** An existing hosted feature layer the target names: by item_id, else the owner's Feature Service of that exact title. */
async function existing(portal: Portal, owner: string, target: HubTarget, ctx: ConnectorContext): Promise<PortalItem | null> {
  if (target.item_id) {
    const item = await getItem(portal, target.item_id, ctx);
    if (!isFeatureService(item))
      throw new ConnectorError('invalid_data', `item ${item.id} is a ${item.type}, not a hosted feature layer`, { item_id: item.id }, false);
    return item;
  }
  const quoted = target.title!.replace(/["\\]/g, ' ');
  const page = await searchItems(portal, `title:"${quoted}" AND owner:${owner} AND type:"Feature Service"`, ctx, { num: 100 });
  return page.results.find((i) => i.title === target.title && isFeatureService(i)) ?? null;
}

export async function deliverHub(config: HubConfig, target: HubTarget, input: DeliverInput, ctx: ConnectorContext): Promise<DeliveryResult> {
  const portal = await openPortal(config, ctx);
  const owner = await currentUser(portal, ctx);
  const found = await existing(portal, owner, target, ctx);
  const described = (item: PortalItem, rows: number, created: boolean): DeliveryResult => ({
    target: { portal: portal.label, item_id: item.id, title: item.title, url: item.url ?? null, layer: target.layer, write_mode: target.write_mode, created },
    rows_written: rows,
  });
  if (found) {
    if (target.write_mode === 'create') {
      throw new ConnectorError(
        'target_exists',
        `"${found.title}" (${found.id}) already exists on ${portal.label} (write_mode create never overwrites)`,
        { item_id: found.id },
        false,
      );
    }
    const rows = await updateLayer(found, portal, target, input, ctx);
    await share(portal, found.owner ?? owner, found.id, target.sharing, ctx);
    return described(found, rows, false);
  }
  if (!target.title) throw new ConnectorError('not_found', `item ${target.item_id} was not found`, {}, false);
  const { item, rows } = await publishLayer(portal, owner, target, input, ctx);
  return described(item, rows, true);
}
