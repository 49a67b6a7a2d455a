import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { safeFilename } from '../../geo/datasets/dataset-files.js';
import { gdal, openAs, type Dataset } from '../../geo/datasets/gdal.js';
import { ConnectorError } from '../../domain/transfers.js';
import type { ConnectorContext } from '../types.js';
import { arcgis, type RestAccess } from './rest.js';

/*
 * One layer of a FeatureServer into a GeoPackage. The pages come over HTTP (rest.ts); each page
 * is Esri JSON, which GDAL's ESRIJSON driver reads from a local file and appends to the
 * GeoPackage, so geometry and field types are GDAL's work, not ours.
 */

export interface LayerInfo {
  id?: number;
  name?: string;
  type?: string;
  geometryType?: string;
  maxRecordCount?: number;
  objectIdField?: string;
  fields?: { name: string; type: string }[];
  supportsPagination?: boolean;
  advancedQueryCapabilities?: { supportsPagination?: boolean };
}

interface QueryPage {
  features?: unknown[];
  exceededTransferLimit?: boolean;
  objectIds?: number[] | null;
  objectIdFieldName?: string;
}

export interface LayerRead {
  file: string;
  filename: string;
  features: number;
  bytes: number;
}

/** Largest page asked for, whatever the server allows (ArcGIS Online allows 2000 for most layers). */
const MAX_PAGE = 2000;

export async function readLayer(access: RestAccess, layerId: number, where: string, ctx: ConnectorContext): Promise<LayerRead> {
  let budget = ctx.maxBytes;
  const tooLarge = () =>
    new ConnectorError('too_large', `layer ${layerId} holds more than the limit of ${ctx.maxBytes} bytes`, { layer: layerId, max_bytes: ctx.maxBytes }, false);
  /** A query whose answer counts against the size limit. */
  const query = async (params: Record<string, string>) => {
    const page = await arcgis<QueryPage>(access, `${layerId}/query`, params, ctx, budget).catch((error) => {
      throw error instanceof ConnectorError && error.reason === 'too_large' ? tooLarge() : error;
    });
    budget -= page.bytes;
    return page;
  };
  const info = (await arcgis<LayerInfo>(access, String(layerId), {}, ctx, 16 * 1024 * 1024)).json;
  if (info.type && !/layer|table/i.test(info.type)) {
    throw new ConnectorError('not_found', `${layerId} is a ${info.type}, not a feature layer or table`, { layer: layerId }, false);
  }
  const name = (info.name ?? `layer_${layerId}`).trim() || `layer_${layerId}`;
  const filename = safeFilename(`${name}.gpkg`);
  const file = path.join(ctx.workDir, filename);
  const pageSize = Math.max(1, Math.min(info.maxRecordCount ?? 1000, MAX_PAGE));
  const paged = info.advancedQueryCapabilities?.supportsPagination ?? info.supportsPagination ?? false;
  const orderBy = info.objectIdField ?? info.fields?.find((f) => f.type === 'esriFieldTypeOID')?.name;
  // Lines and polygons may come as one or several parts: multi types hold both.
  const promote = /Polyline|Polygon/.test(info.geometryType ?? '') ? ['-nlt', 'PROMOTE_TO_MULTI'] : [];
  const pages = await mkdtemp(path.join(ctx.workDir, '.pages-'));
  const base = { where, outFields: '*', returnGeometry: 'true' };
  let out: Dataset | null = null;
  let features = 0;
  let pageNo = 0;

  /** Appends one query answer (Esri JSON text) to the GeoPackage; returns its feature count. */
  const append = async (text: string): Promise<number> => {
    const pageFile = path.join(pages, `page-${++pageNo}.json`);
    await writeFile(pageFile, text);
    let src: Dataset | null = null;
    try {
      // The server's answer is opened as Esri JSON or not at all: no other driver looks at it.
      src = await openAs('ESRIJSON', pageFile);
      const count = src.layers.get(0).features.count();
      if (count > 0 || !out) {
        const args = ['-nln', name, ...promote];
        out = out ? await gdal.vectorTranslateAsync(out, src, ['-append', ...args]) : await gdal.vectorTranslateAsync(file, src, ['-f', 'GPKG', ...args]);
      }
      return count;
    } catch (error) {
      throw new ConnectorError(
        'invalid_data',
        `page ${pageNo} of layer ${layerId} could not be read as Esri JSON (${error instanceof Error ? error.message.slice(0, 200) : 'error'})`,
        { layer: layerId },
        false,
      );
    } finally {
      src?.close();
      await rm(pageFile, { force: true });
    }
  };

  try {
    if (paged) {
      for (let offset = 0; ; ) {
        const page = await query({
          ...base,
          resultOffset: String(offset),
          resultRecordCount: String(pageSize),
          ...(orderBy ? { orderByFields: orderBy } : {}),
        });
        const count = await append(page.text);
        features += count;
        offset += count;
        ctx.progress?.({ features, bytes: ctx.maxBytes - budget });
        if (!page.json.exceededTransferLimit || count === 0) break;
      }
    } else {
      // Servers without pagination: ask for the ids, then fetch them in batches.
      const ids = await query({ where, returnIdsOnly: 'true' });
      const all = [...(ids.json.objectIds ?? [])].sort((a, b) => a - b);
      if (all.length === 0)
        features += await append(
          JSON.stringify({ objectIdFieldName: orderBy ?? 'OBJECTID', geometryType: info.geometryType, fields: info.fields ?? [], features: [] }),
        );
      for (let i = 0; i < all.length; i += pageSize) {
        const page = await query({ ...base, objectIds: all.slice(i, i + pageSize).join(',') });
        features += await append(page.text);
        ctx.progress?.({ features, bytes: ctx.maxBytes - budget });
      }
    }
  } catch (error) {
    (out as Dataset | null)?.close();
    out = null;
    await rm(file, { force: true });
    throw error;
  } finally {
    (out as Dataset | null)?.close();
    await rm(pages, { recursive: true, force: true });
  }
  return { file, filename, features, bytes: ctx.maxBytes - budget };
}
