import type { DatasetRef } from '../../geo/dataset-files.js';
import type { StoredDataset } from '../../domain/workspaces/workspace.js';
import type { WorkspaceFiles } from '../../platform/workspace-files.js';

/** Stored datasets keep paths relative to the Workspace folder; GDAL needs absolute ones. */
export function toStored(files: WorkspaceFiles, workspaceId: string, ref: DatasetRef): StoredDataset {
  return {
    path: files.relative(workspaceId, ref.path),
    open_options: ref.openOptions,
    driver: ref.driver ?? null,
    assumed_crs: ref.assumedCrs ?? null,
  };
}

export function toRef(files: WorkspaceFiles, workspaceId: string, stored: StoredDataset): DatasetRef {
  return {
    path: files.resolve(workspaceId, stored.path),
    openOptions: stored.open_options,
    ...(stored.driver ? { driver: stored.driver } : {}),
    ...(stored.assumed_crs ? { assumedCrs: stored.assumed_crs } : {}),
    warnings: [],
  };
}
