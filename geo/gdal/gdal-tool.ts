import { statSync } from 'node:fs';
import path from 'node:path';
import { DomainError } from '../../domain/errors.js';
import { unsandboxedGdalEnv } from './gdal.js';
import { scrubPaths } from './gdal-text.js';
import { runSandboxed, type Mount } from '../sandbox/sandbox.js';

/*
 * GDAL command-line tools run over user SQL (pipeline stages, type probes). They run as child
 * processes in the sandbox rather than in the server's own GDAL: a runaway query can be killed at
 * its timeout, and whatever the SQL does, it has no network, sees only the Workspace folders and
 * no environment. Paths inside the sandbox equal the server's, so arguments need no rewriting.
 */

export interface GdalToolOptions {
  /** Files or folders read (their folder is bound read-only). */
  readable: string[];
  /** Folders written (bound read-write). */
  writable: string[];
  /** Default 30 minutes: a pipeline stage over a large file is legitimately slow. */
  timeoutMs?: number;
  /** Default 4 GiB. */
  memoryBytes?: number;
  /** Largest file it may write; default 8 GiB. */
  maxFileBytes?: number;
  /** Stops the tool; the call then fails with the signal's reason (a preview's deadline, a closed request). */
  signal?: AbortSignal;
}

export interface GdalToolResult {
  stdout: string;
  stderr: string;
}

/** The folders to bind: a shapefile folder or .gdb is bound itself, a file by its folder; shortest first so nested binds overlay. */
export function mountsFor(options: Pick<GdalToolOptions, 'readable' | 'writable'>): Mount[] {
  const mounts = new Map<string, Mount>();
  for (const p of options.readable) {
    const dir = statSync(p).isDirectory() ? path.resolve(p) : path.dirname(path.resolve(p));
    if (!mounts.has(dir)) mounts.set(dir, { host: dir, inside: dir });
  }
  for (const p of options.writable) {
    const dir = path.resolve(p);
    mounts.set(dir, { host: dir, inside: dir, writable: true });
  }
  return [...mounts.values()].sort((a, b) => a.host.length - b.host.length);
}

/**
 * A GDAL tool run without bubblewrap (it cannot start on this host) reads a user's file with the
 * drivers the service's own processes use, and writes with the one it is asked for (-f, -of);
 * SQLite for the SQL dialect.
 */
export function directGdalEnv(args: string[]): Record<string, string> {
  const writers = ['SQLite'];
  for (let i = 0; i < args.length - 1; i++) if (args[i] === '-f' || args[i] === '-of') writers.push(args[i + 1]!);
  const { SPATIALITE_LOAD: _spatialFunctionsNeeded, ...env } = unsandboxedGdalEnv(writers);
  return env;
}

/** GDAL's error lines ("ERROR 1: …" plus indented continuations), cleaned for users. */
export function gdalErrors(stderr: string): string[] {
  const errors: string[] = [];
  for (const line of stderr.split('\n')) {
    const m = /^ERROR \d+: (.*)$/.exec(line);
    if (m) errors.push(m[1]!.trim());
    // What a database server said, as libpq prints it after GDAL's own line ("COPY statement failed").
    else if (/^(ERROR|DETAIL|HINT):\s+\S/.test(line) && errors.length) errors[errors.length - 1] += ` ${line.replace(/^(ERROR|DETAIL|HINT):\s+/, '').trim()}`;
    else if (/^\s{2,}\S/.test(line) && errors.length) errors[errors.length - 1] += ` ${line.trim()}`;
  }
  return errors.map((e) => {
    // "In ExecuteSQL(): sqlite3_prepare_v2(<our whole query>): no such column: x" → "no such column: x"
    const sqlite = /sqlite3_\w+\([\s\S]*\):\s*(.+)$/.exec(e);
    return scrubPaths(sqlite ? sqlite[1]!.trim() : e);
  });
}

/** GDAL's warning lines ("Warning 6: …" plus indented continuations), cleaned for users. */
export function gdalWarnings(stderr: string): string[] {
  const warnings: string[] = [];
  let inWarning = false;
  for (const line of stderr.split('\n')) {
    const m = /^Warning \d+: (.*)$/.exec(line);
    if (m) {
      warnings.push(m[1]!.trim());
      inWarning = true;
    } else if (inWarning && /^\s{2,}\S/.test(line)) warnings[warnings.length - 1] += ` ${line.trim()}`;
    else inWarning = false;
  }
  return warnings.map(scrubPaths);
}

/**
 * Runs ogr2ogr or ogrinfo; a failure is an invalid_transformation whose message is GDAL's first
 * error (paths removed) and whose details carry the cleaned errors.
 */
export async function runGdalTool(tool: 'ogr2ogr' | 'ogrinfo', args: string[], options: GdalToolOptions, failure: string): Promise<GdalToolResult> {
  const result = await runSandboxed([`/usr/bin/${tool}`, '--config', 'CPL_LOG_ERRORS', 'ON', ...args], {
    mounts: mountsFor(options),
    timeoutMs: options.timeoutMs ?? 30 * 60_000,
    memoryBytes: options.memoryBytes ?? 4 * 1024 * 1024 * 1024,
    maxOutputBytes: 256 * 1024,
    ...(options.maxFileBytes ? { maxFileBytes: options.maxFileBytes } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    directEnv: directGdalEnv(args),
    fallback: 'direct',
  });
  if (options.signal?.aborted) throw options.signal.reason ?? new DomainError('invalid_parameter', 'The request was cancelled');
  if (options.maxFileBytes && result.signal === 'SIGXFSZ') {
    throw new DomainError('invalid_transformation', `${failure}: the result grew past ${Math.round(options.maxFileBytes / 1024 ** 2)} MB`, {
      max_bytes: options.maxFileBytes,
    });
  }
  if (result.timedOut) {
    throw new DomainError('invalid_transformation', `${failure}: stopped after ${Math.round((options.timeoutMs ?? 30 * 60_000) / 1000)} s`, {
      timed_out: true,
    });
  }
  const errors = gdalErrors(result.stderr);
  // ogrinfo reports a failed -sql on stderr but still exits 0.
  if (result.exitCode !== 0 || (tool === 'ogrinfo' && errors.length > 0)) {
    const reason = errors[0] ?? (result.signal ? `killed by ${result.signal} (memory limit?)` : `exit code ${result.exitCode}`);
    throw new DomainError('invalid_transformation', `${failure}: ${reason}`, { errors: errors.slice(0, 10) });
  }
  return { stdout: result.stdout, stderr: result.stderr };
}

/**
 * Runs a GDAL tool only to learn why it fails (in-process GDAL keeps only its last message,
 * "Terminating translation prematurely…"): GDAL's cleaned error lines, none when it succeeds.
 */
export async function gdalToolErrors(tool: 'ogr2ogr' | 'ogrinfo', args: string[], options: GdalToolOptions): Promise<string[]> {
  try {
    await runGdalTool(tool, args, options, 'diagnosis');
    return [];
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    const errors = error.details.errors;
    return Array.isArray(errors) && errors.length ? (errors as string[]) : [error.message.replace(/^diagnosis: /, '')];
  }
}
