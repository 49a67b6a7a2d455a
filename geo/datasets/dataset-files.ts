import { createReadStream, createWriteStream } from 'node:fs';
import { copyFile, link, mkdir, open, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { DomainError } from '../../domain/errors.js';
import { errorText, gdal, openAs, scrubPaths, type DatasetRef } from '../gdal/gdal.js';
import { extractZip } from './zip.js';
import type { ReadOptions } from './read-options.js';
import { isParquetDataset, prepareParquet } from '../formats/geoparquet.js';

// Defined beside openDataset, which opens one; most callers know it from here.
export type { DatasetRef } from '../gdal/gdal.js';

/** GDAL CSV open options that turn WKT or lon/lat columns into a geometry. */
export const csvOpenOptions = [
  'GEOM_POSSIBLE_NAMES=wkt,geom,geometry,the_geom',
  'X_POSSIBLE_NAMES=lon,long,longitude,x,lng',
  'Y_POSSIBLE_NAMES=lat,latitude,y',
  'KEEP_GEOM_COLUMNS=NO',
  'AUTODETECT_TYPE=YES',
  'EMPTY_STRING_AS_NULL=YES',
];

export interface PrepareOptions {
  /** Most bytes a ZIP may inflate to (zip bombs); use the upload limit or a multiple of it. */
  maxUncompressedBytes: number;
  /** Most entries a ZIP may hold. */
  maxEntries?: number;
  /** The CRS and (CSV) coordinate columns the caller says the data has (geo/datasets/read-options.ts). */
  read?: ReadOptions;
}

/**
 * Makes an uploaded file openable by GDAL, inside workDir (created if needed):
 * - the file is linked (or copied) under its original name, since GDAL names layers after files
 *   and picks some drivers by extension;
 * - a `.zip` is extracted safely and the dataset inside is found (a shapefile with its
 *   companions, a GeoPackage, a FileGDB folder, …);
 * - `.csv` gets open options that read WKT or lon/lat columns as geometry.
 * KMZ and every other single-file format open directly. The upload itself is never changed.
 */
export async function prepareUpload(uploadPath: string, originalFilename: string, workDir: string, options: PrepareOptions): Promise<DatasetRef> {
  const name = safeFilename(originalFilename);
  const ext = extensionOf(name);
  if (['shp', 'shx', 'dbf', 'prj', 'cpg', 'sbn', 'sbx'].includes(ext)) {
    throw new DomainError('invalid_source', 'Upload a shapefile as one ZIP holding its .shp, .shx, .dbf and .prj files; separate parts are not supported', {
      filename: name,
    });
  }
  await mkdir(workDir, { recursive: true });
  let ref: DatasetRef;
  if (ext === 'zip') {
    const folder = path.join(workDir, stemOf(name) || 'archive');
    await extractZip(uploadPath, folder, {
      maxUncompressedBytes: options.maxUncompressedBytes,
      ...(options.maxEntries ? { maxEntries: options.maxEntries } : {}),
    });
    ref = await findDatasetIn(folder);
  } else {
    const target = path.join(workDir, name);
    await linkOrCopy(uploadPath, target);
    ref = refFor(target);
  }
  // GDAL 3.6 has no Parquet driver: the formats engine copies the rows into a GeoPackage (it reads
  // the coordinate or geometry columns named; the CRS given replaces the file's, as for any file).
  if (await isParquetDataset(ref.path)) {
    const copy = await prepareParquet(ref, path.join(workDir, 'parquet'), options.read);
    return options.read?.sourceCrs ? { ...copy, assumedCrs: options.read.sourceCrs, crsOverride: true } : copy;
  }
  if (options.read?.geometryColumn) {
    throw new DomainError('invalid_parameter', 'geometry_column applies to Parquet files; this upload is not one', { parameter: 'geometry_column' });
  }
  if (options.read) ref = withReadOptions(ref, options.read);
  if (ref.driver === 'CSV' && (await isOneColumnCsv(ref.path))) return readOneColumnCsv(ref, path.join(workDir, 'one-column-csv'));
  return ref;
}

/** The caller's reading options on a prepared dataset: its CRS, and the columns of a CSV's coordinates. */
function withReadOptions(ref: DatasetRef, read: ReadOptions): DatasetRef {
  let out = ref;
  if (read.xColumn && read.yColumn) {
    if (ref.driver !== 'CSV') {
      throw new DomainError('invalid_parameter', 'x_column and y_column apply to CSV files; this upload holds its geometries itself', {
        parameter: 'x_column',
      });
    }
    for (const name of [read.xColumn, read.yColumn, read.zColumn].filter(Boolean) as string[]) {
      if (/[,*]/.test(name))
        throw new DomainError('invalid_parameter', `Column names with commas or asterisks cannot be coordinate columns: ${JSON.stringify(name)}`, {
          parameter: 'x_column',
        });
    }
    const kept = ref.openOptions.filter((o) => !/^(X|Y|Z|GEOM)_POSSIBLE_NAMES=/.test(o));
    const columns = [`X_POSSIBLE_NAMES=${read.xColumn}`, `Y_POSSIBLE_NAMES=${read.yColumn}`, ...(read.zColumn ? [`Z_POSSIBLE_NAMES=${read.zColumn}`] : [])];
    out = { ...out, openOptions: [...columns, ...kept] };
  }
  if (read.sourceCrs) {
    // A CSV has no CRS of its own: the given one is simply assumed. Other files have theirs replaced.
    out = { ...out, assumedCrs: read.sourceCrs, ...(ref.driver === 'CSV' ? {} : { crsOverride: true }) };
  }
  return out;
}

/** Whether two paths name one regular file (prepareUpload hard-links what it need not change). */
async function oneFile(a: string, b: string): Promise<boolean> {
  if (path.resolve(a) === path.resolve(b)) return false;
  const [x, y] = await Promise.all([stat(a), stat(b)]).catch(() => [null, null]);
  return !!x && !!y && x.isFile() && y.isFile() && x.ino === y.ino && x.dev === y.dev;
}

/*
 * prepareUpload hard-links a file it need not change (a GeoPackage, a GeoJSON), so the upload and
 * the dataset are then one file under two names. Storage that keeps names, not files (object
 * storage), would hold two copies: a Run's extract of a million points stored 284 MB for its
 * 142 MB file, a Workspace upload twice its size. The two helpers below keep one name.
 */

/** For a Run's extract: the upload's name is removed, and the path that holds its bytes answered. */
export async function withoutSecondName(upload: string, dataset: DatasetRef): Promise<string> {
  if (!(await oneFile(upload, dataset.path))) return upload;
  await rm(upload);
  return dataset.path;
}

/**
 * For a Workspace, whose upload is stored already as it arrives: the dataset is read from the
 * upload itself (same file name, so the same driver choice) and its own name removed.
 */
export async function datasetAtUpload(upload: string, dataset: DatasetRef): Promise<DatasetRef> {
  if (path.basename(upload) !== path.basename(dataset.path) || !(await oneFile(upload, dataset.path))) return dataset;
  await rm(dataset.path);
  return { ...dataset, path: upload };
}

/** Whether the CSV's header has no separator outside quotes (GDAL's CSV reader refuses those). */
async function isOneColumnCsv(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const buf = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    let quoted = false;
    for (const ch of buf.subarray(0, bytesRead).toString('utf8')) {
      if (ch === '"') quoted = !quoted;
      else if (!quoted && (ch === '\n' || ch === '\r')) return true;
      else if (!quoted && ',;\t|'.includes(ch)) return false;
    }
    return true;
  } finally {
    await handle.close();
  }
}

const PAD_COLUMN = '__geoflow_pad';

/** Appends a second column to every record (outside quoted values): named in the header, empty below. */
function padRecords(): Transform {
  let quoted = false;
  let lineHasText = false;
  let header = true;
  const pad = () => {
    const text = header ? `,${PAD_COLUMN}` : ',';
    header = false;
    lineHasText = false;
    return text;
  };
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      let out = '';
      for (const ch of chunk.toString('utf8')) {
        if (ch === '"') quoted = !quoted;
        if (!quoted && (ch === '\n' || ch === '\r')) {
          if (lineHasText) out += pad();
        } else {
          lineHasText = true;
        }
        out += ch;
      }
      done(null, out);
    },
    flush(done) {
      done(null, lineHasText ? pad() : '');
    },
  });
}

/**
 * GDAL 3.6's CSV reader refuses a file whose header has one column (`id\n1\n2\n`: nothing tells
 * it the separator). Such a file is read through a copy with an empty second column, with the
 * same open options (types detected, WKT read), into a GeoPackage named like the CSV; the padding
 * column is dropped there. The Workspace still says CSV.
 */
async function readOneColumnCsv(ref: DatasetRef, dir: string): Promise<DatasetRef> {
  await mkdir(dir, { recursive: true });
  const stem = stemOf(ref.path);
  const padded = path.join(dir, `${stem}.csv`);
  const gpkg = path.join(dir, `${stem}.gpkg`);
  try {
    // Decoded by the read stream, so no chunk ends inside a multi-byte character.
    await pipeline(createReadStream(ref.path, { encoding: 'utf8' }), padRecords(), createWriteStream(padded));
    const csv = gdal.drivers.get('CSV').open(padded, 'r', ref.openOptions);
    try {
      // A GeoPackage layer without a CRS would read as "undefined geographic": give it the assumed one.
      (await gdal.vectorTranslateAsync(gpkg, csv, ['-f', 'GPKG', ...(ref.assumedCrs ? ['-a_srs', ref.assumedCrs] : [])])).close();
    } finally {
      csv.close();
    }
    const out = await openAs('GPKG', gpkg, 'r+');
    try {
      const layer = out.layers.get(0);
      layer.fields.remove(layer.fields.indexOf(PAD_COLUMN));
    } finally {
      out.close();
    }
  } catch (err) {
    throw new DomainError('invalid_source', 'GDAL cannot read the one-column CSV', { reason: scrubPaths(errorText(err)) });
  } finally {
    await rm(padded, { force: true });
  }
  return { path: gpkg, openOptions: [], warnings: ref.warnings, uploadDriver: 'CSV', ...(ref.assumedCrs ? { assumedCrs: ref.assumedCrs } : {}) };
}

/** A dataset already on disk (a pipeline output, a file from an import). */
export function datasetAt(file: string): DatasetRef {
  return refFor(file);
}

function refFor(file: string): DatasetRef {
  const ext = extensionOf(file);
  if (ext === 'csv' || ext === 'tsv') {
    return { path: file, openOptions: [...csvOpenOptions], driver: 'CSV', assumedCrs: 'EPSG:4326', warnings: [] };
  }
  return { path: file, openOptions: [], warnings: [] };
}

async function linkOrCopy(from: string, to: string) {
  try {
    await link(from, to);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new DomainError('invalid_source', 'The upload was already prepared');
    await copyFile(from, to);
  }
}

/**
 * The file name without any directory part and without characters that trouble file systems or
 * GDAL's connection-string prefixes; non-ASCII letters are kept (they become layer names).
 */
export function safeFilename(original: string): string {
  const base = original.split(/[\\/]/).pop() ?? '';
  let cleaned = base
    .normalize('NFC')
    .replace(/[\u0000-\u001f\u007f:*?"<>|]/g, '_')
    .replace(/^[.\s]+/, '')
    .trim();
  if (Buffer.byteLength(cleaned) > 200) {
    const ext = extensionOf(cleaned);
    let stem = stemOf(cleaned);
    while (Buffer.byteLength(stem) > 180) stem = stem.slice(0, -1);
    cleaned = ext ? `${stem}.${ext}` : stem;
  }
  return cleaned || 'upload';
}

export function extensionOf(file: string): string {
  const base = path.basename(file);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot + 1).toLowerCase() : '';
}

export function stemOf(file: string): string {
  const base = path.basename(file);
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}

/**
 * Extensions of datasets, best first. A GeoPackage or FileGDB is usually "the" dataset of a ZIP;
 * shapefiles next; sidecar files (.shx, .dbf, .prj, .xml, .txt) are never chosen.
 */
const datasetExtensions = [
  'gdb',
  'gpkg',
  'sqlite',
  'shp',
  'fgb',
  'geojson',
  'json',
  'geojsonl',
  'geojsons',
  'kml',
  'kmz',
  'gpx',
  'gml',
  'tab',
  'mif',
  'dxf',
  'parquet',
  'xlsx',
  'ods',
  'csv',
  'tsv',
  'tif',
  'tiff',
  'jp2',
  'asc',
  'png',
  'jpg',
  'jpeg',
  'nc',
  'img',
];

interface Found {
  rel: string;
  ext: string;
}

async function walk(root: string): Promise<Found[]> {
  const found: Found[] = [];
  async function visit(dir: string, rel: string) {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      // macOS resource forks and hidden files are never datasets.
      if (e.name.startsWith('.') || e.name === '__MACOSX') continue;
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      const ext = extensionOf(e.name);
      if (e.isDirectory()) {
        if (ext === 'gdb') found.push({ rel: childRel, ext });
        else await visit(path.join(dir, e.name), childRel);
      } else if (e.isFile()) {
        found.push({ rel: childRel, ext });
      }
    }
  }
  await visit(root, '');
  return found;
}

/** The deepest folder holding every path (relative, POSIX), "" for the root; Hive key=value folders are not roots. */
function commonFolder(rels: string[]): string {
  const split = rels.map((r) =>
    path.posix
      .dirname(r)
      .split('/')
      .filter((p) => p !== '.'),
  );
  const common: string[] = [];
  for (let i = 0; split.every((parts) => i < parts.length && parts[i] === split[0]![i]); i++) common.push(split[0]![i]!);
  while (common.length && common[common.length - 1]!.includes('=')) common.pop();
  return common.join('/');
}

/** Finds the dataset GDAL should open in an extracted folder. */
export async function findDatasetIn(folder: string): Promise<DatasetRef> {
  const files = await walk(folder);
  const candidates = files
    .filter((f) => datasetExtensions.includes(f.ext))
    .sort((a, b) => datasetExtensions.indexOf(a.ext) - datasetExtensions.indexOf(b.ext) || a.rel.localeCompare(b.rel));
  const best = candidates[0];
  if (!best) {
    const names = files.slice(0, 20).map((f) => f.rel);
    throw new DomainError('invalid_source', 'The ZIP holds no dataset GDAL can read (expected a .shp with its .shx and .dbf, a .gpkg, a .geojson, …)', {
      files: names,
    });
  }
  const warnings: string[] = [];
  let chosen: DatasetRef;
  let used: Set<string>;
  if (best.ext === 'shp') {
    // Shapefiles in one folder open together, one layer each; GDAL opens the folder.
    const dir = path.posix.dirname(best.rel);
    const siblings = candidates.filter((c) => c.ext === 'shp' && path.posix.dirname(c.rel) === dir);
    used = new Set(siblings.map((s) => s.rel));
    for (const shp of siblings) {
      const stem = shp.rel.slice(0, -4);
      const has = (e: string) => files.some((f) => f.rel.toLowerCase() === `${stem}.${e}`.toLowerCase());
      if (!has('dbf')) warnings.push(`${shp.rel} has no .dbf next to it: its attributes are missing`);
      if (!has('shx')) warnings.push(`${shp.rel} has no .shx next to it`);
      if (!has('prj')) warnings.push(`${shp.rel} has no .prj next to it: its coordinate system is unknown`);
    }
    // One shapefile opens as a file; several open as their folder (one layer each).
    chosen = refFor(siblings.length > 1 ? path.join(folder, dir) : path.join(folder, best.rel));
  } else if (best.ext === 'parquet') {
    // A partitioned dataset (Hive folders, part-0.parquet …) is one dataset: the folder above its parts.
    const parts = candidates.filter((c) => c.ext === 'parquet');
    const root = commonFolder(parts.map((p) => p.rel));
    used = new Set(parts.map((p) => p.rel));
    chosen = refFor(parts.length > 1 ? path.join(folder, root) : path.join(folder, best.rel));
  } else {
    used = new Set([best.rel]);
    chosen = refFor(path.join(folder, best.rel));
  }
  const ignored = candidates.filter((c) => !used.has(c.rel));
  if (ignored.length > 0) {
    warnings.push(
      `The ZIP holds ${ignored.length + used.size} datasets; opened ${used.size > 1 ? `the ${used.size} shapefiles in ${path.posix.dirname(best.rel) === '.' ? 'its root folder' : path.posix.dirname(best.rel)}` : best.rel}, ignored: ${ignored
        .slice(0, 10)
        .map((c) => c.rel)
        .join(', ')}${ignored.length > 10 ? ', …' : ''}`,
    );
  }
  chosen.warnings = warnings;
  return chosen;
}
