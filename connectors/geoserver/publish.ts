import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { ConnectorError, type DeliveryResult } from '../../domain/transfers.js';
import { publicUrl } from '../shared/http/fetch.js';
import { runOgr2ogr, transferFailure } from '../shared/files/ogr2ogr.js';
import { vectorInput } from '../shared/files/vector-input.js';
import type { ConnectorContext, DeliverInput } from '../types.js';
import { restGet, restSend, wrapped, type GeoserverAccess } from './rest.js';

/*
 * Publishing a converted output as a GeoServer layer through the REST API. The output is written
 * as a GeoPackage whose one table has the layer's native name and uploaded into a GeoPackage
 * data store of the workspace (PUT …/datastores/{store}/file.gpkg).
 *
 * create: a new store and a new feature type (the layer); an existing layer is target_exists.
 * replace of an existing layer: the new GeoPackage is uploaded into a staging store of its own,
 * then the layer's store is pointed at that file with one PUT of its connection parameters, so
 * the layer is in the catalogue the whole time and serves the old data until GeoServer reopens
 * the store on the new file. The staging store entry is removed (its file stays: it is now the
 * layer's), and the old file is deleted through the resource API.
 *
 * Idempotent per delivery: the uploaded file is named after the delivery id, so a retried
 * delivery sees that the store already points at its file and only rewrites the metadata.
 */

export interface GeoserverTarget {
  workspace?: string;
  store?: string;
  layer: string;
  write_mode: 'replace' | 'create';
  title?: string;
  abstract?: string;
  style?: string;
}

interface Entry {
  '@key': string;
  $: string;
}

interface DataStore {
  name: string;
  type?: string;
  connectionParameters?: { entry?: Entry[] | Entry };
}

interface Layer {
  name: string;
  resource?: { name?: string; href?: string };
}

interface FeatureType {
  name: string;
  nativeName?: string;
}

const entries = (store: DataStore): Entry[] => {
  const e = store.connectionParameters?.entry;
  return Array.isArray(e) ? e : e ? [e] : [];
};
export const databaseOf = (store: DataStore) => entries(store).find((e) => e['@key'] === 'database')?.$ ?? null;

/** The store a layer's feature type belongs to, from its resource link (…/datastores/{store}/featuretypes/{name}.json). */
export const storeOfLayer = (layer: Layer) => {
  const m = /\/datastores\/([^/]+)\/featuretypes\//.exec(layer.resource?.href ?? '');
  return m ? decodeURIComponent(m[1]!) : null;
};

/** Twelve hex digits of the delivery id: short enough for a file name, unique per delivery. */
const tagOf = (deliveryId: string) => createHash('sha256').update(deliveryId).digest('hex').slice(0, 12);

/** The data-directory path of a file a REST upload put there (`file:data/ws/store/x.gpkg`), for the resource API; null for files elsewhere. */
export function uploadedResourcePath(database: string | null): string[] | null {
  const m = /^(?:file:)?(data\/.+\.gpkg)$/.exec(database ?? '');
  if (!m || m[1]!.split('/').includes('..')) return null;
  return m[1]!.split('/');
}

async function writeGeopackage(input: DeliverInput, nativeName: string, ctx: ConnectorContext): Promise<{ file: string; features: number | null }> {
  const layer = await vectorInput(input, ctx.workDir);
  const file = path.join(ctx.workDir, `${nativeName.replace(/[^A-Za-z0-9_.-]/g, '_')}.gpkg`);
  await runOgr2ogr(
    {
      args: [
        '-f',
        'GPKG',
        file,
        layer.ref.path,
        layer.layer,
        ...layer.ref.openOptions.flatMap((o) => ['-oo', o]),
        '-nln',
        nativeName,
        '-nlt',
        layer.nlt,
        '-lco',
        'GEOMETRY_NAME=geom',
      ],
      label: `writing ${nativeName} as a GeoPackage`,
    },
    ctx,
    transferFailure([], `Writing the output as a GeoPackage for GeoServer`, {}),
  );
  return { file, features: layer.features };
}

/** Uploads a GeoPackage as the file of store `store` (made if missing, its feature types not configured), stored as <fileName>.gpkg. */
async function uploadGeopackage(
  access: GeoserverAccess,
  workspace: string,
  store: string,
  file: string,
  fileName: string,
  ctx: ConnectorContext,
): Promise<void> {
  await restSend(
    access,
    'PUT',
    ['workspaces', workspace, 'datastores', store, 'file.gpkg'],
    ctx,
    { bytes: await readFile(file), contentType: 'application/x-sqlite3' },
    { configure: 'none', filename: `${fileName}.gpkg` },
  );
}

export async function publishLayer(
  access: GeoserverAccess,
  workspace: string,
  target: GeoserverTarget,
  input: DeliverInput,
  ctx: ConnectorContext,
): Promise<DeliveryResult> {
  const store = target.store ?? target.layer;
  const where = `${workspace}:${target.layer} at ${publicUrl(access.base)}`;
  if (!(await restGet(access, ['workspaces', `${workspace}.json`], ctx))) {
    throw new ConnectorError(
      'not_found',
      `GeoServer at ${publicUrl(access.base)} has no workspace ${workspace}: create it first (or name another in destination_target.workspace)`,
      { workspace },
      false,
    );
  }
  const tag = tagOf(input.deliveryId);
  const fileName = `${store}_${tag}`;
  const layerBody = await restGet<unknown>(access, ['workspaces', workspace, 'layers', `${target.layer}.json`], ctx);
  const existing = layerBody ? wrapped<Layer>(layerBody, 'layer', where) : null;
  const storeBody = await restGet<unknown>(access, ['workspaces', workspace, 'datastores', `${store}.json`], ctx);
  const existingStore = storeBody ? wrapped<DataStore>(storeBody, 'dataStore', `store ${workspace}:${store}`) : null;
  const ours = (s: DataStore | null) => Boolean(s && databaseOf(s)?.includes(`${fileName}.gpkg`));

  let features: number | null = null;
  if (!existing) {
    if (existingStore && !ours(existingStore)) {
      throw new ConnectorError(
        'target_exists',
        `Store ${workspace}:${store} already exists and does not hold layer ${target.layer}: name a new store (destination_target.store), or the layer's own store`,
        { workspace, store },
        false,
      );
    }
    const gpkg = await writeGeopackage(input, target.layer, ctx);
    features = gpkg.features;
    if (!existingStore) {
      await uploadGeopackage(access, workspace, store, gpkg.file, fileName, ctx);
    }
    try {
      await restSend(access, 'POST', ['workspaces', workspace, 'datastores', store, 'featuretypes'], ctx, {
        json: {
          featureType: {
            name: target.layer,
            nativeName: target.layer,
            title: target.title ?? target.layer,
            ...(target.abstract ? { abstract: target.abstract } : {}),
            enabled: true,
          },
        },
      });
    } catch (error) {
      // Nothing half-published: the store this delivery made goes again, with its file.
      if (!(error instanceof ConnectorError && error.retryable)) {
        await restSend(access, 'DELETE', ['workspaces', workspace, 'datastores', store], ctx, undefined, { recurse: 'true', purge: 'all' }).catch(
          () => undefined,
        );
      }
      throw error;
    }
  } else {
    if (target.write_mode === 'create') {
      throw new ConnectorError('target_exists', `Layer ${where} already exists (write_mode create)`, { workspace, layer: target.layer }, false);
    }
    const layerStore = storeOfLayer(existing);
    if (layerStore !== store || !existingStore) {
      throw new ConnectorError(
        'target_exists',
        `Layer ${where} is published from store ${layerStore ?? '(unknown)'}, not ${store}: name its store in destination_target.store`,
        { workspace, layer: target.layer, store: layerStore },
        false,
      );
    }
    if (existingStore.type && !/geopackage/i.test(existingStore.type)) {
      throw new ConnectorError(
        'invalid_data',
        `Store ${workspace}:${store} is a ${existingStore.type} store; replace uploads GeoPackages and works on GeoPackage stores`,
        { workspace, store, store_type: existingStore.type },
        false,
      );
    }
    const ftBody = await restGet<unknown>(access, ['workspaces', workspace, 'datastores', store, 'featuretypes', `${target.layer}.json`], ctx);
    const nativeName = ftBody ? (wrapped<FeatureType>(ftBody, 'featureType', where).nativeName ?? target.layer) : target.layer;
    if (!ours(existingStore)) {
      const gpkg = await writeGeopackage(input, nativeName, ctx);
      features = gpkg.features;
      const staging = `${store}_${tag}`;
      await uploadGeopackage(access, workspace, staging, gpkg.file, fileName, ctx);
      const stagedBody = await restGet<unknown>(access, ['workspaces', workspace, 'datastores', `${staging}.json`], ctx);
      const staged = stagedBody ? databaseOf(wrapped<DataStore>(stagedBody, 'dataStore', `store ${workspace}:${staging}`)) : null;
      if (!staged)
        throw new ConnectorError(
          'invalid_response',
          `GeoServer at ${publicUrl(access.base)} did not say where it stored the upload of ${workspace}:${staging}`,
          { workspace, store: staging },
          false,
        );
      const old = databaseOf(existingStore);
      // The switch: one update of the layer's store; the layer never leaves the catalogue.
      const next = entries(existingStore).map((e) => (e['@key'] === 'database' ? { ...e, $: staged } : e));
      await restSend(access, 'PUT', ['workspaces', workspace, 'datastores', store], ctx, {
        json: { dataStore: { name: store, connectionParameters: { entry: next } } },
      });
      await restSend(access, 'DELETE', ['workspaces', workspace, 'datastores', staging], ctx, undefined, { recurse: 'false' });
      const oldResource = uploadedResourcePath(old);
      if (oldResource && old !== staged) {
        await restSend(access, 'DELETE', ['resource', ...oldResource], ctx).catch((error: unknown) => {
          ctx.log.warn(
            { store: `${workspace}:${store}`, reason: (error as ConnectorError).reason },
            'the replaced GeoPackage could not be removed from GeoServer',
          );
        });
      }
    }
    await restSend(
      access,
      'PUT',
      ['workspaces', workspace, 'datastores', store, 'featuretypes', target.layer],
      ctx,
      {
        json: {
          featureType: { name: target.layer, ...(target.title ? { title: target.title } : {}), ...(target.abstract ? { abstract: target.abstract } : {}) },
        },
      },
      { recalculate: 'nativebbox,latlonbbox' },
    );
  }
  if (target.style) {
    await restSend(access, 'PUT', ['layers', `${workspace}:${target.layer}`], ctx, { json: { layer: { defaultStyle: { name: target.style } } } });
  }
  return {
    target: {
      url: publicUrl(access.base),
      workspace,
      store,
      layer: `${workspace}:${target.layer}`,
      write_mode: target.write_mode,
      wfs: publicUrl(`${access.base}/${workspace}/${target.layer}/ows`),
    },
    ...(features !== null ? { rows_written: features } : {}),
  };
}
