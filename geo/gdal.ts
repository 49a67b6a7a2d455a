import gdal from 'gdal-async';
import { DomainError } from '../domain/errors.js';
import type { DatasetRef } from './dataset-files.js';

/*
 * The one place that imports gdal-async and sets process-wide GDAL options, so every geo module
 * sees the same configuration.
 *
 * - Axis order: gdal-async builds SpatialReferences in the authority's order (latitude first for
 *   EPSG:4326). Everything we write (GeoJSON, GPKG, spatial previews) is longitude/latitude, so
 *   CRSs built here follow the traditional GIS order (x = easting/longitude).
 * - Uploaded files are untrusted: never let a GML file make GDAL download a schema.
 */
gdal.config.set('OSR_DEFAULT_AXIS_MAPPING_STRATEGY', 'TRADITIONAL_GIS_ORDER');
gdal.config.set('GML_DOWNLOAD_WFS_SCHEMA', 'NO');
gdal.config.set('GDAL_HTTP_TIMEOUT', '20');

export { gdal };
export type Dataset = gdal.Dataset;
export type Layer = gdal.Layer;
export type SpatialReference = gdal.SpatialReference;

/**
 * Drivers never used to open an upload: they follow references to other files or URLs
 * (VRT can point at /etc/passwd or an internal URL; GMLAS fetches schemas) or are web services.
 */
const refusedInputDrivers = new Set([
  'VRT',
  'OGR_VRT',
  'GMLAS',
  'WMS',
  'WMTS',
  'WCS',
  'WFS',
  'OAPIF',
  'OGCAPI',
  'EEDA',
  'EEDAI',
  'PLSCENES',
  'CSW',
  'ESRIC',
  'DAAS',
  'NGW',
  'Elasticsearch',
  'CouchDB',
  'Cloudant',
  'AmigoCloud',
  'Carto',
  'MongoDBv3',
  'HTTP',
  'GNMFile',
  'GNMDatabase',
  'PostgreSQL',
  'PostGISRaster',
  'MySQL',
  'ODBC',
  'MSSQLSpatial',
  'OCI',
  'PGeo',
]);

let inputDrivers: string[] | undefined;
/** Driver short names allowed to open uploaded files (all readable drivers minus the refused ones). */
export function uploadDrivers(): string[] {
  if (!inputDrivers) {
    inputDrivers = [];
    gdal.drivers.forEach((d) => {
      const md = d.getMetadata() as Record<string, string>;
      if (md.DCAP_OPEN === 'YES' && !refusedInputDrivers.has(d.description)) inputDrivers!.push(d.description);
    });
  }
  return inputDrivers;
}

/** Opens a prepared dataset read-only, with its open options, through the allowed drivers only. */
export async function openDataset(ref: DatasetRef): Promise<gdal.Dataset> {
  try {
    if (ref.openOptions.length > 0 && ref.driver) {
      // Open options only exist on Driver.open, and gdal-async 3.12's Driver.openAsync drops them
      // (measured): open synchronously. A CSV open reads the header and at most
      // AUTODETECT_SIZE_LIMIT (100 kB) to guess types, so the event loop is held only briefly.
      return gdal.drivers.get(ref.driver).open(ref.path, 'r', ref.openOptions);
    }
    return await gdal.openAsync(ref.path, 'r', uploadDrivers());
  } catch (err) {
    throw new DomainError('invalid_source', 'GDAL cannot open the file as a dataset: it is damaged or not in a supported format', {
      reason: scrubPaths(errorText(err)),
    });
  }
}

/** GDAL messages quote file names; the API never shows server paths. */
export function scrubPaths(message: string): string {
  // Two segments at least, so a value like "Biel/Bienne" in a message is left alone.
  return message.replace(/(?:\/[^\s'"`,;:()/]+){2,}\/?/g, (m) => `<${m.split('/').filter(Boolean).pop() || 'file'}>`);
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Runs fn on an open dataset and always closes it (GDAL handles are not freed until GC otherwise). */
export async function withDataset<T>(ref: DatasetRef, fn: (ds: gdal.Dataset) => Promise<T>): Promise<T> {
  const ds = await openDataset(ref);
  try {
    return await fn(ds);
  } finally {
    ds.close();
  }
}

/**
 * The CRS of a layer or dataset, read safely.
 *
 * gdal-async caches SpatialReference wrappers by the address of the SRS the layer owns, but the
 * wrapper holds a clone. Once a dataset is closed its SRS is freed, and the next layer whose SRS
 * lands at the same address gets the stale wrapper: the CRS of an earlier file (measured here:
 * 49 wrong answers in 300 alternating opens). A garbage collection right before the read drops
 * unreferenced wrappers from that cache, so the read sees the layer's own SRS. The processes
 * run with --expose-gc for this; without it the read is still made, with the risk logged once.
 */
let warnedNoGc = false;
function collectStaleWrappers(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) gc();
  else if (!warnedNoGc) {
    warnedNoGc = true;
    process.emitWarning('node runs without --expose-gc: GDAL CRS reads may return the CRS of an earlier file (gdal-async wrapper cache)');
  }
}

export function layerSrs(layer: gdal.Layer): gdal.SpatialReference | null {
  collectStaleWrappers();
  return layer.srs;
}

export function datasetSrs(ds: gdal.Dataset): gdal.SpatialReference | null {
  collectStaleWrappers();
  return ds.srs;
}
