import { existsSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { DomainError } from '../../domain/errors.js';
import { datasetAt, stemOf, type DatasetRef } from '../datasets/dataset-files.js';
import { errorText, gdal, scrubPaths, withDataset } from '../gdal/gdal.js';
import { crsAssigned } from '../crs.js';
import { GdalWriteFailed, inputArgs, readableOf, runGdalWrite, type WriteLimits } from '../gdal/translate.js';
import { declareMeasuredTypes } from '../datasets/geometry-types.js';
import { cheapFeatureCount, datasetBytes, CHEAP_SCAN_BYTES } from '../datasets/inspect.js';
import { runOperations, runUserSql, type DatasetResolver } from './execute.js';
import { checkPipeline, isEmptyPipeline, type DatasetFacts, type PipelineSpec } from './pipeline-check.js';
import { dataPreview, spatialPreview, type DataPreview, type SpatialPreview } from '../datasets/preview.js';
import { runPythonStep, type PythonStepOptions } from '../sandbox/python-step.js';
import { distinctWarnings, type ProcessingWarning } from '../warnings.js';

export { isEmptyPipeline, type PipelineSpec } from './pipeline-check.js';

export interface PipelineOptions {
  /** Transform previews: read only the first n features of each layer. */
  sampleFeatures?: number;
  /** Time limit of each GDAL stage; default 30 minutes. */
  timeoutMs?: number;
  /** Features a stage may write at most (previews bound what a query can make). */
  outputLimit?: number;
  /** Largest file a stage may write (previews). */
  maxBytes?: number;
  /** Stops whatever stage runs; the pipeline then fails with the signal's reason. */
  signal?: AbortSignal;
  python?: PythonStepOptions;
  /** The datasets of the caller's other Workspaces that operations name (clip, joins, merge with workspace_id). */
  datasets?: DatasetResolver;
}

export interface PipelineResult {
  /** The dataset to preview or convert: the input itself when the pipeline is empty. */
  dataset: DatasetRef;
  /** Layer names of the result. */
  layers: string[];
  /** Whether anything was applied (false: `dataset` is the untouched input). */
  changed: boolean;
  /** What the Python step printed (truncated), for the Run's log. */
  python: { stdout: string; stderr: string } | null;
  /** What the operations changed or doubted without failing (geo/warnings.ts). */
  warnings: ProcessingWarning[];
}

const invalid = (message: string, details: Record<string, unknown> = {}) => new DomainError('invalid_transformation', message, details);

/** What the pipeline check needs of a dataset: its kind, its layers and which have geometry. */
async function factsOf(ref: DatasetRef): Promise<DatasetFacts> {
  return withDataset(ref, async (ds) => {
    const layers: DatasetFacts['layers'] = [];
    ds.layers.forEach((l) => {
      layers.push({ name: l.name, has_geometry: l.geomType !== gdal.wkbNone });
    });
    return { kind: layers.length === 0 && ds.bands.count() > 0 ? 'raster' : 'vector', layers };
  });
}

async function layerNamesOf(ref: DatasetRef): Promise<string[]> {
  return (await factsOf(ref)).layers.map((l) => l.name);
}

/**
 * Copies layers unchanged into the output GeoPackage (in-process: no user SQL involved), each
 * under its new name when `rename` gives one. Spatial layers get a GEOMETRY column: the type
 * they declare is set afterwards from what they hold (declareMeasuredTypes), and a GeoPackage
 * column declared POLYGON could not be changed to MULTIPOLYGON then.
 */
async function copyLayers(
  input: DatasetRef,
  layers: string[],
  out: string,
  options: { sample?: number; rename?: Map<string, string>; failure?: string; limits?: WriteLimits } = {},
): Promise<void> {
  if (layers.length === 0) return;
  const spatial = await withDataset(input, async (ds) => new Set(layers.filter((name) => ds.layers.get(name).geomType !== gdal.wkbNone)));
  // Layers whose CRS was set on upload (or assumed, for CSV) carry it from here on.
  const assigned = await withDataset(input, async (ds) => new Set(layers.filter((name) => crsAssigned(ds.layers.get(name), input))));
  const readable = [await readableOf(input)];
  try {
    for (const name of layers) {
      const args = ['-f', 'GPKG', ...(existsSync(out) ? ['-update'] : [])];
      if (options.sample) args.push('-limit', String(options.sample));
      if (spatial.has(name)) args.push('-nlt', 'GEOMETRY');
      if (assigned.has(name)) args.push('-a_srs', input.assumedCrs!);
      const target = options.rename?.get(name);
      if (target) args.push('-nln', target);
      // A child process (geo/gdal/translate.ts): the GeoPackage's index is built as it closes.
      await runGdalWrite(
        'ogr2ogr',
        [...args, out, ...inputArgs(input), name],
        { readable, writable: [path.dirname(out)], output: out },
        { ...options.limits, what: 'The pipeline' },
      );
    }
  } catch (err) {
    if (err instanceof DomainError) throw err;
    const reason = err instanceof GdalWriteFailed ? err.errors.slice(0, 3).join('; ') || err.message : scrubPaths(errorText(err));
    throw invalid(options.failure ?? 'Copying the untouched layers failed', { reason });
  }
}

/**
 * Applies a Workspace pipeline to the (immutable) input and returns the resulting dataset, a
 * GeoPackage in a new folder under workDir: the operations or the SQL on the chosen layers, the
 * other layers copied untouched, then the Python step on the whole result. The input is never
 * written; an empty pipeline returns the input itself.
 */
export async function applyPipeline(input: DatasetRef, spec: PipelineSpec, workDir: string, options: PipelineOptions = {}): Promise<PipelineResult> {
  const facts = await factsOf(input);
  const { operations, sql, targets } = checkPipeline(spec, facts);
  const names = facts.layers.map((l) => l.name);
  if (isEmptyPipeline(spec)) return { dataset: input, layers: names, changed: false, python: null, warnings: [] };
  await mkdir(workDir, { recursive: true });
  const runDir = await mkdtemp(path.join(workDir, 'pipeline-'));
  const pythonOptions = { ...options.python, ...(options.signal ? { signal: options.signal } : {}) };

  if (facts.kind === 'raster') {
    const py = await runPythonStep(spec.python!, input.path, path.join(runDir, 'python'), { outputName: 'output.tif', ...pythonOptions });
    await assertOpens(py.outputPath);
    return { dataset: datasetAt(py.outputPath), layers: [], changed: true, python: { stdout: py.stdout, stderr: py.stderr }, warnings: [] };
  }

  const chosen = new Set(targets);
  const out = path.join(runDir, 'result.gpkg');
  const timing = {
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.outputLimit ? { outputLimit: options.outputLimit } : {}),
    ...(options.maxBytes ? { maxBytes: options.maxBytes } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
  const sample = options.sampleFeatures ? { sampleFeatures: options.sampleFeatures } : {};
  const copyLimits = { ...(options.maxBytes ? { maxBytes: options.maxBytes } : {}), ...(options.signal ? { signal: options.signal } : {}) };
  const transform = operations.length > 0 || sql !== null;
  // Layers keep their order; consecutive untouched ones are copied in one call.
  let pending: string[] = [];
  const warnings: ProcessingWarning[] = [];
  for (const name of names) {
    if (!transform || !chosen.has(name)) {
      pending.push(name);
      continue;
    }
    await copyLayers(input, pending, out, { sample: options.sampleFeatures, limits: copyLimits });
    pending = [];
    const run = {
      input,
      layer: name,
      output: { path: out, layer: name },
      workDir: runDir,
      ...timing,
      ...sample,
      ...(options.datasets ? { datasets: options.datasets } : {}),
    };
    if (sql !== null) {
      // GDAL types the SQL result's geometry column itself; copying it over gives it the
      // GEOMETRY column every other layer of the result has.
      const staged = path.join(runDir, `sql-${randomUUID()}.gpkg`);
      await runUserSql({ ...run, output: { path: staged, layer: name }, sql });
      await copyLayers(datasetAt(staged), [name], out, { failure: 'Copying the SQL result failed', limits: copyLimits });
      await rm(staged, { force: true });
    } else {
      warnings.push(...(await runOperations(operations, run)));
    }
  }
  await copyLayers(input, pending, out, { sample: options.sampleFeatures, limits: copyLimits });

  if (!spec.python) {
    await declareMeasuredTypes(out);
    return { dataset: datasetAt(out), layers: names, changed: true, python: null, warnings: distinctWarnings(warnings) };
  }

  const outputName = 'output.gpkg';
  const py = await runPythonStep(spec.python, out, path.join(runDir, 'python'), { outputName, ...pythonOptions });
  await assertOpens(py.outputPath);
  const written = await layerNamesOf(datasetAt(py.outputPath));
  // Writers name a layer after its file when the script does not say (geopandas' to_file(dst)
  // gives "output"): a one-layer result of a one-layer input keeps the input's layer name, so
  // previews by that name and the converted file still find it.
  const rename = written.length === 1 && names.length === 1 && written[0] === stemOf(outputName) && names[0] !== written[0] ? names[0]! : null;
  // Copied into a GeoPackage of our own, whatever the script wrote, as promised to callers.
  if (written.length === 0) throw invalid('The Python step output is not a vector dataset: it holds no layers');
  const result = path.join(runDir, 'python-result.gpkg');
  await copyLayers(datasetAt(py.outputPath), written, result, {
    ...(rename ? { rename: new Map([[written[0]!, rename]]) } : {}),
    failure: 'The Python step output is not a vector dataset',
    limits: copyLimits,
  });
  await declareMeasuredTypes(result);
  return {
    dataset: datasetAt(result),
    layers: await layerNamesOf(datasetAt(result)),
    changed: true,
    python: { stdout: py.stdout, stderr: py.stderr },
    warnings: distinctWarnings(warnings),
  };
}

async function assertOpens(file: string): Promise<string> {
  try {
    return await withDataset(datasetAt(file), async (ds) => ds.driver.description);
  } catch {
    throw invalid('The Python step wrote an output GDAL cannot open');
  }
}

/** Source features read by a transform preview: enough for filters to find rows, bounded in cost. */
export const TRANSFORM_PREVIEW_SAMPLE = 5000;

async function sampleWasCut(input: DatasetRef, layer: string | undefined, sample: number): Promise<boolean> {
  const cheap = (await datasetBytes(input.path)) <= CHEAP_SCAN_BYTES;
  return withDataset(input, async (ds) => {
    let cut = false;
    for (let i = 0; i < ds.layers.count(); i++) {
      const l = ds.layers.get(i);
      if (layer !== undefined && l.name !== layer) continue;
      const n = await cheapFeatureCount(l, cheap);
      if (n === null || n > sample) cut = true;
    }
    return cut;
  });
}

/**
 * The data preview of the pipeline's result, computed on the first features of the input only
 * (a truncated sample, as the spec says; convert gives the full result).
 */
export async function transformDataPreview(
  input: DatasetRef,
  spec: PipelineSpec,
  workDir: string,
  layer: string | undefined,
  limit: number,
  options: PipelineOptions = {},
): Promise<DataPreview & { warnings: ProcessingWarning[] }> {
  const sample = options.sampleFeatures ?? TRANSFORM_PREVIEW_SAMPLE;
  const result = await applyPipeline(input, spec, workDir, { ...options, sampleFeatures: sample, outputLimit: options.outputLimit ?? sample });
  const preview = await dataPreview(result.dataset, layer, limit);
  const warnings = warningsOf(result, preview.layer);
  if (result.changed && (await sampleWasCut(input, layer, sample))) return { ...preview, row_count: null, truncated: true, warnings };
  return { ...preview, warnings };
}

/** The pipeline's warnings about the previewed layer (or about no layer in particular). */
const warningsOf = (result: PipelineResult, layer: string) => result.warnings.filter((w) => !w.layer || w.layer === layer);

/** The spatial preview of the pipeline's result, on a sample of the input (see transformDataPreview). */
export async function transformSpatialPreview(
  input: DatasetRef,
  spec: PipelineSpec,
  workDir: string,
  layer: string | undefined,
  options: PipelineOptions = {},
): Promise<SpatialPreview & { warnings: ProcessingWarning[] }> {
  const sample = options.sampleFeatures ?? TRANSFORM_PREVIEW_SAMPLE;
  const result = await applyPipeline(input, spec, workDir, { ...options, sampleFeatures: sample, outputLimit: options.outputLimit ?? sample });
  const preview = await spatialPreview(result.dataset, layer);
  const warnings = warningsOf(result, preview.layer);
  if (result.changed && (await sampleWasCut(input, layer, sample))) return { ...preview, feature_count: null, truncated: true, warnings };
  return { ...preview, warnings };
}
