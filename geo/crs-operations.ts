import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DomainError } from '../domain/errors.js';
import { runSandboxed } from './sandbox/sandbox.js';
import { PYTHON } from './sandbox/python-step.js';

/*
 * Which coordinate operation PROJ uses between two CRSs over an area, and where a CRS is meant
 * to be used: pyproj (geo/crs_ops.py) in the sandbox, since gdal-async does not expose PROJ's
 * operation list or a CRS's area of use. Reprojections report the operation they used; one whose
 * features lie outside the target's area of use warns.
 */

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'crs_ops.py');

export interface CoordinateOperation {
  name: string;
  /** Metres, when PROJ knows it. */
  accuracy_m: number | null;
  /** The PROJ pipeline: what `transformation` takes to choose it again. */
  pipeline: string;
}

export interface AreaOfUse {
  name: string;
  west: number;
  south: number;
  east: number;
  north: number;
}

export interface OperationsAnswer {
  /** Best first, as PROJ ranks them for the area. */
  operations: CoordinateOperation[];
  /** Better operations PROJ knows but cannot use here (a missing grid). */
  unavailable: string[];
  target_area: AreaOfUse | null;
}

const cache = new Map<string, OperationsAnswer>();

/** What PROJ offers from `source` to `target` over bbox (lon/lat), and the target's area of use. */
export async function coordinateOperations(source: string | null, target: string, bbox: [number, number, number, number] | null): Promise<OperationsAnswer> {
  const key = JSON.stringify([source, target, bbox?.map((v) => Math.round(v * 100) / 100)]);
  const known = cache.get(key);
  if (known) return known;
  const dir = await mkdtemp(path.join(tmpdir(), 'crs-ops-'));
  try {
    const spec = path.join(dir, 'spec.json');
    await writeFile(spec, JSON.stringify({ source, target, bbox }));
    const result = await runSandboxed([PYTHON, '-I', SCRIPT, spec], {
      mounts: [
        { host: path.dirname(SCRIPT), inside: path.dirname(SCRIPT) },
        { host: dir, inside: dir },
      ],
      timeoutMs: 60_000,
      memoryBytes: 1024 * 1024 * 1024,
      env: { PROJ_NETWORK: 'OFF' },
      fallback: 'direct',
    });
    if (result.exitCode !== 0) {
      throw new DomainError('invalid_parameter', 'PROJ cannot relate these coordinate reference systems', {
        reason: result.stderr.trim().split('\n').pop()?.slice(0, 300) ?? '',
      });
    }
    const answer = JSON.parse(result.stdout) as OperationsAnswer;
    if (cache.size > 200) cache.delete(cache.keys().next().value!);
    cache.set(key, answer);
    return answer;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Whether a lon/lat box lies within an area of use (whose west may exceed its east across 180°). */
export function withinArea(box: [number, number, number, number], area: AreaOfUse): boolean {
  const [w, s, e, n] = box;
  // An area across 180° is left to the per-feature count.
  return area.west <= area.east && w >= area.west - 1e-9 && e <= area.east + 1e-9 && s >= area.south - 1e-9 && n <= area.north + 1e-9;
}

/** SQL (SQLite dialect) true for a lon/lat point expression outside an area of use. */
export function outsideAreaSql(x: string, y: string, area: AreaOfUse): string {
  const lon = area.west <= area.east ? `(${x} < ${area.west} OR ${x} > ${area.east})` : `(${x} < ${area.west} AND ${x} > ${area.east})`;
  return `(${lon} OR ${y} < ${area.south} OR ${y} > ${area.north})`;
}

/** A PROJ pipeline a user gives to choose the transformation: a pipeline, no file or URL in it. */
export function checkPipeline(text: string, parameter: string, code: 'invalid_parameter' | 'invalid_transformation'): string {
  const t = text.trim();
  if (!/^\+proj=pipeline(\s|$)/.test(t) || !t.split(/\s+/).every((tok) => /^\+[A-Za-z_][A-Za-z0-9_]*(=[^\s/\\]*)?$/.test(tok)) || /:\/\//.test(t)) {
    throw new DomainError(
      code,
      `${parameter} must be a PROJ pipeline (+proj=pipeline +step …), as the reproject's report lists them; grid names without paths`,
      {
        parameter,
      },
    );
  }
  return t;
}
