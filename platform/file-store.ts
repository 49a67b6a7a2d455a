import { createReadStream, createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/*
 * The files of Workspaces and Runs: a Workspace's upload, prepared dataset and outputs, a Run's
 * step folders. Everything else names them by owner (a Workspace or Run id) and a name relative to
 * that owner's files, so events, read models and activity payloads never hold a machine's path.
 * Today they live in folders under the data folder (LocalFileStore); the interface is small
 * enough to be put in front of an object store, where GDAL still works on local copies
 * (`localPath`, `workDir`).
 */

/** Whose files: every id of one kind has one prefix (ws_…, run_…), checked before any path is built. */
export type FileArea = 'workspaces' | 'runs';

const owners: Record<FileArea, RegExp> = { workspaces: /^ws_[0-9A-Za-z]+$/, runs: /^run_[0-9A-Za-z]+$/ };

export function areaOf(owner: string): FileArea {
  for (const [area, pattern] of Object.entries(owners) as [FileArea, RegExp][]) if (pattern.test(owner)) return area;
  throw new Error(`not the id of a Workspace or a Run: ${JSON.stringify(owner)}`);
}

/**
 * A dataset as events and payloads keep it: a name relative to its owner's files, plus how GDAL
 * opens it. The one shape for a Workspace's upload and for what a Run's steps hand each other.
 */
export interface StoredDataset {
  path: string;
  open_options: string[];
  driver: string | null;
  /** CRS assumed for layers that carry none (CSV coordinates are WGS 84 by convention). */
  assumed_crs: string | null;
}

/** A dataset opened where it lies: the shape geo's DatasetRef takes (an absolute local path). */
export interface LocalDataset {
  path: string;
  openOptions: string[];
  driver?: string;
  assumedCrs?: string;
  warnings: string[];
}

export interface FileStore {
  /** Streams `body` into the owner's file `name` (replacing it); resolves to its size in bytes. */
  put(owner: string, name: string, body: Readable): Promise<number>;
  /** Streams one of the owner's files back. */
  get(owner: string, name: string): Promise<{ body: Readable; size: number }>;
  /** Where the owner's file `name` can be opened on this machine (by GDAL, a sandbox, a connector). */
  localPath(owner: string, name: string): string;
  /** The name of a file that the owner's work wrote at a local path (the inverse of localPath). */
  nameOf(owner: string, local: string): string;
  /** A fresh, empty local folder `name` among the owner's files (whatever an earlier attempt left there is gone). */
  workDir(owner: string, name: string): string;
  /** The owners that have files in an area, with when they last changed. */
  list(area: FileArea): Promise<{ owner: string; modifiedAt: Date }[]>;
  /** Removes one of the owner's files or folders, or (without `name`) all of them. */
  remove(owner: string, name?: string): Promise<void>;
}

/** The FileStore in folders under the data folder: `<dataDir>/workspaces/<ws_id>/…`, `<dataDir>/runs/<run_id>/…`. */
export class LocalFileStore implements FileStore {
  constructor(private readonly dataDir: string) {}

  private root(owner: string): string {
    return path.join(this.dataDir, areaOf(owner), owner);
  }

  /** Resolves a name, refusing anything that would leave the owner's folder. */
  localPath(owner: string, name: string): string {
    const base = this.root(owner);
    const full = path.resolve(base, name);
    if (full !== base && !full.startsWith(base + path.sep)) throw new Error(`path escapes the folder of ${owner}`);
    return full;
  }

  nameOf(owner: string, full: string): string {
    return path.relative(this.root(owner), full);
  }

  async put(owner: string, name: string, body: Readable): Promise<number> {
    const file = this.localPath(owner, name);
    await mkdir(path.dirname(file), { recursive: true });
    await pipeline(body, createWriteStream(file));
    return (await stat(file)).size;
  }

  async get(owner: string, name: string): Promise<{ body: Readable; size: number }> {
    const file = this.localPath(owner, name);
    const { size } = await stat(file);
    return { body: createReadStream(file), size };
  }

  workDir(owner: string, name: string): string {
    const dir = this.localPath(owner, name);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    return dir;
  }

  async list(area: FileArea): Promise<{ owner: string; modifiedAt: Date }[]> {
    const base = path.join(this.dataDir, area);
    const entries = await readdir(base).catch(() => [] as string[]);
    const found = [];
    for (const owner of entries) {
      if (!owners[area].test(owner)) continue;
      const info = await stat(path.join(base, owner)).catch(() => null);
      if (info) found.push({ owner, modifiedAt: info.mtime });
    }
    return found;
  }

  async remove(owner: string, name?: string): Promise<void> {
    await rm(name === undefined ? this.root(owner) : this.localPath(owner, name), { recursive: true, force: true });
  }
}

/** What events keep of a dataset prepared among the owner's files. */
export function storedDataset(files: FileStore, owner: string, local: LocalDataset): StoredDataset {
  return { path: files.nameOf(owner, local.path), open_options: local.openOptions, driver: local.driver ?? null, assumed_crs: local.assumedCrs ?? null };
}

/** A stored dataset as GDAL opens it, at its local path. */
export function localDataset(files: FileStore, owner: string, stored: StoredDataset): LocalDataset {
  return {
    path: files.localPath(owner, stored.path),
    openOptions: stored.open_options,
    ...(stored.driver ? { driver: stored.driver } : {}),
    ...(stored.assumed_crs ? { assumedCrs: stored.assumed_crs } : {}),
    warnings: [],
  };
}
