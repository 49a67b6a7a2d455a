import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { DomainError } from '../../domain/errors.js';
import type { DatasetRef } from './dataset-ref.js';
import { resourceFailure } from './resource-failure.js';
import { directGdalEnv, gdalErrors, gdalWarnings, mountsFor } from './gdal-tool.js';
import { runSandboxed } from '../sandbox/sandbox.js';

/*
 * Every GDAL write of a dataset runs as a GDAL command-line tool in a child process (ogr2ogr,
 * gdal_translate, gdalwarp), never in the server's own GDAL. The bindings' async calls do move a
 * translation to libuv's threads, but closing the written dataset is synchronous, and that is
 * where GeoPackage builds its spatial index and FlatGeobuf sorts and writes its whole file:
 * seconds to minutes on the event loop, during which no heartbeat, request or other Run moves
 * (issue 22; measured in docs/decisions.md). A child process also gets a wall-clock limit, an
 * address-space limit and a file-size limit, so a step that runs out of time, memory or disk says
 * which, and is killed without taking the worker with it. It runs in the sandbox (no network,
 * only the folders it reads and writes), like the pipeline's stages.
 */

export interface WriteProgress {
  /** Bytes of the output written so far. */
  bytes_written: number;
  /** 0–100, as the tool reports it (-progress); absent until it says. */
  percent?: number;
}

export interface WriteLimits {
  /** Wall-clock limit; default 50 minutes (SVC_GDAL_TIMEOUT_MIN). */
  timeoutMs?: number;
  /** Address-space limit; default 4 GiB (SVC_GDAL_MEMORY_MB). */
  memoryBytes?: number;
  /** Largest file the tool may write (an import's size limit); default 8 GiB. */
  maxBytes?: number;
  /** Called about once a second while the tool works. */
  progress?: (p: WriteProgress) => void;
  signal?: AbortSignal;
}

/** The limits of a GDAL write whose caller gives none (the worker passes its SVC_GDAL_* settings). */
const writeDefaults = { timeoutMs: 50 * 60_000, memoryBytes: 4 * 1024 * 1024 * 1024 };

type Tool = 'ogr2ogr' | 'gdal_translate' | 'gdalwarp';

/** Bytes under a file or folder (a shapefile folder grows several files at once). */
export async function bytesUnder(target: string): Promise<number> {
  const s = await stat(target).catch(() => null);
  if (!s) return 0;
  if (!s.isDirectory()) return s.size;
  let total = 0;
  for (const e of await readdir(target, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (e.isFile()) total += (await stat(path.join(e.parentPath ?? e.path, e.name)).catch(() => null))?.size ?? 0;
  }
  return total;
}

export class GdalWriteFailed extends Error {
  constructor(
    readonly errors: string[],
    readonly exitCode: number | null,
    readonly signal: string | null,
  ) {
    super(errors[0] ?? (signal ? `killed by ${signal}` : `exit code ${exitCode}`));
    this.name = 'GdalWriteFailed';
  }
}

/**
 * Runs one GDAL tool that writes `output` (a file or folder) from the files in `readable`, with
 * progress. Resolves when the output is complete and closed, with GDAL's warnings (a field name
 * a format shortened, a value it cut). A tool that ran out of time, memory
 * or disk rejects with processing_timeout, out_of_memory or insufficient_storage; any other
 * failure with GdalWriteFailed carrying GDAL's cleaned error lines, for the caller to explain.
 */
export async function runGdalWrite(
  tool: Tool,
  args: string[],
  io: { readable: string[]; writable: string[]; output: string },
  limits: WriteLimits & { what: string },
): Promise<{ warnings: string[] }> {
  const timeoutMs = limits.timeoutMs ?? writeDefaults.timeoutMs;
  const memoryBytes = limits.memoryBytes ?? writeDefaults.memoryBytes;
  let percent: number | undefined;
  const report = async () => {
    if (!limits.progress) return;
    limits.progress({ bytes_written: await bytesUnder(io.output), ...(percent === undefined ? {} : { percent }) });
  };
  const timer = limits.progress ? setInterval(() => void report(), 1_000) : null;
  let result;
  try {
    result = await runSandboxed(
      [
        `/usr/bin/${tool}`,
        '--config',
        'CPL_LOG_ERRORS',
        'ON',
        '--config',
        'GML_DOWNLOAD_WFS_SCHEMA',
        'NO',
        '--config',
        'OGR_SQLITE_SYNCHRONOUS',
        'OFF',
        // gdal_translate and gdalwarp report progress unless told -q; ogr2ogr only with -progress.
        ...(tool === 'ogr2ogr' ? ['-progress'] : []),
        ...args,
      ],
      {
        mounts: mountsFor(io),
        timeoutMs,
        memoryBytes,
        maxOutputBytes: 256 * 1024,
        ...(limits.maxBytes ? { maxFileBytes: limits.maxBytes } : {}),
        directEnv: directGdalEnv(args),
        fallback: 'direct',
        onStdout: (chunk) => {
          // -progress prints "0...10...20..." as it goes: the last number is how far it is.
          const steps = chunk.match(/\d+(?=\.\.\.|\s*-\s*done)/g);
          if (steps?.length) percent = Number(steps[steps.length - 1]);
        },
        ...(limits.signal ? { signal: limits.signal } : {}),
      },
    );
  } finally {
    if (timer) clearInterval(timer);
  }
  // Killed because the step was cancelled: say that, not what the kill looks like.
  if (limits.signal?.aborted) throw limits.signal.reason ?? new Error('cancelled');
  if (limits.maxBytes && result.signal === 'SIGXFSZ') {
    throw new DomainError('upload_too_large', `${limits.what}: the data is larger than the limit of ${limits.maxBytes} bytes`, { max_bytes: limits.maxBytes });
  }
  const resource = resourceFailure(result, { timeoutMs, memoryBytes }, limits.what);
  if (resource) throw resource;
  const errors = gdalErrors(result.stderr);
  if (result.exitCode !== 0) throw new GdalWriteFailed(errors, result.exitCode, result.signal);
  percent = 100;
  await report();
  return { warnings: gdalWarnings(result.stderr) };
}

/**
 * ogr2ogr's arguments that open a prepared dataset as the server does: its path and open options.
 * GDAL 3.6's ogr2ogr has no -if: it picks the driver in GDAL's own order, as openDataset does
 * (which has refused the drivers uploads may not use before any write starts).
 */
export function inputArgs(ref: DatasetRef): string[] {
  return [ref.path, ...ref.openOptions.flatMap((o) => ['-oo', o])];
}

/** The folder that holds a dataset's files (a shapefile folder or .gdb is bound itself, a file by its folder). */
export async function readableOf(ref: DatasetRef): Promise<string> {
  const s = await stat(ref.path);
  return s.isDirectory() ? path.resolve(ref.path) : path.dirname(path.resolve(ref.path));
}
