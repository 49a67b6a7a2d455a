import path from 'node:path';
import type { StoredDataset } from '../../domain/datasets.js';
import type { FileStore } from '../../platform/file-store.js';
import type { DatasetRef } from '../gdal/gdal.js';

/*
 * A dataset between the file store and GDAL: what events and payloads keep of it (a name among its
 * owner's files, domain/datasets.ts) and where GDAL opens it in this process (a local path).
 */

/** A dataset opened where it lies: the part of geo's DatasetRef that events keep (an absolute local path). */
export type LocalDataset = Pick<DatasetRef, 'path' | 'openOptions' | 'driver' | 'assumedCrs' | 'crsOverride' | 'warnings'>;

/** What events keep of a dataset prepared among the owner's files. */
export function storedDataset(files: FileStore, owner: string, local: LocalDataset): StoredDataset {
  return {
    path: files.nameOf(owner, local.path),
    open_options: local.openOptions,
    driver: local.driver ?? null,
    assumed_crs: local.assumedCrs ?? null,
    ...(local.crsOverride ? { crs_override: true } : {}),
  };
}

/**
 * A stored dataset as GDAL opens it, at a local path. Its whole folder is made local (a
 * shapefile's parts, a FileGDB's files lie beside or under its path).
 */
export async function localDataset(files: FileStore, owner: string, stored: StoredDataset): Promise<LocalDataset> {
  const folder = await files.local(owner, path.posix.dirname(stored.path));
  return {
    path: path.join(folder, path.posix.basename(stored.path)),
    openOptions: stored.open_options,
    ...(stored.driver ? { driver: stored.driver } : {}),
    ...(stored.assumed_crs ? { assumedCrs: stored.assumed_crs } : {}),
    ...(stored.crs_override ? { crsOverride: true } : {}),
    warnings: [],
  };
}
