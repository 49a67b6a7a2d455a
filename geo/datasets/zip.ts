import { createReadStream } from 'node:fs';
import { mkdir, open, stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createDeflateRaw, createInflateRaw, crc32 } from 'node:zlib';
import { DomainError } from '../../domain/errors.js';
import { transferWriter } from '../../platform/file-writer.js';

/*
 * A small ZIP reader and writer. Reading is done here rather than by `unzip` so that every
 * entry is checked before a byte is written (no `../`, no absolute names, no symlinks) and the
 * uncompressed size is counted on the bytes actually inflated, not on sizes the archive claims
 * (a zip bomb lies about them). Writing bundles multi-file outputs (Shapefile parts, one file
 * per layer) into one download.
 */

export interface ZipEntry {
  name: string;
  directory: boolean;
  symlink: boolean;
  encrypted: boolean;
  method: number;
  crc: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeaderOffset: number;
}

const invalid = (message: string, details: Record<string, unknown> = {}) => new DomainError('invalid_source', message, details);

/** Reads the central directory of a ZIP file (ZIP64 included). */
export async function readZipDirectory(file: string): Promise<ZipEntry[]> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    const tailSize = Math.min(size, 22 + 0xffff + 20);
    const tail = Buffer.alloc(tailSize);
    await fh.read(tail, 0, tailSize, size - tailSize);
    let eocd = -1;
    for (let i = tailSize - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) === 0x06054b50) {
        eocd = i;
        break;
      }
    }
    if (eocd < 0) throw invalid('The file is not a readable ZIP archive');
    let entries = tail.readUInt16LE(eocd + 10);
    let cdSize = tail.readUInt32LE(eocd + 12);
    let cdOffset = tail.readUInt32LE(eocd + 16);
    if (entries === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
      const loc = eocd - 20;
      if (loc < 0 || tail.readUInt32LE(loc) !== 0x07064b50) throw invalid('The ZIP64 directory is missing');
      const z64Offset = Number(tail.readBigUInt64LE(loc + 8));
      const z64 = Buffer.alloc(56);
      await fh.read(z64, 0, 56, z64Offset);
      if (z64.readUInt32LE(0) !== 0x06064b50) throw invalid('The ZIP64 directory is damaged');
      entries = Number(z64.readBigUInt64LE(32));
      cdSize = Number(z64.readBigUInt64LE(40));
      cdOffset = Number(z64.readBigUInt64LE(48));
    }
    if (cdOffset + cdSize > size) throw invalid('The ZIP directory points past the end of the file');
    const cd = Buffer.alloc(cdSize);
    await fh.read(cd, 0, cdSize, cdOffset);
    const out: ZipEntry[] = [];
    let p = 0;
    for (let i = 0; i < entries; i++) {
      if (p + 46 > cd.length || cd.readUInt32LE(p) !== 0x02014b50) throw invalid('The ZIP directory is damaged');
      const madeBy = cd.readUInt16LE(p + 4);
      const flags = cd.readUInt16LE(p + 8);
      const method = cd.readUInt16LE(p + 10);
      const crc = cd.readUInt32LE(p + 16);
      let compressedSize = cd.readUInt32LE(p + 20);
      let uncompressedSize = cd.readUInt32LE(p + 24);
      const nameLen = cd.readUInt16LE(p + 28);
      const extraLen = cd.readUInt16LE(p + 30);
      const commentLen = cd.readUInt16LE(p + 32);
      const externalAttr = cd.readUInt32LE(p + 38);
      let localHeaderOffset = cd.readUInt32LE(p + 42);
      const rawName = cd.subarray(p + 46, p + 46 + nameLen);
      const extra = cd.subarray(p + 46 + nameLen, p + 46 + nameLen + extraLen);
      // ZIP64 extended information: only the fields saturated in the fixed header are present, in this order.
      for (let e = 0; e + 4 <= extra.length; ) {
        const id = extra.readUInt16LE(e);
        const len = extra.readUInt16LE(e + 2);
        if (id === 0x0001) {
          let q = e + 4;
          if (uncompressedSize === 0xffffffff) {
            uncompressedSize = Number(extra.readBigUInt64LE(q));
            q += 8;
          }
          if (compressedSize === 0xffffffff) {
            compressedSize = Number(extra.readBigUInt64LE(q));
            q += 8;
          }
          if (localHeaderOffset === 0xffffffff) localHeaderOffset = Number(extra.readBigUInt64LE(q));
        }
        e += 4 + len;
      }
      const name = decodeName(rawName, (flags & 0x800) !== 0);
      const unixMode = madeBy >> 8 === 3 ? externalAttr >>> 16 : 0;
      out.push({
        name,
        directory: name.endsWith('/') || name.endsWith('\\'),
        symlink: (unixMode & 0o170000) === 0o120000,
        encrypted: (flags & 0x1) !== 0,
        method,
        crc,
        compressedSize,
        uncompressedSize,
        localHeaderOffset,
      });
      p += 46 + nameLen + extraLen + commentLen;
    }
    return out;
  } finally {
    await fh.close();
  }
}

function decodeName(raw: Buffer, utf8Flag: boolean): string {
  if (utf8Flag) return raw.toString('utf8');
  try {
    // Many tools write UTF-8 without setting the flag; fall back to Latin-1 (close to CP437 for letters).
    return new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    return raw.toString('latin1');
  }
}

/**
 * The entry name as a safe relative path, or an error: no absolute paths, no drive letters,
 * no `..` segments, no NUL bytes.
 */
export function safeEntryPath(name: string): string {
  const normalized = name.replace(/\\/g, '/');
  if (normalized.includes('\0')) throw invalid('The ZIP holds an entry with a NUL byte in its name');
  if (normalized.startsWith('/') || /^[A-Za-z]:/.test(normalized)) {
    throw invalid('The ZIP holds an entry with an absolute path; refusing to extract it', { entry: name });
  }
  const parts = normalized.split('/').filter((s) => s !== '' && s !== '.');
  if (parts.some((s) => s === '..')) {
    throw invalid('The ZIP holds an entry that climbs out of its folder (..); refusing to extract it', { entry: name });
  }
  return parts.join('/');
}

export interface ExtractLimits {
  /** Total bytes all entries may inflate to. */
  maxUncompressedBytes: number;
  /** Most entries accepted (inode exhaustion). */
  maxEntries?: number;
}

/** Counts bytes and CRC while they pass, failing as soon as the running total passes the limit. */
class Meter extends Transform {
  bytes = 0;
  crc = 0;
  constructor(private readonly budget: () => number) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback) {
    this.bytes += chunk.length;
    if (this.bytes > this.budget()) return cb(new SizeExceeded());
    this.crc = crc32(chunk, this.crc);
    cb(null, chunk);
  }
}
class SizeExceeded extends Error {}

/**
 * Extracts every file of a ZIP into dest after checking all names first. Refuses symlinks,
 * encrypted entries, unknown compression methods and archives that inflate past the limit.
 * Returns the relative paths written.
 */
export async function extractZip(file: string, dest: string, limits: ExtractLimits): Promise<string[]> {
  const entries = await readZipDirectory(file);
  const maxEntries = limits.maxEntries ?? 20_000;
  if (entries.length > maxEntries) throw invalid(`The ZIP holds ${entries.length} entries; at most ${maxEntries} are accepted`);
  const tooLarge = () =>
    new DomainError('upload_too_large', 'The ZIP inflates to more than the upload limit', {
      max_bytes: limits.maxUncompressedBytes,
      reason: 'uncompressed_size',
    });
  let declared = 0;
  const plan: { entry: ZipEntry; rel: string }[] = [];
  for (const entry of entries) {
    const rel = safeEntryPath(entry.name);
    if (entry.symlink) throw invalid('The ZIP holds a symbolic link; refusing to extract it', { entry: entry.name });
    if (entry.directory || rel === '') continue;
    if (entry.encrypted) throw invalid('The ZIP holds an encrypted entry; upload it without a password', { entry: entry.name });
    if (entry.method !== 0 && entry.method !== 8) {
      throw invalid(`The ZIP uses compression method ${entry.method}; only stored and deflated entries are supported`, {
        entry: entry.name,
      });
    }
    declared += entry.uncompressedSize;
    plan.push({ entry, rel });
  }
  if (declared > limits.maxUncompressedBytes) throw tooLarge();

  const root = path.resolve(dest);
  await mkdir(root, { recursive: true });
  const { size: archiveSize } = await stat(file);
  let total = 0;
  const written: string[] = [];
  for (const { entry, rel } of plan) {
    const target = path.resolve(root, rel);
    if (!target.startsWith(root + path.sep)) throw invalid('The ZIP holds an entry outside its folder', { entry: entry.name });
    await mkdir(path.dirname(target), { recursive: true });
    const dataStart = await localDataOffset(file, entry.localHeaderOffset);
    if (dataStart + entry.compressedSize > archiveSize) throw invalid('The ZIP is truncated', { entry: entry.name });
    const meter = new Meter(() => limits.maxUncompressedBytes - total);
    // createReadStream's end is inclusive, so an empty entry reads from an empty generator.
    const source = entry.compressedSize === 0 ? Readable.from([]) : createReadStream(file, { start: dataStart, end: dataStart + entry.compressedSize - 1 });
    try {
      if (entry.method === 8) {
        await pipeline(source, createInflateRaw(), meter, transferWriter(target, { flags: 'wx' }));
      } else {
        await pipeline(source, meter, transferWriter(target, { flags: 'wx' }));
      }
    } catch (err) {
      if (err instanceof SizeExceeded) throw tooLarge();
      if (err instanceof DomainError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') throw invalid('The ZIP holds the same file twice', { entry: entry.name });
      throw invalid('The ZIP entry could not be decompressed', { entry: entry.name });
    }
    total += meter.bytes;
    if (meter.bytes !== entry.uncompressedSize || meter.crc >>> 0 !== entry.crc >>> 0) {
      throw invalid('The ZIP entry is damaged (size or checksum mismatch)', { entry: entry.name });
    }
    written.push(rel);
  }
  return written;
}

async function localDataOffset(file: string, headerOffset: number): Promise<number> {
  const fh = await open(file, 'r');
  try {
    const head = Buffer.alloc(30);
    await fh.read(head, 0, 30, headerOffset);
    if (head.readUInt32LE(0) !== 0x04034b50) throw invalid('The ZIP entry header is damaged');
    return headerOffset + 30 + head.readUInt16LE(26) + head.readUInt16LE(28);
  } finally {
    await fh.close();
  }
}

const U32_MAX = 0xffffffff;

/**
 * Writes files into a new ZIP (deflated), streaming each file and patching its local header
 * afterwards, so the archive has no data descriptors: some readers (libkml for KMZ, old
 * Windows tools) reject those. ZIP64 records appear only when a size or offset needs them.
 */
export async function writeZip(dest: string, files: { path: string; name: string }[]): Promise<void> {
  const fh = await open(dest, 'wx');
  let offset = 0;
  const append = async (buf: Buffer) => {
    await fh.write(buf, 0, buf.length, offset);
    offset += buf.length;
  };
  const central: Buffer[] = [];
  let needZip64End = files.length >= 0xffff;
  try {
    for (const f of files) {
      const { size: inputSize } = await stat(f.path);
      // Deflate can grow incompressible data a little: decide ZIP64 with a margin.
      const zip64 = inputSize >= U32_MAX - 1024 * 1024;
      const name = Buffer.from(f.name, 'utf8');
      const headerOffset = offset;
      const local = Buffer.alloc(30);
      local.writeUInt32LE(0x04034b50, 0);
      local.writeUInt16LE(zip64 ? 45 : 20, 4);
      local.writeUInt16LE(0x0800, 6); // UTF-8 names
      local.writeUInt16LE(8, 8);
      local.writeUInt32LE(0x00210000, 10); // 1980-01-01 00:00
      local.writeUInt16LE(name.length, 26);
      const localExtra = zip64 ? Buffer.alloc(20) : Buffer.alloc(0);
      if (zip64) {
        local.writeUInt32LE(U32_MAX, 18);
        local.writeUInt32LE(U32_MAX, 22);
        localExtra.writeUInt16LE(0x0001, 0);
        localExtra.writeUInt16LE(16, 2);
      }
      local.writeUInt16LE(localExtra.length, 28);
      await append(Buffer.concat([local, name, localExtra]));
      let crc = 0;
      let size = 0;
      let compressed = 0;
      const measure = new Transform({
        transform(chunk: Buffer, _enc, cb) {
          crc = crc32(chunk, crc);
          size += chunk.length;
          cb(null, chunk);
        },
      });
      await pipeline(createReadStream(f.path), measure, createDeflateRaw({ level: 6 }), async (source: AsyncIterable<Buffer>) => {
        for await (const chunk of source) {
          await append(chunk);
          compressed += chunk.length;
        }
      });
      const patch = Buffer.alloc(12);
      patch.writeUInt32LE(crc >>> 0, 0);
      patch.writeUInt32LE(zip64 ? U32_MAX : compressed, 4);
      patch.writeUInt32LE(zip64 ? U32_MAX : size, 8);
      await fh.write(patch, 0, 12, headerOffset + 14);
      if (zip64) {
        const sizes = Buffer.alloc(16);
        sizes.writeBigUInt64LE(BigInt(size), 0);
        sizes.writeBigUInt64LE(BigInt(compressed), 8);
        await fh.write(sizes, 0, 16, headerOffset + 30 + name.length + 4);
      }
      const bigOffset = headerOffset >= U32_MAX;
      const extraParts: Buffer[] = [];
      if (zip64) {
        const b = Buffer.alloc(16);
        b.writeBigUInt64LE(BigInt(size), 0);
        b.writeBigUInt64LE(BigInt(compressed), 8);
        extraParts.push(b);
      }
      if (bigOffset) {
        const b = Buffer.alloc(8);
        b.writeBigUInt64LE(BigInt(headerOffset), 0);
        extraParts.push(b);
      }
      let extra = Buffer.alloc(0);
      if (extraParts.length) {
        const body = Buffer.concat(extraParts);
        extra = Buffer.alloc(4 + body.length);
        extra.writeUInt16LE(0x0001, 0);
        extra.writeUInt16LE(body.length, 2);
        body.copy(extra, 4);
        needZip64End = true;
      }
      const cdh = Buffer.alloc(46);
      cdh.writeUInt32LE(0x02014b50, 0);
      cdh.writeUInt16LE((3 << 8) | (extraParts.length ? 45 : 20), 4);
      cdh.writeUInt16LE(extraParts.length ? 45 : 20, 6);
      cdh.writeUInt16LE(0x0800, 8);
      cdh.writeUInt16LE(8, 10);
      cdh.writeUInt32LE(0x00210000, 12);
      cdh.writeUInt32LE(crc >>> 0, 16);
      cdh.writeUInt32LE(zip64 ? U32_MAX : compressed, 20);
      cdh.writeUInt32LE(zip64 ? U32_MAX : size, 24);
      cdh.writeUInt16LE(name.length, 28);
      cdh.writeUInt16LE(extra.length, 30);
      cdh.writeUInt32LE((0o100644 << 16) >>> 0, 38);
      cdh.writeUInt32LE(bigOffset ? U32_MAX : headerOffset, 42);
      central.push(Buffer.concat([cdh, name, extra]));
    }
    const cdOffset = offset;
    const cd = Buffer.concat(central);
    await append(cd);
    if (needZip64End || cdOffset >= U32_MAX || cd.length >= U32_MAX) {
      const z64Offset = offset;
      const z64 = Buffer.alloc(56);
      z64.writeUInt32LE(0x06064b50, 0);
      z64.writeBigUInt64LE(44n, 4);
      z64.writeUInt16LE(45, 12);
      z64.writeUInt16LE(45, 14);
      z64.writeBigUInt64LE(BigInt(files.length), 24);
      z64.writeBigUInt64LE(BigInt(files.length), 32);
      z64.writeBigUInt64LE(BigInt(cd.length), 40);
      z64.writeBigUInt64LE(BigInt(cdOffset), 48);
      const locator = Buffer.alloc(20);
      locator.writeUInt32LE(0x07064b50, 0);
      locator.writeBigUInt64LE(BigInt(z64Offset), 8);
      locator.writeUInt32LE(1, 16);
      await append(Buffer.concat([z64, locator]));
    }
    const eocd = Buffer.alloc(22);
    eocd.writeUInt32LE(0x06054b50, 0);
    eocd.writeUInt16LE(Math.min(files.length, 0xffff), 8);
    eocd.writeUInt16LE(Math.min(files.length, 0xffff), 10);
    eocd.writeUInt32LE(Math.min(cd.length, U32_MAX), 12);
    eocd.writeUInt32LE(Math.min(cdOffset, U32_MAX), 16);
    await append(eocd);
  } finally {
    await fh.close();
  }
}
