import { rm } from 'node:fs/promises';
import path from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { safeFilename } from '../../../geo/datasets/dataset-files.js';
import { diskFullError, isDiskFull } from '../../../geo/datasets/disk.js';
import { TRANSFER_BUFFER_BYTES, transferWriter } from '../../../platform/file-writer.js';
import type { ConnectorContext } from '../../types.js';
import { classify } from '../policy/classify.js';
import { ConnectorError } from '../../../domain/transfers.js';

/** How often (in bytes) a long transfer reports progress: an activity heartbeats with it. */
export const PROGRESS_EVERY_BYTES = 8 * 1024 * 1024;

/**
 * Counts the bytes passing through, reports progress every few MiB (with the `total` expected,
 * when the remote declared it), and fails with `too_large` as soon as more than `limit` bytes
 * went by (when a limit is given).
 */
export function byteMeter(ctx: Pick<ConnectorContext, 'progress'>, limit?: { maxBytes: number; tooLarge: () => ConnectorError }, total?: number) {
  const declared = total !== undefined && Number.isFinite(total) && total > 0 ? { total } : {};
  let bytes = 0;
  let lastReport = 0;
  const stream = new Transform({
    highWaterMark: TRANSFER_BUFFER_BYTES,
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (limit && bytes > limit.maxBytes) return done(limit.tooLarge());
      if (ctx.progress && bytes - lastReport >= PROGRESS_EVERY_BYTES) {
        lastReport = bytes;
        ctx.progress({ bytes, ...declared });
      }
      done(null, chunk);
    },
  });
  return { stream, bytes: () => bytes };
}

/**
 * Streams a remote body to `file` (inside ctx.workDir), never holding it in memory, and enforces
 * ctx.maxBytes while streaming. On any failure the partial file is removed and the error is
 * classified against `label` (a secret-free name of the remote: "S3 object s3://b/k"), except a
 * full local disk, which is this worker's problem (insufficient_storage), not the remote's.
 * `declaredSize` (Content-Length, an object's size) is what progress reports count towards.
 */
export async function saveStream(
  body: Readable | NodeJS.ReadableStream,
  file: string,
  ctx: ConnectorContext,
  label: string,
  details: Record<string, unknown> = {},
  declaredSize?: number,
): Promise<number> {
  const meter = byteMeter(
    ctx,
    {
      maxBytes: ctx.maxBytes,
      tooLarge: () =>
        new ConnectorError('too_large', `${label} holds more than the limit of ${ctx.maxBytes} bytes`, { ...details, max_bytes: ctx.maxBytes }, false),
    },
    declaredSize,
  );
  try {
    await pipeline(body, meter.stream, transferWriter(file), { signal: ctx.signal });
  } catch (error) {
    await rm(file, { force: true });
    if (isDiskFull(error)) throw diskFullError(`Saving ${label}`);
    throw classify(error, label, details);
  }
  if (meter.bytes() === 0) {
    await rm(file, { force: true });
    throw new ConnectorError('invalid_data', `${label} is empty`, details, false);
  }
  return meter.bytes();
}

/** The answer when a declared size (Content-Length) is already over the limit: refuse before streaming. */
export function refuseDeclaredSize(declared: number | undefined, ctx: ConnectorContext, label: string, details: Record<string, unknown> = {}): void {
  if (declared !== undefined && Number.isFinite(declared) && declared > ctx.maxBytes) {
    throw new ConnectorError(
      'too_large',
      `${label} is ${declared} bytes, more than the limit of ${ctx.maxBytes} bytes`,
      { ...details, max_bytes: ctx.maxBytes },
      false,
    );
  }
}

/**
 * An object of a store (an S3 object, an Azure blob) saved into ctx.workDir under the last
 * segment of its name, whose extension then picks the driver: refused before streaming when its
 * declared size is over the limit, else streamed with the limit enforced.
 */
export async function saveObject(
  body: Readable | NodeJS.ReadableStream | undefined,
  declaredSize: number | undefined,
  name: string,
  ctx: ConnectorContext,
  label: string,
  details: Record<string, unknown>,
): Promise<{ file: string; filename: string; bytes: number }> {
  try {
    refuseDeclaredSize(declaredSize, ctx, label, details);
    if (!body) throw new ConnectorError('invalid_response', `${label} came without a body`, details);
  } catch (error) {
    (body as { destroy?: () => void } | undefined)?.destroy?.();
    throw error;
  }
  const filename = safeFilename(path.posix.basename(name)) || 'object';
  const file = path.join(ctx.workDir, filename);
  return { file, filename, bytes: await saveStream(body, file, ctx, label, details, declaredSize) };
}
