import { DeleteObjectsCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, S3Client, type _Object } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
import path from 'node:path';
import { PassThrough, type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { rangeHeader, RangeNotSatisfiable, type ByteRange, type ResolvedRange } from './byte-range.js';
import { areaOf, checkedName, isOwnerOf, readLocal, type FileArea, type FileStore } from './file-store.js';
import { transferWriter } from './file-writer.js';

/*
 * The FileStore in an S3-compatible bucket (AWS S3, MinIO, Ceph RGW): the objects
 * `<prefix><area>/<owner>/<name>` are the truth, shared by every API replica and worker; each
 * process keeps local copies of what it reads or writes in its own cache folder, bounded in size
 * (least recently used first out) and safe to lose: a fresh process, or one on another host,
 * fetches what it needs again. GDAL works on those local copies: measured against /vsis3/ in
 * bench/storage.ts (docs/decisions.md), a download then a local read was the faster path.
 */

export interface S3StorageSettings {
  bucket: string;
  /** Key prefix, empty or ending in '/'. */
  prefix: string;
  endpoint?: string | undefined;
  region: string;
  forcePathStyle: boolean;
  /** Where this process's cache lives (a folder of its own: see cacheFolderFor). */
  cacheDir: string;
  /** Soft bound of the cache: folders unused for minIdleMs are dropped, oldest first, above it. */
  cacheBytes: number;
  /** A cached folder is never dropped sooner after its last use (the work on it may still run). */
  minIdleMs?: number;
  /** Explicit keys; without them the SDK's usual chain (environment, profile, instance or task role). */
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
  client?: S3Client;
}

/** s3://bucket/prefix → bucket and key prefix (ending in '/' unless empty). */
export function parseStorageUrl(url: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([a-z0-9][a-z0-9.-]{1,61}[a-z0-9])(?:\/(.*))?$/.exec(url);
  if (!match) throw new Error(`SVC_STORAGE_URL must look like s3://bucket/prefix, got "${url}"`);
  const rest = (match[2] ?? '').replace(/^\/+|\/+$/g, '');
  return { bucket: match[1]!, prefix: rest ? `${rest}/` : '' };
}

interface CacheEntry {
  bytes: number;
  lastUsed: number;
}

const PART_BYTES = 8 * 1024 * 1024;

export class S3FileStore implements FileStore {
  private readonly client: S3Client;
  /** Names (owner/name) whose local copy is whole: read from, written into, or published. */
  private readonly entries = new Map<string, CacheEntry>();
  private readonly fetching = new Map<string, Promise<string>>();
  private readonly minIdleMs: number;

  constructor(private readonly settings: S3StorageSettings) {
    this.minIdleMs = settings.minIdleMs ?? 10 * 60_000;
    this.client =
      settings.client ??
      new S3Client({
        region: settings.region,
        ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
        forcePathStyle: settings.forcePathStyle,
        ...(settings.credentials ? { credentials: settings.credentials } : {}),
        // S3-compatible stores often refuse the SDK's default CRC32 trailers.
        ...(settings.endpoint ? { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' } : {}),
        maxAttempts: 4,
      });
  }

  private key(owner: string, name = ''): string {
    const n = checkedName(owner, name);
    return `${this.settings.prefix}${areaOf(owner)}/${owner}${n ? `/${n}` : ''}`;
  }

  private cachePath(owner: string, name = ''): string {
    const n = checkedName(owner, name);
    return path.join(this.settings.cacheDir, areaOf(owner), owner, ...(n ? n.split('/') : []));
  }

  nameOf(owner: string, local: string): string {
    return path.relative(this.cachePath(owner), local).split(path.sep).join('/');
  }

  /** The cached entry holding owner/name whole (itself or a folder above it), if any. */
  private covering(owner: string, name: string): CacheEntry | undefined {
    const parts = name ? name.split('/') : [];
    for (let i = parts.length; i >= 0; i -= 1) {
      const entry = this.entries.get(`${owner}/${parts.slice(0, i).join('/')}`);
      if (entry) return entry;
    }
    return undefined;
  }

  /** Forgets owner/name and every entry under it. */
  private forget(owner: string, name: string): void {
    const id = `${owner}/${name}`;
    for (const key of [...this.entries.keys()]) if (key === id || key.startsWith(name ? `${id}/` : id)) this.entries.delete(key);
  }

  /** Objects of owner/name: the object itself, or everything under it as a folder. */
  private async objects(owner: string, name: string): Promise<_Object[]> {
    const key = this.key(owner, name);
    const found: _Object[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.settings.bucket, Prefix: key, ContinuationToken: token }));
      for (const o of page.Contents ?? []) if (o.Key === key || o.Key!.startsWith(`${key}/`)) found.push(o);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return found;
  }

  private async upload(key: string, body: Readable): Promise<void> {
    // Parts of 8 MiB, two at a time: memory stays bounded whatever the size.
    await new Upload({ client: this.client, params: { Bucket: this.settings.bucket, Key: key, Body: body }, partSize: PART_BYTES, queueSize: 2 }).done();
  }

  /**
   * Streams the body to storage and, at the same time, into the local cache (the process that
   * received an upload prepares it next): no full copy in memory, backpressure from both sides.
   */
  async put(owner: string, name: string, body: Readable): Promise<number> {
    const n = checkedName(owner, name);
    const local = this.cachePath(owner, n);
    await mkdir(path.dirname(local), { recursive: true });
    let size = 0;
    const counted = body.pipe(
      new Transform({
        transform(chunk: Buffer, _enc, done) {
          size += chunk.length;
          done(null, chunk);
        },
      }),
    );
    body.once('error', (error) => counted.destroy(error));
    const toStorage = new PassThrough();
    const toCache = new PassThrough();
    counted.pipe(toStorage);
    counted.pipe(toCache);
    counted.once('error', (error) => {
      toStorage.destroy(error);
      toCache.destroy(error);
    });
    await Promise.all([this.upload(this.key(owner, n), toStorage), pipeline(toCache, transferWriter(local))]);
    this.entries.set(`${owner}/${n}`, { bytes: size, lastUsed: Date.now() });
    await this.evict();
    return size;
  }

  async get(owner: string, name: string, range?: ByteRange): Promise<{ body: Readable; size: number; range?: ResolvedRange }> {
    const n = checkedName(owner, name);
    if (this.covering(owner, n)) {
      const info = await stat(this.cachePath(owner, n)).catch(() => null);
      if (info?.isFile()) return readLocal(this.cachePath(owner, n), range);
    }
    if (!range) {
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.key(owner, n) }));
      return { body: got.Body as Readable, size: Number(got.ContentLength ?? 0) };
    }
    // The store answers the range itself: "Content-Range: bytes a-b/size", or 416 InvalidRange.
    try {
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: this.key(owner, n), Range: rangeHeader(range) }));
      const m = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(got.ContentRange ?? '');
      if (!m) return { body: got.Body as Readable, size: Number(got.ContentLength ?? 0) }; // a store that ignored the range: the whole object
      return { body: got.Body as Readable, size: Number(m[3]), range: { start: Number(m[1]), end: Number(m[2]) } };
    } catch (err) {
      const e = err as { name?: string; $metadata?: { httpStatusCode?: number } };
      if (e.name === 'InvalidRange' || e.$metadata?.httpStatusCode === 416) {
        // The SDK's error does not carry the object's size: ask for it (the 416 answer says it).
        const head = await this.client.send(new HeadObjectCommand({ Bucket: this.settings.bucket, Key: this.key(owner, n) }));
        throw new RangeNotSatisfiable(Number(head.ContentLength ?? 0));
      }
      throw err;
    }
  }

  async local(owner: string, name: string): Promise<string> {
    const n = checkedName(owner, name);
    const here = this.cachePath(owner, n);
    const entry = this.covering(owner, n);
    if (entry) {
      entry.lastUsed = Date.now();
      // Dropped from the cache folder behind our back (an operator, a full disk cleanup): fetch again.
      if (
        await stat(here).then(
          () => true,
          () => false,
        )
      )
        return here;
      this.forget(owner, n);
    }
    const id = `${owner}/${n}`;
    let pending = this.fetching.get(id);
    if (!pending) {
      pending = this.fetch(owner, n).finally(() => this.fetching.delete(id));
      this.fetching.set(id, pending);
    }
    return pending;
  }

  /** Downloads every object of owner/name into the cache, each file written whole then renamed into place. */
  private async fetch(owner: string, name: string): Promise<string> {
    const here = this.cachePath(owner, name);
    const base = this.key(owner, name);
    let bytes = 0;
    const objects = await this.objects(owner, name);
    await inBatches(objects, 4, async (o) => {
      const rel = o.Key === base ? '' : o.Key!.slice(base.length + 1);
      const target = rel ? path.join(here, ...rel.split('/')) : here;
      bytes += o.Size ?? 0;
      const known = await stat(target).catch(() => null);
      if (known?.isFile() && known.size === o.Size) return;
      await mkdir(path.dirname(target), { recursive: true });
      const draft = `${target}.part-${randomBytes(4).toString('hex')}`;
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.settings.bucket, Key: o.Key! }));
      await pipeline(got.Body as Readable, transferWriter(draft));
      await rename(draft, target);
    });
    if (objects.length === 0) await mkdir(here, { recursive: true });
    this.entries.set(`${owner}/${name}`, { bytes, lastUsed: Date.now() });
    await this.evict();
    return here;
  }

  async workDir(owner: string, name: string): Promise<string> {
    const n = checkedName(owner, name);
    const dir = this.cachePath(owner, n);
    this.forget(owner, n);
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true });
    this.entries.set(`${owner}/${n}`, { bytes: 0, lastUsed: Date.now() });
    return dir;
  }

  /** Uploads the folder's files, then removes objects an earlier attempt left under it that this one did not write. */
  async publish(owner: string, name: string): Promise<void> {
    const n = checkedName(owner, name);
    const dir = this.cachePath(owner, n);
    const files = await filesUnder(dir);
    const base = this.key(owner, n);
    const earlier = await this.objects(owner, n);
    let bytes = 0;
    await inBatches(files, 4, async (rel) => {
      const file = path.join(dir, ...rel.split('/'));
      bytes += (await stat(file)).size;
      await this.upload(`${base}/${rel}`, createReadStream(file));
    });
    const written = new Set(files.map((rel) => `${base}/${rel}`));
    await this.deleteKeys(earlier.map((o) => o.Key!).filter((k) => !written.has(k)));
    this.entries.set(`${owner}/${n}`, { bytes, lastUsed: Date.now() });
    await this.evict();
  }

  async list(area: FileArea): Promise<{ owner: string; modifiedAt: Date }[]> {
    const prefix = `${this.settings.prefix}${area}/`;
    const newest = new Map<string, Date>();
    let token: string | undefined;
    do {
      const page = await this.client.send(new ListObjectsV2Command({ Bucket: this.settings.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of page.Contents ?? []) {
        const owner = o.Key!.slice(prefix.length).split('/')[0]!;
        if (!isOwnerOf(area, owner)) continue;
        const at = o.LastModified ?? new Date(0);
        const known = newest.get(owner);
        if (!known || known < at) newest.set(owner, at);
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return [...newest].map(([owner, modifiedAt]) => ({ owner, modifiedAt }));
  }

  async remove(owner: string, name?: string): Promise<void> {
    const n = name === undefined ? '' : checkedName(owner, name);
    this.forget(owner, n);
    await rm(this.cachePath(owner, n), { recursive: true, force: true });
    await this.deleteKeys((await this.objects(owner, n)).map((o) => o.Key!));
  }

  private async deleteKeys(keys: string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      const done = await this.client.send(
        new DeleteObjectsCommand({ Bucket: this.settings.bucket, Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
      );
      if (done.Errors?.length)
        throw new Error(`could not delete ${done.Errors.length} object(s) from storage: ${done.Errors[0]!.Code} ${done.Errors[0]!.Message}`);
    }
  }

  /** Drops least recently used folders, never one used within minIdleMs, until the cache fits its bound. */
  private async evict(): Promise<void> {
    let total = 0;
    for (const e of this.entries.values()) total += e.bytes;
    if (total <= this.settings.cacheBytes) return;
    const idleBefore = Date.now() - this.minIdleMs;
    const oldest = [...this.entries].filter(([, e]) => e.lastUsed < idleBefore).sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    for (const [id, e] of oldest) {
      if (total <= this.settings.cacheBytes) break;
      const slash = id.indexOf('/');
      const owner = id.slice(0, slash);
      const name = id.slice(slash + 1);
      this.forget(owner, name);
      await rm(this.cachePath(owner, name), { recursive: true, force: true });
      total -= e.bytes;
    }
  }

  /** Bytes the cache holds, as it counts them (for tests and logs). */
  cachedBytes(): number {
    let total = 0;
    for (const e of this.entries.values()) total += e.bytes;
    return total;
  }
}

/**
 * This process's own cache folder under the data folder, emptied first: the cache is safe to lose,
 * and folders of processes that no longer run on this host are removed with it.
 */
export async function cacheFolderFor(dataDir: string): Promise<string> {
  const root = path.join(dataDir, 'cache');
  const host = hostname().replace(/[^A-Za-z0-9.-]/g, '_');
  await mkdir(root, { recursive: true });
  for (const entry of await readdir(root)) {
    const match = /^(.+)-(\d+)$/.exec(entry);
    if (!match || match[1] !== host) continue;
    const pid = Number(match[2]);
    if (pid === process.pid || !alive(pid)) await rm(path.join(root, entry), { recursive: true, force: true });
  }
  const own = path.join(root, `${host}-${process.pid}`);
  await mkdir(own, { recursive: true });
  return own;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Relative paths (with '/') of the files under a folder, nothing if it does not exist. */
async function filesUnder(dir: string, rel = ''): Promise<string[]> {
  const entries = await readdir(path.join(dir, rel), { withFileTypes: true }).catch(() => []);
  const found: string[] = [];
  for (const e of entries) {
    const child = rel ? `${rel}/${e.name}` : e.name;
    if (e.isDirectory()) found.push(...(await filesUnder(dir, child)));
    else if (e.isFile()) found.push(child);
  }
  return found;
}

async function inBatches<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}
