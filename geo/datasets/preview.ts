import { randomUUID } from 'node:crypto';
import { DomainError } from '../../domain/errors.js';
import type { DatasetRef } from './dataset-files.js';
import { errorText, gdal, layerSrs, scrubPaths, withDataset, type Dataset, type Layer } from '../gdal/gdal.js';
import { CHEAP_SCAN_BYTES, cheapFeatureCount, datasetBytes, hasGeometry, layerCrs, layerFields, type FieldInfo } from './inspect.js';
import { geometryTypeLabel } from '../gdal/labels.js';
import { crsAssigned, describeCrs, sourceSrs, type CrsDescription } from '../crs.js';

export const PREVIEW_LIMIT_DEFAULT = 100;
export const PREVIEW_LIMIT_MAX = 500;
export const SPATIAL_PREVIEW_CAP = 2000;

/**
 * Parses the `limit` query value of data previews: absent → 100; a positive integer, capped at
 * 500 (the response's `limit` says what was applied); anything else → invalid_parameter.
 */
export function parsePreviewLimit(raw: unknown): number {
  if (raw === undefined || raw === null || raw === '') return PREVIEW_LIMIT_DEFAULT;
  const text = Array.isArray(raw) ? raw[raw.length - 1] : raw;
  const value = typeof text === 'number' ? text : typeof text === 'string' && /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new DomainError('invalid_parameter', `limit must be a positive integer (at most ${PREVIEW_LIMIT_MAX})`, {
      parameter: 'limit',
      value: String(text).slice(0, 50),
    });
  }
  return Math.min(value, PREVIEW_LIMIT_MAX);
}

function layerNames(ds: Dataset): string[] {
  const names: string[] = [];
  ds.layers.forEach((l) => {
    names.push(l.name);
  });
  return names;
}

/** The requested layer, or the only one; invalid_parameter naming the layers otherwise. */
export function chooseLayer(ds: Dataset, requested: string | undefined): Layer {
  const names = layerNames(ds);
  if (requested === undefined || requested === '') {
    if (names.length === 1) return ds.layers.get(0);
    if (names.length === 0) throw new DomainError('invalid_parameter', 'The dataset has no vector layers to preview', { layers: [] });
    throw new DomainError('invalid_parameter', `The dataset has ${names.length} layers; choose one with layer: ${names.join(', ')}`, {
      parameter: 'layer',
      layers: names,
    });
  }
  const index = names.indexOf(requested);
  if (index < 0) {
    throw new DomainError('invalid_parameter', `No layer named ${JSON.stringify(requested)}; the layers are: ${names.join(', ')}`, {
      parameter: 'layer',
      layers: names,
    });
  }
  return ds.layers.get(index);
}

export interface DataPreview {
  layer: string;
  fields: FieldInfo[];
  has_geometry: boolean;
  geometry_type?: string;
  crs: string | null;
  crs_info: CrsDescription | null;
  row_count: number | null;
  preview_row_count: number;
  limit: number;
  truncated: boolean;
  rows: Record<string, unknown>[];
}

const pad = (n: number, width = 2) => String(Math.trunc(n)).padStart(width, '0');

/** GDAL date/time values (objects) as ISO 8601 strings; binary as null; JSON-safe numbers. */
export function jsonValue(value: unknown): unknown {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'string' || typeof value === 'boolean') return value;
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return null;
  if (Array.isArray(value)) return value.map(jsonValue);
  if (typeof value === 'object') {
    const v = value as Record<string, number | undefined>;
    const date = v.year !== undefined ? `${pad(v.year, 4)}-${pad(v.month ?? 1)}-${pad(v.day ?? 1)}` : '';
    if (v.hour === undefined) return date || null;
    const sec = v.second ?? 0;
    const secText = Number.isInteger(sec) ? pad(sec) : sec.toFixed(3).padStart(6, '0');
    const time = `${pad(v.hour)}:${pad(v.minute ?? 0)}:${secText}`;
    // OGR time zone flag: 0 unknown, 1 local time, 100 UTC, 100±n quarter hours away from UTC.
    const tz = v.timezone ?? 0;
    let zone = '';
    if (tz === 100) zone = 'Z';
    else if (tz > 1) {
      const minutes = (tz - 100) * 15;
      zone = `${minutes < 0 ? '-' : '+'}${pad(Math.abs(minutes) / 60)}:${pad(Math.abs(minutes) % 60)}`;
    }
    return date ? `${date}T${time}${zone}` : time;
  }
  return null;
}

/**
 * Name of the geometry cell: `geometry` whatever the storage calls it (GeoJSON has no name,
 * GeoPackage says geom), so original and transformed previews line up; the stored name only
 * when an attribute is already called geometry.
 */
function geometryKey(layer: Layer, fields: FieldInfo[]): string {
  const taken = new Set(fields.map((f) => f.name.toLowerCase()));
  for (const candidate of ['geometry', layer.geomColumn, 'geom', '_geometry']) {
    if (candidate && !taken.has(candidate.toLowerCase())) return candidate;
  }
  return '_geometry_';
}

/**
 * The first `limit` rows of a layer as JSON, reading only those rows (plus one, to know whether
 * more exist). Geometry cells hold the geometry type label (`POINT`), never coordinates.
 */
export async function dataPreview(ref: DatasetRef, layerName?: string, limit: number = PREVIEW_LIMIT_DEFAULT): Promise<DataPreview> {
  const applied = parsePreviewLimit(limit);
  const cheap = (await datasetBytes(ref.path)) <= CHEAP_SCAN_BYTES;
  return withDataset(ref, async (ds) => {
    const layer = chooseLayer(ds, layerName);
    const spatial = hasGeometry(layer);
    const attributes = layerFields(layer);
    const geomKey = spatial ? geometryKey(layer, attributes) : null;
    const names = attributes.map((f) => f.name);
    const rows: Record<string, unknown>[] = [];
    let more = false;
    let feature = await layer.features.firstAsync();
    while (feature) {
      if (rows.length === applied) {
        more = true;
        break;
      }
      const values = feature.fields.toObject() as Record<string, unknown>;
      const row: Record<string, unknown> = {};
      for (const name of names) row[name] = jsonValue(values[name]);
      if (geomKey) {
        const geometry = feature.getGeometry();
        row[geomKey] = geometry ? geometryTypeLabel(geometry.wkbType) : null;
      }
      rows.push(row);
      feature = await layer.features.nextAsync();
    }
    const rowCount = (await cheapFeatureCount(layer, cheap)) ?? (more ? null : rows.length);
    const result: DataPreview = {
      layer: layer.name,
      fields: geomKey ? [...attributes, { name: geomKey, type: 'Geometry' }] : attributes,
      has_geometry: spatial,
      crs: layerCrs(layer, ref),
      crs_info: describeCrs(sourceSrs(layer, ref)),
      row_count: rowCount,
      preview_row_count: rows.length,
      limit: applied,
      // The spec's rule, "shorter than the table or hit the limit": the limit cut rows off. A
      // table of exactly `limit` rows is whole (issue 8: 5 of 5 is not truncated).
      truncated: more || (rowCount !== null && rows.length < rowCount),
      rows,
    };
    if (spatial) result.geometry_type = geometryTypeLabel(layer.geomType) ?? 'GEOMETRY';
    return result;
  });
}

export interface SpatialPreview {
  layer: string;
  source_crs: string | null;
  source_crs_info: CrsDescription | null;
  preview_crs: 'EPSG:4326';
  returned_count: number;
  feature_count: number | null;
  truncated: boolean;
  geojson: { type: 'FeatureCollection'; features: unknown[] };
}

function looksLikeLonLat(layer: Layer): boolean {
  try {
    const e = layer.getExtent(false);
    return e.minX >= -180.5 && e.maxX <= 360.5 && e.minY >= -90.5 && e.maxY <= 90.5;
  } catch {
    return false;
  }
}

/**
 * A map preview needs no more detail than a screen shows: vertices closer than 1/20000 of the
 * layer's extent are dropped (topology kept per feature), so 2000 detailed coastlines stay a
 * response a browser can draw. Skipped when the extent is not known cheaply.
 */
function previewSimplification(layer: Layer, cheap: boolean): string[] {
  try {
    let e: { minX: number; maxX: number; minY: number; maxY: number };
    try {
      e = layer.getExtent(false);
    } catch {
      if (!cheap) return [];
      e = layer.getExtent(true);
    }
    const size = Math.max(e.maxX - e.minX, e.maxY - e.minY);
    if (!Number.isFinite(size) || size <= 0) return [];
    return ['-simplify', String(size / 20_000)];
  } catch {
    return [];
  }
}

/**
 * Up to 2000 features of a layer as an RFC 7946 FeatureCollection in EPSG:4326 (lon/lat), Z and
 * M dropped, properties kept. GDAL's GeoJSON writer does the reprojection, winding order and
 * antimeridian cutting; `-limit` makes it read only the sample, into memory, never the source.
 */
export async function spatialPreview(ref: DatasetRef, layerName?: string): Promise<SpatialPreview> {
  const cheap = (await datasetBytes(ref.path)) <= CHEAP_SCAN_BYTES;
  return withDataset(ref, async (ds) => {
    const layer = chooseLayer(ds, layerName);
    if (!hasGeometry(layer)) {
      throw new DomainError('invalid_parameter', `Layer ${layer.name} has no geometry: use the data preview for tables`, {
        parameter: 'layer',
        layer: layer.name,
      });
    }
    const sourceCrs = layerCrs(layer, ref);
    const args = ['-f', 'GeoJSON', '-lco', 'RFC7946=YES', '-t_srs', 'EPSG:4326', '-dim', 'XY', '-limit', String(SPATIAL_PREVIEW_CAP + 1)];
    args.push(...previewSimplification(layer, cheap));
    if (crsAssigned(layer, ref)) args.push('-s_srs', ref.assumedCrs!);
    else if (!layerSrs(layer)) {
      // Without a CRS the coordinates can only be shown if they already are longitudes/latitudes.
      if (ref.assumedCrs) args.push('-s_srs', ref.assumedCrs);
      else if (looksLikeLonLat(layer)) args.push('-s_srs', 'EPSG:4326');
      else {
        throw new DomainError('invalid_parameter', `Layer ${layer.name} has no coordinate reference system, so it cannot be placed on a map`, {
          parameter: 'layer',
          layer: layer.name,
        });
      }
    }
    args.push(layer.name);
    const target = `/vsimem/spatial-preview-${randomUUID()}.geojson`;
    let parsed: { features?: unknown[] };
    try {
      const out = await gdal.vectorTranslateAsync(target, ds, args);
      out.close();
      parsed = JSON.parse(gdal.vsimem.release(target).toString('utf8')) as { features?: unknown[] };
    } catch (err) {
      try {
        gdal.vsimem.release(target);
      } catch {
        // nothing was written
      }
      throw new DomainError('invalid_source', 'The layer could not be read for the spatial preview', { reason: scrubPaths(errorText(err)) });
    }
    const features = parsed.features ?? [];
    const more = features.length > SPATIAL_PREVIEW_CAP;
    if (more) features.length = SPATIAL_PREVIEW_CAP;
    const binary = layerFields(layer)
      .filter((f) => f.type === 'Binary')
      .map((f) => f.name);
    if (binary.length) {
      // GeoJSON has no binary type; GDAL would write hex strings.
      for (const f of features as { properties?: Record<string, unknown> }[]) for (const name of binary) if (f.properties) f.properties[name] = null;
    }
    const count = (await cheapFeatureCount(layer, cheap)) ?? (more ? null : features.length);
    return {
      layer: layer.name,
      source_crs: sourceCrs,
      source_crs_info: describeCrs(sourceSrs(layer, ref)),
      preview_crs: 'EPSG:4326',
      returned_count: features.length,
      feature_count: count,
      truncated: more || (count !== null && features.length < count),
      geojson: { type: 'FeatureCollection', features },
    };
  });
}
