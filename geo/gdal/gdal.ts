import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type * as Gdal from 'gdal-async';
import { DomainError } from '../../domain/errors.js';
import { gdalNoNetworkEnv } from '../sandbox/sandbox.js';
import type { DatasetRef } from './dataset-ref.js';
import { errorText, scrubPaths } from './gdal-text.js';

/*
 * The one place that loads gdal-async and sets process-wide GDAL options, so every geo module
 * sees the same configuration.
 *
 * - Axis order: gdal-async builds SpatialReferences in the authority's order (latitude first for
 *   EPSG:4326). Everything we write (GeoJSON, GPKG, spatial previews) is longitude/latitude, so
 *   CRSs built here follow the traditional GIS order (x = easting/longitude).
 * - Uploaded files are untrusted: GDAL has no network here (a GeoJSON `crs` link, a URL CRS or a
 *   /vsicurl/ path fails before a socket opens; sandbox.ts, gdalNoNetworkEnv) and never downloads
 *   a GML schema. GeoPackages are checked for virtual tables as they open (openInProcess).
 *
 * The native addon loads on first use, not on import: modules that only mention GDAL (the
 * operation catalogue, the connectors' pure helpers) load, and their unit specs run, on a
 * machine without the compiled addon; loading it costs about half a second, paid by whoever
 * touches GDAL first.
 */
let loaded: typeof Gdal | undefined;
function loadGdal(): typeof Gdal {
  if (loaded) return loaded;
  // SpatiaLite's file functions (BlobFromFile, ImportSHP …) exist only with this set; a view in a
  // user's GeoPackage could call them. It is read when GDAL first loads SpatiaLite, so never here.
  delete process.env.SPATIALITE_SECURITY;
  loaded = createRequire(import.meta.url)('gdal-async') as typeof Gdal;
  loaded.config.set('OSR_DEFAULT_AXIS_MAPPING_STRATEGY', 'TRADITIONAL_GIS_ORDER');
  loaded.config.set('GML_DOWNLOAD_WFS_SCHEMA', 'NO');
  loaded.config.set('GDAL_HTTP_TIMEOUT', '20');
  for (const [key, value] of Object.entries(gdalNoNetworkEnv)) loaded.config.set(key, value);
  // Importers see the module itself from now on (a live binding): the stand-in is done.
  gdal = loaded;
  return loaded;
}

/** gdal-async: a stand-in until the first property read loads it, then the module itself. */
export let gdal: typeof Gdal = new Proxy({} as typeof Gdal, { get: (_target, key) => Reflect.get(loadGdal(), key) });

export type { DatasetRef } from './dataset-ref.js';
export { errorText, scrubPaths } from './gdal-text.js';

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
 * Drivers the service's own processes (API, worker) open a user's file with. Their files cannot
 * name other files or services: a GeoPackage (SpatiaLite's virtual tables off, above), a
 * FlatGeobuf, a shapefile's companions found by its own name, a GeoJSON (whose `crs` links fail
 * without a network), a CSV, a FileGDB folder. Every other driver (a PDS4 label names any file,
 * so do ISIS3, VICAR, MRF, ENVI headers, MapInfo seamless tables, GML schemas …) reads a user's
 * file only in a sandboxed host that sees nothing but the dataset's folder (geo/isolation/).
 * Order: the one GDAL itself tries them in, so a file opens here as it would anywhere.
 */
export const IN_PROCESS_DRIVERS = ['ESRI Shapefile', 'CSV', 'GeoJSON', 'GeoJSONSeq', 'GPKG', 'OpenFileGDB', 'FlatGeobuf'] as const;

/**
 * The environment of a GDAL program that reads a user's dataset outside the sandbox (a delivery's
 * ogr2ogr, which must reach a database): no network for GDAL and PROJ, no SpatiaLite virtual
 * tables, and every driver skipped (GDAL_SKIP, comma-separated so "MapInfo File" is one name) but
 * IN_PROCESS_DRIVERS and the ones it writes with. Without GDAL_SKIP the program would open a file
 * with the first driver that claims it, which need not be the one that opened it here: a PDS4
 * label named x.csv opens here as a CSV and in a plain ogr2ogr as PDS4 (measured), reading
 * whatever file the label names.
 */
export function unsandboxedGdalEnv(writers: string[]): Record<string, string> {
  const key = writers.join(',');
  let env = unsandboxedEnvs.get(key);
  if (!env) {
    const keep = new Set<string>([...IN_PROCESS_DRIVERS, ...writers, 'MEM', 'Memory']);
    const skip: string[] = [];
    gdal.drivers.forEach((d) => {
      if (!keep.has(d.description)) skip.push(d.description);
    });
    env = { ...gdalNoNetworkEnv, SPATIALITE_LOAD: 'NO', GDAL_SKIP: skip.join(',') };
    unsandboxedEnvs.set(key, env);
  }
  return env;
}
const unsandboxedEnvs = new Map<string, Record<string, string>>();

/** Whether this process is a sandboxed GDAL host (geo/isolation/host-main.ts): there every upload driver may open. */
export const insideSandbox = () => process.env.SVC_SANDBOXED === '1';

/** A dataset none of IN_PROCESS_DRIVERS opens: it must be read in a sandboxed host. */
export class NeedsSandbox extends Error {
  constructor(readonly file: string) {
    super('the dataset must be opened in the sandbox');
  }
}

let inProcessOrder: string[] | undefined;
/** IN_PROCESS_DRIVERS that this GDAL has, in its own registration order. */
function inProcessDrivers(): string[] {
  if (!inProcessOrder) {
    const wanted = new Set<string>(IN_PROCESS_DRIVERS);
    inProcessOrder = [];
    gdal.drivers.forEach((d) => {
      if (wanted.has(d.description)) inProcessOrder!.push(d.description);
    });
  }
  return inProcessOrder;
}

/**
 * Opens a user's dataset in this process with IN_PROCESS_DRIVERS only, one driver at a time
 * (GDALOpenEx with that driver alone: no other driver ever looks at the file), or throws
 * NeedsSandbox.
 */
async function openInProcess(ref: DatasetRef): Promise<Dataset> {
  if (ref.openOptions.length > 0 && ref.driver) {
    if (!inProcessDrivers().includes(ref.driver)) throw new NeedsSandbox(ref.path);
    // Open options only exist on Driver.open, and gdal-async 3.12's Driver.openAsync drops them
    // (measured): open synchronously. A CSV open reads the header and at most
    // AUTODETECT_SIZE_LIMIT (100 kB) to guess types, so the event loop is held only briefly.
    return gdal.drivers.get(ref.driver).open(ref.path, 'r', ref.openOptions);
  }
  for (const name of inProcessDrivers()) {
    let ds: Dataset;
    try {
      ds = await gdal.drivers.get(name).openAsync(ref.path, 'r');
    } catch {
      continue; // not this driver's file
    }
    if (name === 'GPKG' && !(await onlyIndexTables(ds))) {
      ds.close();
      throw new NeedsSandbox(ref.path);
    }
    return ds;
  }
  throw new NeedsSandbox(ref.path);
}

/**
 * Whether a GeoPackage's virtual tables are only R-tree spatial indexes. SpatiaLite, which GDAL
 * loads into every SQLite connection, brings virtual table modules that read files by name
 * (VirtualText, VirtualShape, VirtualDbf …): a table declared with one, listed as a layer or read
 * by a view, hands any file the server can read to whoever previews it (measured with GDAL
 * 3.6.2). Asking sqlite_master touches no table, so nothing is read by asking; a declaration this
 * cannot read plainly counts as suspect.
 */
async function onlyIndexTables(ds: Dataset): Promise<boolean> {
  // The result set is released with the dataset.
  const result = await ds.executeSQLAsync("SELECT sql FROM sqlite_master WHERE sql LIKE '%virtual%'");
  for (let f = await result.features.firstAsync(); f; f = await result.features.nextAsync()) {
    const sql = String(f.fields.get('sql') ?? '')
      .replace(/\/\*[\s\S]*?\*\//g, ' ')
      .replace(/--[^\n]*/g, ' ');
    if (!/^\s*CREATE\s+VIRTUAL\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(?:"[^"]+"|\S+)\s+USING\s+rtree(?:_i32)?\s*\(/i.test(sql)) return false;
  }
  return true;
}

/**
 * Opens a prepared dataset read-only, with its open options. In the service's own processes only
 * through IN_PROCESS_DRIVERS (NeedsSandbox otherwise: geo/isolation/ then runs the work in a
 * sandboxed host); inside such a host through every driver allowed for uploads.
 */
export async function openDataset(ref: DatasetRef): Promise<Dataset> {
  // A VRT or service description is refused by its first bytes, here or in a host alike.
  refuseIndirection(ref.path);
  if (!insideSandbox()) {
    try {
      return await openInProcess(ref);
    } catch (err) {
      if (err instanceof NeedsSandbox) throw err;
      throw new DomainError('invalid_source', 'GDAL cannot open the file as a dataset: it is damaged or not in a supported format', {
        reason: scrubPaths(errorText(err)),
      });
    }
  }
  try {
    if (ref.openOptions.length > 0 && ref.driver) return gdal.drivers.get(ref.driver).open(ref.path, 'r', ref.openOptions);
    // Not gdal.openAsync(path, mode, drivers): with a driver list gdal-async 3.12 opens the file
    // with every listed driver at once and keeps whichever finishes first (KML or LIBKML, GPKG or
    // SQLite, a different one from call to call), leaving the other handles open. One open in
    // GDAL's own driver order is deterministic; a driver we refuse is closed and refused after.
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

/**
 * Opens a file the service knows the format of (one GDAL wrote, or a page a connector asked for
 * as Esri JSON) with that driver alone, so no other driver ever looks at it.
 */
export function openAs(driver: string, file: string, mode: 'r' | 'r+' = 'r'): Promise<Dataset> {
  return gdal.drivers.get(driver).openAsync(file, mode);
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
