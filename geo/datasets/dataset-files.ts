import { copyFile, link, mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { DomainError } from '../../domain/errors.js';
import type { DatasetRef } from '../gdal/gdal.js';
import { extractZip } from './zip.js';
import type { ReadOptions } from './read-options.js';
import { isParquetDataset, prepareParquet } from '../formats/geoparquet.js';
import { refFor } from './dataset-at.js';
import { findDatasetIn } from './find-dataset.js';
import { extensionOf, safeFilename, stemOf } from './file-names.js';
import { isOneColumnCsv, readOneColumnCsv } from './one-column-csv.js';

// Defined beside openDataset, which opens one; most callers know it from here.
export type { DatasetRef } from '../gdal/gdal.js';
// A dataset's files as callers know them from here: its path on disk, the names of its files.
export { csvOpenOptions, datasetAt } from './dataset-at.js';
export { extensionOf, safeFilename, stemOf } from './file-names.js';
export { findDatasetIn } from './find-dataset.js';

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

async function linkOrCopy(from: string, to: string) {
  try {
    await link(from, to);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new DomainError('invalid_source', 'The upload was already prepared');
    await copyFile(from, to);
  }
}
