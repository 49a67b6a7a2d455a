import { statfs } from 'node:fs/promises';
import { DomainError } from '../../domain/errors.js';
import type { FormatEntry } from './formats.js';
import type { DatasetRef } from '../gdal/gdal.js';
import { bytesUnder } from '../gdal/translate.js';

/*
 * A big output is refused before it is written when the disk cannot hold it: a clear
 * insufficient_storage instead of a half-written file and GDAL's "No space left on device" an
 * hour in. The estimate is deliberately generous (what the formats measured in bench:scale grow
 * to, plus room for GDAL's temporary files): text formats write coordinates as decimals.
 */

/** Output bytes per input byte, at most, for the formats that grow (bench:scale: GPKG points → GeoJSON 2.3×, CSV 1.6×). */
const growth: Record<string, number> = { GeoJSON: 3, GeoJSONSeq: 3, CSV: 3, GML: 4, KML: 4, LIBKML: 4, GPX: 4, 'ESRI Shapefile': 2, FlatGeobuf: 2.5 };
const MARGIN = 64 * 1024 * 1024;

export function estimatedOutputBytes(inputBytes: number, formatId: string): number {
  return Math.ceil(inputBytes * (growth[formatId] ?? 2)) + MARGIN;
}

/** Free bytes for an unprivileged writer on the file system holding dir. */
export async function freeBytes(dir: string): Promise<number> {
  const s = await statfs(dir);
  return s.bavail * s.bsize;
}

/** Refuses to start writing `format` from `input` into dir when the disk is too full to hold it. */
export async function ensureFreeSpace(dir: string, input: DatasetRef, format: Pick<FormatEntry, 'id' | 'name'>, what: string): Promise<void> {
  const needed = estimatedOutputBytes(await bytesUnder(input.path), format.id);
  const free = await freeBytes(dir);
  if (free >= needed) return;
  const mb = (n: number) => Math.round(n / (1024 * 1024));
  throw new DomainError(
    'insufficient_storage',
    `${what} needs about ${mb(needed)} MB of disk for the ${format.name} output and the server has ${mb(free)} MB free: free space under SVC_DATA_DIR (older Workspaces expire after SVC_JOB_TTL minutes), or write a smaller output`,
    { needed_bytes: needed, free_bytes: free, setting: 'SVC_DATA_DIR' },
  );
}

/** A local write failed because the disk (or a quota, or the file size limit) is full. */
export function isDiskFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT' || code === 'EFBIG';
}

/**
 * What a step says when the worker's own disk filled up while it wrote (a download, a copy):
 * not the remote system's fault, and not worth retrying on the same disk.
 */
export function diskFullError(what: string): DomainError {
  return new DomainError('insufficient_storage', `${what} ran out of disk space on the worker: free space under its SVC_DATA_DIR, or give it a bigger disk`, {
    setting: 'SVC_DATA_DIR',
  });
}
