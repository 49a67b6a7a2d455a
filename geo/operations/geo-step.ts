import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DomainError } from '../../domain/errors.js';
import { runSandboxed } from '../sandbox/sandbox.js';
import { PYTHON } from '../sandbox/python-step.js';
import type { ProcessingWarning } from '../warnings.js';
import type { GeoStep } from './relation.js';

/*
 * Runs geo_step.py (ours, beside this file) on a stage's GeoPackage, in the sandbox like every
 * other process that reads user data: no network, the stage folder the only one writable. The
 * script answers with a report of the features it had to repair, which becomes warnings.
 */

const SCRIPT = path.join(path.dirname(fileURLToPath(import.meta.url)), 'geo_step.py');

export interface GeoStepRun {
  input: string;
  layer: string;
  output: string;
  outLayer: string;
  geometryName: string;
  /** The folder of input and output: the one the script may write. */
  workDir: string;
  timeoutMs?: number;
  memoryBytes?: number;
}

interface Report {
  features: number;
  repaired: { feature: number; reason: string }[];
  invalid: { feature: number }[];
  emptied: number[];
}

const LISTED = 20;

/** Runs the step; answers what it had to say about the features (repaired, left invalid, emptied). */
export async function runGeoStep(op: GeoStep, run: GeoStepRun, operation: string): Promise<Omit<ProcessingWarning, 'layer'>[]> {
  const stem = path.join(run.workDir, `geo-step-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`);
  const spec = {
    input: run.input,
    layer: run.layer,
    output: run.output,
    out_layer: run.outLayer,
    geometry_name: run.geometryName,
    report: `${stem}.report.json`,
    op,
  };
  await writeFile(`${stem}.json`, JSON.stringify(spec));
  const result = await runSandboxed([PYTHON, '-I', SCRIPT, `${stem}.json`], {
    mounts: [
      { host: path.dirname(SCRIPT), inside: path.dirname(SCRIPT) },
      { host: path.resolve(run.workDir), inside: path.resolve(run.workDir), writable: true },
    ],
    timeoutMs: run.timeoutMs ?? 30 * 60_000,
    memoryBytes: run.memoryBytes ?? 4 * 1024 * 1024 * 1024,
    env: { PYTHONIOENCODING: 'utf-8', PROJ_NETWORK: 'OFF' },
    fallback: 'direct',
  });
  if (result.timedOut) throw new DomainError('invalid_transformation', `${operation}: stopped after ${Math.round((run.timeoutMs ?? 30 * 60_000) / 1000)} s`);
  if (result.exitCode !== 0) {
    const last = result.stderr.trim().split('\n').pop() ?? '';
    throw new DomainError('invalid_transformation', `${operation} failed: ${last.slice(0, 300) || `exit code ${result.exitCode ?? result.signal}`}`, {});
  }
  const report = JSON.parse(await readFile(spec.report, 'utf8')) as Report;
  const warnings: Omit<ProcessingWarning, 'layer'>[] = [];
  if (report.repaired.length) {
    warnings.push({
      code: 'geometry_repaired',
      message: `${operation}: ${report.repaired.length} of ${report.features} results were not valid and were repaired (row ${report.repaired[0]!.feature}: ${report.repaired[0]!.reason})`,
      details: { operation, features: report.repaired.slice(0, LISTED) },
    });
  }
  if (report.invalid.length) {
    warnings.push({
      code: 'geometry_invalid',
      message: `${operation}: ${report.invalid.length} results could not be made valid (rows ${report.invalid
        .slice(0, LISTED)
        .map((f) => f.feature)
        .join(', ')})`,
      details: { operation, features: report.invalid.slice(0, LISTED).map((f) => f.feature) },
    });
  }
  if (report.emptied.length) {
    warnings.push({
      code: 'geometry_empty',
      message: `${operation}: ${report.emptied.length} features have no geometry left (rows ${report.emptied.slice(0, LISTED).join(', ')})`,
      details: { operation, features: report.emptied.slice(0, LISTED) },
    });
  }
  return warnings;
}
