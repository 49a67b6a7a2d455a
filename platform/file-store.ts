import { createReadStream } from 'node:fs';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { resolveRange, RangeNotSatisfiable, type ByteRange, type ResolvedRange } from './byte-range.js';
import { transferWriter } from './file-writer.js';

/*
 * The files of Workspaces and Runs: a Workspace's upload, prepared dataset and outputs, a Run's
 * step folders. Everything else names them by owner (a Workspace or Run id) and a name relative to
 * that owner's files, so events, read models and activity payloads never hold a machine's path.
 *
 * GDAL, sandboxes and connectors work on local files, so the seam has two directions:
 * - reading: `local(owner, name)` gives a local copy of a file or folder (a no-op in the data
 *   folder; a download into this process's bounded cache with object storage);
 * - writing: work writes into `workDir(owner, name)`, then `publish(owner, name)` makes what it
 *   wrote visible to every other process (a no-op in the data folder; an upload with object storage).
 * LocalFileStore keeps the files in the data folder (one machine); S3FileStore (s3-file-store.ts)
 * keeps them in a bucket, so API replicas and workers on any host share nothing but storage.
 */

/** Whose files: every id of one kind has one prefix (ws_…, run_…), checked before any path is built. */
export type FileArea = 'workspaces' | 'runs';

const owners: Record<FileArea, RegExp> = { workspaces: /^ws_[0-9A-Za-z]+$/, runs: /^run_[0-9A-Za-z]+$/ };

export function areaOf(owner: string): FileArea {
  for (const [area, pattern] of Object.entries(owners) as [FileArea, RegExp][]) if (pattern.test(owner)) return area;
  throw new Error(`not the id of a Workspace or a Run: ${JSON.stringify(owner)}`);
}

export const isOwnerOf = (area: FileArea, owner: string) => owners[area].test(owner);

/** A name among an owner's files, normalized; refuses anything that would leave them. */
export function checkedName(owner: string, name: string): string {
  const normal = path.posix.normalize(name.split(path.sep).join('/')).replace(/\/+$/, '');
  if (normal === '.' || normal === '') return '';
  if (path.posix.isAbsolute(normal) || normal === '..' || normal.startsWith('../')) throw new Error(`path escapes the folder of ${owner}`);
  return normal;
}

export interface FileStore {
  /** Streams `body` into the owner's file `name` (replacing it); resolves to its size in bytes. */
  put(owner: string, name: string, body: Readable): Promise<number>;
  /**
   * Streams one of the owner's files back (`size` is the whole file's); with a range, only those
   * bytes (`range` says which), or RangeNotSatisfiable when the range is beyond the file.
   */
  get(owner: string, name: string, range?: ByteRange): Promise<{ body: Readable; size: number; range?: ResolvedRange }>;
  /**
   * A local path of the owner's file or folder `name`, with everything in it. With object storage
   * this is a copy in a bounded cache: use it for the work at hand, never keep the path.
   */
  local(owner: string, name: string): Promise<string>;
  /** A fresh, empty local folder `name` among the owner's files (whatever an earlier attempt left there is gone). */
  workDir(owner: string, name: string): Promise<string>;
  /** Makes what was written into workDir(owner, name) readable by every process (replacing what an earlier attempt published). */
  publish(owner: string, name: string): Promise<void>;
  /** The name of a file that the owner's work wrote at a local path (the inverse of local). */
  nameOf(owner: string, local: string): string;
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
    await pipeline(body, transferWriter(file));
    return (await stat(file)).size;
  }

  async get(owner: string, name: string, range?: ByteRange): Promise<{ body: Readable; size: number; range?: ResolvedRange }> {
    return readLocal(this.localPath(owner, name), range);
  }

  /** The files are here already: no copy. */
  async local(owner: string, name: string): Promise<string> {
    return this.localPath(owner, name);
  }

  async workDir(owner: string, name: string): Promise<string> {
    const dir = this.localPath(owner, name);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    return dir;
  }

  /** Written where every process of this machine reads: nothing to do. */
  async publish(owner: string, name: string): Promise<void> {
    this.localPath(owner, name);
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

/** A local file, whole or one range of it. */
export async function readLocal(file: string, range?: ByteRange): Promise<{ body: Readable; size: number; range?: ResolvedRange }> {
  const { size } = await stat(file);
  if (!range) return { body: createReadStream(file), size };
  const resolved = resolveRange(range, size);
  if (!resolved) throw new RangeNotSatisfiable(size);
  return { body: createReadStream(file, resolved), size, range: resolved };
}

/** A local path of one of the owner's files, with the rest of its folder beside it (a delivery's input). */
export async function localFile(files: FileStore, owner: string, name: string): Promise<string> {
  return path.join(await files.local(owner, path.posix.dirname(name)), path.posix.basename(name));
}
