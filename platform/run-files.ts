import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { DatasetRef } from '../geo/datasets/dataset-files.js';

/** A dataset as a Run's steps pass it to each other: a path relative to the Run's folder. */
export interface RunDataset {
  path: string;
  open_options: string[];
  driver: string | null;
  assumed_crs: string | null;
}

/**
 * Where a Run's files live while it runs: `SVC_DATA_DIR/runs/<runId>/<step>/`. Each step reads
 * the previous step's output from here, so the worker that runs a step must share the data
 * folder with the one that ran the step before (one machine, or one shared volume, as for
 * Workspaces). Activity payloads carry paths relative to the Run's folder, never absolute ones.
 */
export class RunFiles {
  constructor(private readonly dataDir: string) {}

  dir(runId: string): string {
    if (!/^run_[0-9A-Za-z]+$/.test(runId)) throw new Error('bad run id');
    return path.join(this.dataDir, 'runs', runId);
  }

  /** A fresh folder for one step: whatever an earlier attempt of that step left is removed. */
  stepDir(runId: string, step: string): string {
    const dir = path.join(this.dir(runId), step);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  resolve(runId: string, relative: string): string {
    const base = this.dir(runId);
    const full = path.resolve(base, relative);
    if (full !== base && !full.startsWith(base + path.sep)) throw new Error('path escapes the run folder');
    return full;
  }

  relative(runId: string, full: string): string {
    return path.relative(this.dir(runId), full);
  }

  store(runId: string, ref: DatasetRef): RunDataset {
    return { path: this.relative(runId, ref.path), open_options: ref.openOptions, driver: ref.driver ?? null, assumed_crs: ref.assumedCrs ?? null };
  }

  ref(runId: string, stored: RunDataset): DatasetRef {
    return {
      path: this.resolve(runId, stored.path),
      openOptions: stored.open_options,
      ...(stored.driver ? { driver: stored.driver } : {}),
      ...(stored.assumed_crs ? { assumedCrs: stored.assumed_crs } : {}),
      warnings: [],
    };
  }

  remove(runId: string): void {
    rmSync(this.dir(runId), { recursive: true, force: true });
  }
}
