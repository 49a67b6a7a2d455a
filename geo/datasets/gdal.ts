import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Gdal from 'gdal-async';
import { DomainError } from '../../domain/errors.js';

/*
 * The one place that loads gdal-async and sets process-wide GDAL options, so every geo module
 * sees the same configuration.
 *
 * - Axis order: gdal-async builds SpatialReferences in the authority's order (latitude first for
 *   EPSG:4326). Everything we write (GeoJSON, GPKG, spatial previews) is longitude/latitude, so
 *   CRSs built here follow the traditional GIS order (x = easting/longitude).
 * - Uploaded files are untrusted: never let a GML file make GDAL download a schema.
 *
 * The native addon loads on first use, not on import: modules that only mention GDAL (the
 * operation catalogue, the connectors' pure helpers) load, and their unit specs run, on a
 * machine without the compiled addon; loading it costs about half a second, paid by whoever
 * touches GDAL first.
 */
let loaded: typeof Gdal | undefined;
function loadGdal(): typeof Gdal {
  if (loaded) return loaded;
  loaded = createRequire(import.meta.url)('gdal-async') as typeof Gdal;
  loaded.config.set('OSR_DEFAULT_AXIS_MAPPING_STRATEGY', 'TRADITIONAL_GIS_ORDER');
  loaded.config.set('GML_DOWNLOAD_WFS_SCHEMA', 'NO');
  loaded.config.set('GDAL_HTTP_TIMEOUT', '20');
  // Importers see the module itself from now on (a live binding): the stand-in is done.
  gdal = loaded;
  return loaded;
}

/** gdal-async: a stand-in until the first property read loads it, then the module itself. */
export let gdal: typeof Gdal = new Proxy({} as typeof Gdal, { get: (_target, key) => Reflect.get(loadGdal(), key) });

export type Dataset = Gdal.Dataset;
export type Layer = Gdal.Layer;
export type SpatialReference = Gdal.SpatialReference;
export type CoordinateTransformation = Gdal.CoordinateTransformation;

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

/**
 * VRT-like files describe other datasets (local files, URLs); GDAL may follow them while opening,
 * before the driver check could refuse them, so they are recognised by their first bytes.
 */
function refuseIndirection(file: string): void {
  let head = '';
  try {
    if (!statSync(file).isFile()) return;
    const fd = openSync(file, 'r');
    try {
      const buf = Buffer.alloc(4096);
      head = buf.subarray(0, readSync(fd, buf, 0, buf.length, 0)).toString('latin1');
    } finally {
      closeSync(fd);
    }
  } catch {
    return;
  }
  if (
    /<\s*(VRTDataset|OGRVRTDataSource|GDAL_WMS|GDAL_WMTS|WCS_GDAL|GDALTileIndexDataset)\b/i.test(head) ||
    /^\s*(WFS|WMS|WCS|OAPIF|EEDA|PG|MYSQL|ODBC|MSSQL|OCI):/i.test(head)
  ) {
    throw new DomainError('invalid_source', 'Files that describe other datasets (VRT, service descriptions) are not accepted as uploads');
  }
}

/**
 * What GDAL opens for a Workspace: a path on the server plus the open options it needs.
 * Internal only: it holds a filesystem path, so it is stored server-side and never returned by
 * the API (inspect, preview and convert results carry no paths).
 */
export interface DatasetRef {
  /** File or folder GDAL opens (a folder for several shapefiles side by side, or a .gdb). */
  path: string;
  /** Driver open options (`KEY=VALUE`), e.g. the CSV geometry column guesses. */
  openOptions: string[];
  /** Driver that the open options belong to (only set with openOptions). */
  driver?: string;
  /**
   * CRS assumed for layers that carry none: coordinates in CSV lon/lat or WKT columns are WGS 84
   * by convention, and CSV has no place to say so.
   */
  assumedCrs?: string;
  /** Remarks about what was chosen (several datasets in one ZIP, …), for the Workspace warnings. */
  warnings: string[];
  /** The driver of the uploaded file when GDAL reads a copy of it (a one-column CSV). */
  uploadDriver?: string;
}

/** Opens a prepared dataset read-only, with its open options, through the allowed drivers only. */
export async function openDataset(ref: DatasetRef): Promise<Dataset> {
  try {
    if (ref.openOptions.length > 0 && ref.driver) {
      // Open options only exist on Driver.open, and gdal-async 3.12's Driver.openAsync drops them
      // (measured): open synchronously. A CSV open reads the header and at most
      // AUTODETECT_SIZE_LIMIT (100 kB) to guess types, so the event loop is held only briefly.
      return gdal.drivers.get(ref.driver).open(ref.path, 'r', ref.openOptions);
    }
    // Not gdal.openAsync(path, mode, drivers): with a driver list gdal-async 3.12 opens the file
    // with every listed driver at once and keeps whichever finishes first (KML or LIBKML, GPKG or
    // SQLite, a different one from call to call), leaving the other handles open. One open in
    // GDAL's own driver order is deterministic; a driver we refuse is closed and refused after.
    refuseIndirection(ref.path);
    const ds = await gdal.openAsync(ref.path, 'r');
    if (!uploadDrivers().includes(ds.driver.description)) {
      const name = ds.driver.description;
      ds.close();
      throw new DomainError('invalid_source', `Files read by the ${name} driver are not accepted as uploads (they can point at other files or services)`);
    }
    return ds;
  } catch (err) {
    if (err instanceof DomainError) throw err;
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
export async function withDataset<T>(ref: DatasetRef, fn: (ds: Dataset) => Promise<T>): Promise<T> {
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
 * 49 wrong answers in 300 alternating opens). A garbage collection drops unreferenced wrappers
 * from that cache, so a read after it sees the layer's own SRS; but a full collection of a
 * worker's heap costs 100–300 ms of CPU with the event loop stopped, and a Run read two CRSs
 * (extract and deliver): most of a small Run's CPU (docs/decisions.md, "cheaper Runs").
 *
 * So the collection runs only when a read returned a stale wrapper, which is recognisable: every
 * wrapper of a layer's SRS comes from a read here, which notes what it was read from, and a
 * stale one is a wrapper already handed out for another (closed) layer or dataset. A wrapper
 * seen for the first time is the object's own. The processes run with --expose-gc for the
 * collection; without it the stale read is kept, with the risk logged once.
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

/** Each SRS wrapper handed out, with the layer or dataset it was read from. */
const readFrom = new WeakMap<SpatialReference, WeakRef<object>>();
/** Full collections made because a read met a stale wrapper (tests look at it). */
export const srsCollections = { count: 0 };

function srsOf(owner: object, read: () => SpatialReference | null): SpatialReference | null {
  const stale = (srs: SpatialReference | null) => srs !== null && readFrom.has(srs) && readFrom.get(srs)!.deref() !== owner;
  let srs = read();
  if (stale(srs)) {
    srs = null; // the stale wrapper must be unreachable for the collection to drop it
    srsCollections.count += 1;
    collectStaleWrappers();
    srs = read();
  }
  if (srs) readFrom.set(srs, new WeakRef(owner));
  return srs;
}

/**
 * The CRS (as WKT, or null) of layers already read, by file identity: a collection costs about
 * 45 ms in the API process (every heap object is visited), more than the rest of a data preview,
 * and the files read again and again (a Workspace's upload, at every preview) never change. A new
 * SpatialReference built from WKT owns its native object, so it cannot meet the stale-wrapper
 * problem, which only concerns wrappers of an SRS that a layer owns.
 */
const knownSrs = new Map<string, string | null>();
const KNOWN_SRS_MAX = 512;

function fileIdentity(layer: Layer): string | undefined {
  try {
    const file = layer.ds.description;
    const st = statSync(file);
    // A file rewritten in place gets a new size, mtime or inode: a new key.
    return `${file}\u0000${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}\u0000${layer.name}`;
  } catch {
    return undefined; // not a plain file (/vsizip/…, a service): read it the careful way each time
  }
}

export function layerSrs(layer: Layer): SpatialReference | null {
  const key = fileIdentity(layer);
  const wkt = key === undefined ? undefined : knownSrs.get(key);
  if (wkt !== undefined) return wkt === null ? null : gdal.SpatialReference.fromWKT(wkt);
  const srs = srsOf(layer, () => layer.srs);
  if (key !== undefined) {
    if (knownSrs.size >= KNOWN_SRS_MAX) knownSrs.delete(knownSrs.keys().next().value!);
    knownSrs.set(key, srs ? srs.toWKT() : null);
  }
  return srs;
}

export function datasetSrs(ds: Dataset): SpatialReference | null {
  return srsOf(ds, () => ds.srs);
}
