import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { safeFilename } from '../../../geo/datasets/dataset-files.js';
import { gdal, openAs, type Dataset } from '../../../geo/gdal/gdal.js';
import { ConnectorError } from '../../../domain/transfers.js';
import type { ConnectorContext } from '../../types.js';
import { arcgis, type RestAccess } from './rest.js';

/*
 * One layer of a FeatureServer into a GeoPackage. The pages come over HTTP (rest.ts); each page
 * is Esri JSON, which GDAL's ESRIJSON driver reads from a local file and appends to the
 * GeoPackage, so geometry and field types are GDAL's work, not ours, with two corrections:
 *
 * - Object ids: every page is appended with -preserve_fid, so the GeoPackage keeps the server's
 *   object ids as its feature ids on every page (ogr2ogr keeps them by default only when it
 *   creates the layer, i.e. for page 1, and renumbers appended pages).
 * - Field types: a field declared Integer (or SmallInteger) whose values include decimals (Koop
 *   declares a field's type from the first value it sees) would be truncated by the driver; such
 *   fields are declared Double instead. That needs every page seen before the first is written,
 *   so pages are kept on disk (they count against the size limit anyway) and written at the end.
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
  fields?: { name: string; type: string }[];
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
  /** Fields declared Integer whose values had decimals, written as Double. */
  widened: string[];
}

const INTEGER_TYPES = new Set(['esriFieldTypeInteger', 'esriFieldTypeSmallInteger', 'esriFieldTypeBigInteger']);

/** The fields of `page` declared as integers that hold a number with a fraction. */
export function fractionalIntegerFields(page: { fields?: { name: string; type: string }[]; features?: unknown[] }): string[] {
  const integers = (page.fields ?? []).filter((f) => INTEGER_TYPES.has(f.type)).map((f) => f.name);
  if (integers.length === 0) return [];
  const found = new Set<string>();
  for (const feature of page.features ?? []) {
    const attributes = (feature as { attributes?: Record<string, unknown> })?.attributes;
    if (!attributes) continue;
    for (const name of integers) {
      const value = attributes[name];
      if (typeof value === 'number' && !Number.isInteger(value)) found.add(name);
    }
  }
  return [...found];
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
  // Some servers (Koop 10.4) answer a layer id they lack with another layer: never read that one instead.
  if (typeof info.id === 'number' && info.id !== layerId) {
    throw new ConnectorError(
      'not_found',
      `the service has no layer ${layerId} (asked for it, it answered layer ${info.id}${info.name ? `, ${info.name}` : ''})`,
      { layer: layerId },
      false,
    );
  }
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
  const pageFiles: string[] = [];
  const widened = new Set<string>();

  /** Keeps one query answer (Esri JSON) on disk and notes integer fields with decimals; returns its feature count. */
  const keep = async (text: string, json: { fields?: { name: string; type: string }[]; features?: unknown[] }): Promise<number> => {
    const pageFile = path.join(pages, `page-${pageFiles.length + 1}.json`);
    await writeFile(pageFile, text);
    pageFiles.push(pageFile);
    for (const field of fractionalIntegerFields(json)) widened.add(field);
    return Array.isArray(json.features) ? json.features.length : 0;
  };

  /** Appends one kept page to the GeoPackage, its object ids kept and widened fields declared Double. */
  const append = async (pageFile: string, pageNo: number): Promise<void> => {
    let src: Dataset | null = null;
    try {
      if (widened.size > 0) {
        const page = JSON.parse(await readFile(pageFile, 'utf8')) as { fields?: { name: string; type: string }[] };
        for (const field of page.fields ?? []) if (widened.has(field.name)) field.type = 'esriFieldTypeDouble';
        await writeFile(pageFile, JSON.stringify(page));
      }
      // The server's answer is opened as Esri JSON or not at all: no other driver looks at it.
      src = await openAs('ESRIJSON', pageFile);
      const count = src.layers.get(0).features.count();
      if (count > 0 || !out) {
        const args = ['-nln', name, '-preserve_fid', ...promote];
        out = out ? await gdal.vectorTranslateAsync(out, src, ['-append', ...args]) : await gdal.vectorTranslateAsync(file, src, ['-f', 'GPKG', ...args]);
      }
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
        const count = await keep(page.text, page.json);
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
        await keep(JSON.stringify({ objectIdFieldName: orderBy ?? 'OBJECTID', geometryType: info.geometryType, fields: info.fields ?? [], features: [] }), {});
      for (let i = 0; i < all.length; i += pageSize) {
        const page = await query({ ...base, objectIds: all.slice(i, i + pageSize).join(',') });
        features += await keep(page.text, page.json);
        ctx.progress?.({ features, bytes: ctx.maxBytes - budget });
      }
    }
    if (widened.size > 0)
      ctx.log.warn({ layer: layerId, fields: [...widened] }, 'FeatureServer layer declares Integer fields whose values have decimals: written as Double');
    for (const [i, pageFile] of pageFiles.entries()) await append(pageFile, i + 1);
  } catch (error) {
    (out as Dataset | null)?.close();
    out = null;
    await rm(file, { force: true });
    throw error;
  } finally {
    (out as Dataset | null)?.close();
    await rm(pages, { recursive: true, force: true });
  }
  return { file, filename, features, bytes: ctx.maxBytes - budget, widened: [...widened] };
}
