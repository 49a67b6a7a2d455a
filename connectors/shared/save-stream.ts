import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ConnectorContext } from '../types.js';
import { classify } from './classify.js';
import { ConnectorError } from './errors.js';

/** How often (in bytes) a long transfer reports progress: an activity heartbeats with it. */
export const PROGRESS_EVERY_BYTES = 8 * 1024 * 1024;

/**
 * Counts the bytes passing through, reports progress every few MiB, and fails with `too_large`
 * as soon as more than `limit` bytes went by (when a limit is given).
 */
export function byteMeter(ctx: Pick<ConnectorContext, 'progress'>, limit?: { maxBytes: number; tooLarge: () => ConnectorError }) {
  let bytes = 0;
  let lastReport = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      if (limit && bytes > limit.maxBytes) return done(limit.tooLarge());
      if (ctx.progress && bytes - lastReport >= PROGRESS_EVERY_BYTES) {
        lastReport = bytes;
        ctx.progress({ bytes });
      }
      done(null, chunk);
    },
  });
  return { stream, bytes: () => bytes };
}

/**
 * Streams a remote body to `file` (inside ctx.workDir), never holding it in memory, and enforces
 * ctx.maxBytes while streaming. On any failure the partial file is removed and the error is
 * classified against `label` (a secret-free name of the remote: "S3 object s3://b/k").
 */
export async function saveStream(body: Readable | NodeJS.ReadableStream, file: string, ctx: ConnectorContext, label: string, details: Record<string, unknown> = {}): Promise<number> {
  const meter = byteMeter(ctx, {
    maxBytes: ctx.maxBytes,
    tooLarge: () => new ConnectorError('too_large', `${label} holds more than the limit of ${ctx.maxBytes} bytes`, { ...details, max_bytes: ctx.maxBytes }, false),
  });
  try {
    await pipeline(body, meter.stream, createWriteStream(file), { signal: ctx.signal });
  } catch (error) {
    await rm(file, { force: true });
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
    throw new ConnectorError('too_large', `${label} is ${declared} bytes, more than the limit of ${ctx.maxBytes} bytes`, { ...details, max_bytes: ctx.maxBytes }, false);
  }
}
