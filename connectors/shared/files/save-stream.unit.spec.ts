import { existsSync, lstatSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { saveStream } from './save-stream.js';

const context = (maxBytes: number) => ({
  signal: new AbortController().signal,
  log: pino({ level: 'silent' }),
  workDir: mkdtempSync(path.join(tmpdir(), 'save-')),
  maxBytes,
});
/** A body that arrives in chunks and declares no size, as a chunked HTTP answer does. */
const chunks = (count: number, size: number) => Readable.from(Array.from({ length: count }, (_, i) => Buffer.alloc(size, i)));

describe('saveStream', () => {
  it('writes the body to the file and counts its bytes', async () => {
    const ctx = context(1000);
    const file = path.join(ctx.workDir, 'a.bin');
    expect(await saveStream(chunks(4, 100), file, ctx, 'test body')).toBe(400);
    expect(readFileSync(file).length).toBe(400);
  });

  it('stops at the limit while streaming and removes the partial file', async () => {
    const ctx = context(250);
    const file = path.join(ctx.workDir, 'a.bin');
    await expect(saveStream(chunks(4, 100), file, ctx, 'test body', { key: 'k' })).rejects.toMatchObject({
      reason: 'too_large',
      details: { key: 'k', max_bytes: 250 },
    });
    expect(existsSync(file)).toBe(false);
  });

  it('reports progress every few MiB, with the declared size as the total when there is one', async () => {
    const MiB = 1024 * 1024;
    const seen: { bytes?: number; total?: number }[] = [];
    const ctx = { ...context(64 * MiB), progress: (p: { bytes?: number; total?: number }) => seen.push(p) };
    await saveStream(chunks(20, MiB), path.join(ctx.workDir, 'a.bin'), ctx, 'test body', {}, 20 * MiB);
    expect(seen).toEqual([
      { bytes: 8 * MiB, total: 20 * MiB },
      { bytes: 16 * MiB, total: 20 * MiB },
    ]);
    seen.length = 0;
    await saveStream(chunks(9, MiB), path.join(ctx.workDir, 'b.bin'), ctx, 'test body');
    expect(seen).toEqual([{ bytes: 8 * MiB }]);
  });

  it('says the worker ran out of disk (insufficient_storage, not a remote failure) when the disk is full, and removes the partial file', async () => {
    const ctx = context(1000);
    // The file is a link to /dev/full, which answers every write with ENOSPC; the link is what gets removed.
    const file = path.join(ctx.workDir, 'a.bin');
    symlinkSync('/dev/full', file);
    await expect(saveStream(chunks(4, 100), file, ctx, 'test body')).rejects.toMatchObject({
      code: 'insufficient_storage',
      message: expect.stringMatching(/^Saving test body ran out of disk space on the worker: .*SVC_DATA_DIR/),
    });
    expect(() => lstatSync(file)).toThrow(/ENOENT/);
    expect(existsSync('/dev/full')).toBe(true);
  });

  it('refuses an empty body', async () => {
    const ctx = context(250);
    const file = path.join(ctx.workDir, 'a.bin');
    await expect(saveStream(chunks(0, 1), file, ctx, 'test body')).rejects.toMatchObject({ reason: 'invalid_data' });
    expect(existsSync(file)).toBe(false);
  });
});
