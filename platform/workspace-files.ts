import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { StoredDataset } from '../domain/workspaces/workspace.js';
import type { DatasetRef } from '../geo/datasets/dataset-files.js';

/**
 * Where a Workspace's files live under the data folder. Events and read models keep paths
 * relative to the Workspace folder; responses never contain any path.
 */
export class WorkspaceFiles {
  constructor(private readonly dataDir: string) {}

  root(): string {
    return path.join(this.dataDir, 'workspaces');
  }

  dir(workspaceId: string): string {
    if (!/^ws_[0-9A-Za-z]+$/.test(workspaceId)) throw new Error('bad workspace id');
    return path.join(this.root(), workspaceId);
  }

  /** Resolves a stored relative path, refusing anything that would leave the Workspace folder. */
  resolve(workspaceId: string, relative: string): string {
    const base = this.dir(workspaceId);
    const full = path.resolve(base, relative);
    if (full !== base && !full.startsWith(base + path.sep)) throw new Error('path escapes the workspace folder');
    return full;
  }

  relative(workspaceId: string, full: string): string {
    return path.relative(this.dir(workspaceId), full);
  }

  /** A fresh scratch folder for one preview or conversion; the caller removes it. */
  scratch(workspaceId: string, name: string): string {
    const dir = path.join(this.dir(workspaceId), 'tmp', name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  outputDir(workspaceId: string, conversionId: string): string {
    if (!/^[0-9A-Za-z_]+$/.test(conversionId)) throw new Error('bad conversion id');
    return path.join(this.dir(workspaceId), 'outputs', conversionId);
  }

  /** What events keep of a prepared upload: its path relative to the Workspace folder. */
  storedDataset(workspaceId: string, ref: DatasetRef): StoredDataset {
    return {
      path: this.relative(workspaceId, ref.path),
      open_options: ref.openOptions,
      driver: ref.driver ?? null,
      assumed_crs: ref.assumedCrs ?? null,
    };
  }

  /** The stored dataset as GDAL opens it, with an absolute path inside the Workspace folder. */
  datasetRef(workspaceId: string, stored: StoredDataset): DatasetRef {
    return {
      path: this.resolve(workspaceId, stored.path),
      openOptions: stored.open_options,
      ...(stored.driver ? { driver: stored.driver } : {}),
      ...(stored.assumed_crs ? { assumedCrs: stored.assumed_crs } : {}),
      warnings: [],
    };
  }

  remove(workspaceId: string): void {
    rmSync(this.dir(workspaceId), { recursive: true, force: true });
  }
}
