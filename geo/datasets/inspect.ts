import { readdir, stat } from 'node:fs/promises';
import { DomainError } from '../../domain/errors.js';
import path from 'node:path';
import type { DatasetRef } from './dataset-files.js';
import { datasetSrs, gdal, layerSrs, withDataset, type Dataset, type Layer } from '../gdal/gdal.js';
import { crsLabel, fieldTypeLabel, geometryTypeLabel } from '../gdal/labels.js';
import { crsAssigned, describeCrs, sourceSrs, type CrsDescription } from '../crs.js';
import type { ParquetInspection } from '../gdal/dataset-ref.js';

export interface FieldInfo {
  name: string;
  type: string;
}

export interface LayerInfo {
  name: string;
  /** WKT spelling (`POINT`, `MULTIPOLYGON Z`, `GEOMETRY` when mixed); null without geometry. */
  geometry_type: string | null;
  has_geometry: boolean;
  /** Null when counting would mean reading a large file through. */
  feature_count: number | null;
  crs: string | null;
  /** The CRS's code, name and unit (what a user needs before choosing units). */
  crs_info: CrsDescription | null;
  fields: FieldInfo[];
  /** [min_x, min_y, max_x, max_y] in the layer CRS; null when empty or too costly. */
  extent: [number, number, number, number] | null;
}

export interface RasterInfo {
  width: number;
  height: number;
  bands: { type: string; no_data: number | null }[];
  crs: string | null;
  geotransform: number[] | null;
}

export interface DatasetInfo {
  dataset_type: 'vector' | 'raster';
  /** Driver long name, e.g. "GeoPackage". */
  format: string;
  /** Driver short name, e.g. "GPKG": the id used by the formats catalog. */
  driver: string;
  layers: LayerInfo[];
  raster: RasterInfo | null;
  crs: string | null;
  warnings: string[];
}

/** Datasets up to this size may be read through to count features or compute an extent. */
export const CHEAP_SCAN_BYTES = 64 * 1024 * 1024;

/** Bytes on disk of a dataset (a folder's files summed: shapefiles, FileGDB). */
export async function datasetBytes(file: string): Promise<number> {
  const s = await stat(file);
  if (!s.isDirectory()) {
    // A shapefile's weight is in its .dbf as much as its .shp.
    if (/\.shp$/i.test(file)) {
      const dir = path.dirname(file);
      const stem = path.basename(file).slice(0, -4).toLowerCase();
      let total = 0;
      for (const e of await readdir(dir, { withFileTypes: true })) {
        if (e.isFile() && e.name.toLowerCase().startsWith(`${stem}.`)) total += (await stat(path.join(dir, e.name))).size;
      }
      return total;
    }
    return s.size;
  }
  let total = 0;
  for (const e of await readdir(file, { withFileTypes: true })) total += await datasetBytes(path.join(file, e.name));
  return total;
}

export function hasGeometry(layer: Layer): boolean {
  return layer.geomType !== gdal.wkbNone;
}

/** Feature count when the driver knows it, or when the file is small enough to count. */
export async function cheapFeatureCount(layer: Layer, cheap: boolean): Promise<number | null> {
  const fast = await layer.features.countAsync(false);
  if (fast >= 0) return fast;
  if (!cheap) return null;
  const counted = await layer.features.countAsync(true);
  return counted >= 0 ? counted : null;
}

function cheapExtent(layer: Layer, cheap: boolean): [number, number, number, number] | null {
  if (!hasGeometry(layer)) return null;
  for (const force of cheap ? [false, true] : [false]) {
    try {
      const e = layer.getExtent(force);
      if ([e.minX, e.minY, e.maxX, e.maxY].every(Number.isFinite) && e.minX <= e.maxX) return [e.minX, e.minY, e.maxX, e.maxY];
    } catch {
      // GDAL answers "not available cheaply" or "empty layer" with an error
    }
  }
  return null;
}

export function layerFields(layer: Layer): FieldInfo[] {
  const out: FieldInfo[] = [];
  layer.fields.forEach((f) => {
    out.push({ name: f.name, type: fieldTypeLabel(f.type) });
  });
  return out;
}

/** The CRS label of a layer: the one set on upload, the file's, or the dataset's assumed one (CSV). */
export function layerCrs(layer: Layer, ref: DatasetRef): string | null {
  if (!hasGeometry(layer)) return null;
  if (crsAssigned(layer, ref)) return ref.assumedCrs!;
  return crsLabel(layerSrs(layer)) ?? ref.assumedCrs ?? null;
}

export async function describeLayer(layer: Layer, ref: DatasetRef, cheap: boolean): Promise<LayerInfo> {
  const spatial = hasGeometry(layer);
  return {
    name: layer.name,
    geometry_type: spatial ? geometryTypeLabel(layer.geomType) : null,
    has_geometry: spatial,
    feature_count: await cheapFeatureCount(layer, cheap),
    crs: layerCrs(layer, ref),
    crs_info: describeCrs(sourceSrs(layer, ref)),
    fields: layerFields(layer),
    extent: cheapExtent(layer, cheap),
  };
}

function describeRaster(ds: Dataset): RasterInfo {
  const size = ds.rasterSize;
  const bands: RasterInfo['bands'] = [];
  ds.bands.forEach((b) => {
    const nd = b.noDataValue;
    // JSON has no NaN: a NaN no-data value (common in float rasters) shows as null.
    bands.push({ type: b.dataType ?? 'Unknown', no_data: typeof nd === 'number' && Number.isFinite(nd) ? nd : null });
  });
  return { width: size.x, height: size.y, bands, crs: crsLabel(datasetSrs(ds)), geotransform: ds.geoTransform ?? null };
}

/**
 * Describes a dataset as the Workspace shows it. Reads metadata, never the whole file, unless
 * the file is small enough for a count to be cheap.
 */
export async function inspectDataset(ref: DatasetRef): Promise<DatasetInfo> {
  const cheap = (await datasetBytes(ref.path)) <= CHEAP_SCAN_BYTES;
  const info = await withDataset(ref, async (ds): Promise<DatasetInfo> => {
    // A one-column CSV is read through a GeoPackage copy: the Workspace still says CSV.
    const driver = ref.uploadDriver ?? ds.driver.description;
    const md = gdal.drivers.get(driver).getMetadata() as Record<string, string>;
    const warnings = [...ref.warnings];
    const layers: LayerInfo[] = [];
    for (let i = 0; i < ds.layers.count(); i++) layers.push(await describeLayer(ds.layers.get(i), ref, cheap));
    const isRaster = layers.length === 0 && ds.bands.count() > 0;
    const raster = isRaster ? describeRaster(ds) : null;
    for (const l of layers) {
      if (l.has_geometry && l.feature_count === null) warnings.push(`Layer ${l.name}: the feature count is not known without reading the whole file`);
      if (l.has_geometry && !l.crs) warnings.push(`Layer ${l.name} has no coordinate reference system`);
    }
    if (ref.assumedCrs) {
      for (let i = 0; i < ds.layers.count(); i++) {
        const layer = ds.layers.get(i);
        if (!hasGeometry(layer)) continue;
        const own = layerSrs(layer);
        if (ref.crsOverride) warnings.push(`Layer ${layer.name}: ${ref.assumedCrs} as source_crs says${own ? ` (the file says ${crsLabel(own)})` : ''}`);
        else if (!own)
          warnings.push(
            `Layer ${layer.name}: no CRS in the file; ${ref.assumedCrs}${ref.assumedCrs === 'EPSG:4326' ? ' (longitude/latitude)' : ''} is assumed`,
          );
      }
    }
    if (!isRaster && layers.length === 0) {
      // Nothing a preview, conversion or delivery could use: said now, not at the first preview.
      const subdatasets = ds.getMetadata('SUBDATASETS') as Record<string, string> | undefined;
      throw new DomainError(
        'invalid_source',
        subdatasets && Object.keys(subdatasets).length > 0
          ? 'The file holds subdatasets, which are not supported yet'
          : 'GDAL found nothing to read in the file: no layers and no raster. A file that names others (a PDS4 or ISIS3 label, an ENVI header, a MapInfo seamless table) must come with them in one ZIP; files outside the upload are never read',
        { driver },
      );
    }
    const crs = raster ? raster.crs : (layers.find((l) => l.has_geometry && l.crs)?.crs ?? null);
    return {
      dataset_type: isRaster ? 'raster' : 'vector',
      format: md.DMD_LONGNAME ?? driver,
      driver,
      layers,
      raster,
      crs,
      warnings,
    };
  });
  return ref.parquet ? asParquet(info, ref.parquet.inspection) : info;
}

/**
 * A GeoParquet upload as the Workspace shows it: GDAL reads its GeoPackage copy (whose fields the
 * pipeline uses), but what the file is and says comes from the Parquet footers: the format, the
 * feature count, the CRS, the geometry type and the bbox of the `geo` metadata.
 */
function asParquet(info: DatasetInfo, parquet: ParquetInspection): DatasetInfo {
  const meta = parquet.layer;
  const layers = info.layers.map((l) => ({
    ...l,
    feature_count: meta.feature_count,
    ...(meta.has_geometry ? { geometry_type: meta.geometry_type ?? l.geometry_type, crs: meta.crs ?? l.crs, extent: meta.extent ?? l.extent } : {}),
  }));
  return {
    ...info,
    format: parquet.geoparquet_version ? `GeoParquet ${parquet.geoparquet_version}` : 'Parquet',
    driver: 'GeoParquet',
    layers,
    crs: layers.find((l) => l.has_geometry && l.crs)?.crs ?? null,
    // The count is the footers' own: the copy's "count unknown" warning does not apply.
    warnings: info.warnings.filter((w) => !/feature count is not known/.test(w)),
  };
}
