import { statSync } from 'node:fs';
import { mkdir, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { convertDataset as convertHere, type ConvertOptions, type ConvertRequest, type ConvertResult } from '../datasets/convert.js';
import { datasetAt, type DatasetRef } from '../datasets/dataset-files.js';
import { inputArgs, runGdalWrite, type WriteLimits } from '../gdal/translate.js';
import { insideSandbox, NeedsSandbox, openDataset } from '../gdal/gdal.js';
import { inspectDataset as inspectHere, type DatasetInfo } from '../datasets/inspect.js';
import {
  dataPreview as dataPreviewHere,
  PREVIEW_LIMIT_DEFAULT,
  spatialPreview as spatialPreviewHere,
  type DataPreview,
  type SpatialPreview,
} from '../datasets/preview.js';
import {
  applyPipeline as applyPipelineHere,
  transformDataPreview as transformDataPreviewHere,
  transformSpatialPreview as transformSpatialPreviewHere,
  type PipelineOptions,
  type PipelineResult,
  type PipelineSpec,
} from '../operations/pipeline.js';
import { type HostBinds, HostPool, privateBundleDir } from '../sandbox/host-pool.js';
import type { HostArgs, HostOp, HostPipelineOptions } from './ops.js';

/*
 * Where GDAL reads a user's dataset. The service's own processes (the API, the worker) hold the
 * secrets key, sessions and every user's files, so GDAL opens a dataset there only with drivers
 * whose files cannot name another file or a service (geo/gdal/gdal.ts, IN_PROCESS_DRIVERS:
 * GeoPackage, shapefile, GeoJSON, CSV, FlatGeobuf, FileGDB) — the formats nearly every upload and
 * Run has, at the speed of a library call. Any other dataset is read by the same code in a
 * sandboxed host (geo/sandbox/host-pool.ts) that sees only the dataset's folder and the folder it
 * writes: a PDS4 label naming ../../secret.key, a MapInfo seamless table or an ENVI header
 * pointing elsewhere finds nothing there. Callers use these functions instead of the in-process
 * ones; results are the same either way.
 */

export interface IsolationOptions {
  /** Stops the work (a closed request); in a host, the host is stopped. */
  signal?: AbortSignal | undefined;
  /** Wall-clock limit of the work in a host; default the GDAL limit (SVC_GDAL_TIMEOUT_MIN). */
  timeoutMs?: number | undefined;
}

const envInt = (name: string, fallback: number) => {
  const n = Number(process.env[name]);
  return Number.isFinite(n) && n > 0 ? n : fallback;
};

let pool: HostPool | undefined;
function hosts(): HostPool {
  pool ??= new HostPool({
    entry: hostEntry,
    memoryBytes: envInt('SVC_GDAL_MEMORY_MB', 4096) * 1024 * 1024,
    maxHosts: envInt('SVC_SANDBOX_HOSTS', 4),
    idleMs: envInt('SVC_SANDBOX_IDLE_S', 30) * 1000,
  });
  return pool;
}

/** Stops the sandboxed hosts of this process (it is shutting down). */
export function closeIsolation(): void {
  pool?.close();
  pool = undefined;
}

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

let entry: Promise<{ file: string; nodeArgs: string[]; readable: string[] }> | undefined;
/**
 * The host's code: host-main.ts and what it imports, bundled once per process with esbuild into a
 * private folder (a Node start that compiles TypeScript would cost the host a second), gdal-async
 * loaded from the project's node_modules. The host reads only that bundle, node_modules and /usr.
 */
function hostEntry() {
  entry ??= (async () => {
    const require = createRequire(import.meta.url);
    const gdalMain = pathToFileURL(require.resolve('gdal-async')).href;
    const { build } = await import('esbuild');
    const file = path.join(privateBundleDir(), 'gdal-host.mjs');
    await build({
      entryPoints: [path.join(here, 'host-main.ts')],
      outfile: file,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      logLevel: 'error',
      plugins: [
        {
          // Each module keeps its own location (gdal.ts loads gdal-async with a require made from
          // it), so node_modules resolves from the project, not from the bundle's folder.
          name: 'modules-keep-their-place',
          setup(b) {
            b.onLoad({ filter: /\.ts$/ }, async (args) => ({
              contents: (await readFile(args.path, 'utf8')).replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href)),
              loader: 'ts',
            }));
            b.onResolve({ filter: /^gdal-async$/ }, () => ({ path: gdalMain, external: true }));
          },
        },
      ],
    });
    return { file, nodeArgs: ['--expose-gc'], readable: [path.dirname(file), path.join(root, 'node_modules')] };
  })();
  entry.catch(() => {
    entry = undefined;
  });
  return entry;
}

/** The folder that holds a dataset: a folder dataset (shapefiles side by side, a .gdb) is its own. */
export function datasetFolder(ref: DatasetRef): string {
  try {
    if (statSync(ref.path).isDirectory()) return path.resolve(ref.path);
  } catch {
    // not there (yet): its folder is still where it would be
  }
  return path.dirname(path.resolve(ref.path));
}

/** Which datasets opened here already (by path, size and time): the answer does not change. */
const openableHere = new Map<string, boolean>();

async function opensHere(ref: DatasetRef): Promise<boolean> {
  let key: string;
  try {
    const st = statSync(ref.path);
    key = `${ref.path}\u0000${st.ino}:${st.size}:${st.mtimeMs}\u0000${ref.driver ?? ''}`;
  } catch {
    return true; // a missing file fails here with the usual message
  }
  const known = openableHere.get(key);
  if (known !== undefined) return known;
  let answer = true;
  try {
    (await openDataset(ref)).close();
  } catch (error) {
    // A file no driver opens here and no driver at all opens: the host says so as clearly.
    answer = !(error instanceof NeedsSandbox);
  }
  if (openableHere.size > 1024) openableHere.delete(openableHere.keys().next().value!);
  openableHere.set(key, answer);
  return answer;
}

/** Runs `here` in this process when GDAL may open the dataset here, else `op` in a sandboxed host with `binds`. */
async function isolated<K extends HostOp, T>(
  ref: DatasetRef,
  op: K,
  args: HostArgs<K>,
  binds: HostBinds,
  here: () => Promise<T>,
  options: IsolationOptions & { onProgress?: ((p: unknown) => void) | undefined } = {},
): Promise<T> {
  if (insideSandbox() || (await opensHere(ref))) return here();
  return (await hosts().run(binds, {
    op,
    args: args as unknown[],
    timeoutMs: options.timeoutMs ?? envInt('SVC_GDAL_TIMEOUT_MIN', 50) * 60_000,
    signal: options.signal,
    onProgress: options.onProgress,
  })) as T;
}

const reading = (ref: DatasetRef): HostBinds => ({ readable: [datasetFolder(ref)], writable: [] });

export function inspectDataset(ref: DatasetRef, options: IsolationOptions = {}): Promise<DatasetInfo> {
  return isolated(ref, 'inspectDataset', [ref], reading(ref), () => inspectHere(ref), options);
}

export function dataPreview(ref: DatasetRef, layer?: string, limit: number = PREVIEW_LIMIT_DEFAULT, options: IsolationOptions = {}): Promise<DataPreview> {
  return isolated(ref, 'dataPreview', [ref, layer, limit], reading(ref), () => dataPreviewHere(ref, layer, limit), options);
}

export function spatialPreview(ref: DatasetRef, layer?: string, options: IsolationOptions = {}): Promise<SpatialPreview> {
  return isolated(ref, 'spatialPreview', [ref, layer], reading(ref), () => spatialPreviewHere(ref, layer), options);
}

/** The other Workspaces' datasets a pipeline's operations name (workspace_id), resolved here by the caller's resolver. */
async function relatedOf(spec: PipelineSpec, options: PipelineOptions): Promise<Record<string, DatasetRef>> {
  const ids = new Set<string>();
  for (const op of spec.operations ?? []) {
    const id = (op as { workspace_id?: unknown } | null)?.workspace_id;
    if (typeof id === 'string') ids.add(id);
  }
  const related: Record<string, DatasetRef> = {};
  if (!options.datasets) return related;
  for (const id of ids) related[id] = await options.datasets(id);
  return related;
}

/**
 * A pipeline's binds: the dataset's folder (and those of other Workspaces' datasets it names) to
 * read, and the parent of its scratch folder to write, so the previews of one Workspace (each in
 * a scratch folder of its own beside the others) share one host.
 */
const piping = (ref: DatasetRef, workDir: string, related: Record<string, DatasetRef>): HostBinds => ({
  readable: [datasetFolder(ref), ...Object.values(related).map(datasetFolder)],
  writable: [path.dirname(path.resolve(workDir))],
});

/**
 * The other Workspaces' datasets a pipeline reads, resolved for a host; none when the pipeline runs
 * here (inside the sandbox already, or on a dataset this process opens), where it resolves them itself.
 */
async function relatedFor(ref: DatasetRef, spec: PipelineSpec, options: PipelineOptions & IsolationOptions): Promise<Record<string, DatasetRef>> {
  return insideSandbox() || (await opensHere(ref)) ? {} : relatedOf(spec, options);
}

/** A pipeline's options as a host takes them: JSON, with the other Workspaces' datasets resolved beforehand. */
function hostPipelineOptions(options: PipelineOptions & IsolationOptions, related: Record<string, DatasetRef>): HostPipelineOptions {
  const { signal: _signal, datasets: _datasets, ...limits } = options;
  return { ...limits, related };
}

export async function transformDataPreview(
  ref: DatasetRef,
  spec: PipelineSpec,
  workDir: string,
  layer: string | undefined,
  limit: number,
  options: PipelineOptions & IsolationOptions = {},
): Promise<DataPreview> {
  const related = await relatedFor(ref, spec, options);
  return isolated(
    ref,
    'transformDataPreview',
    [ref, spec, workDir, layer, limit, hostPipelineOptions(options, related)],
    piping(ref, workDir, related),
    () => transformDataPreviewHere(ref, spec, workDir, layer, limit, options),
    options,
  );
}

export async function transformSpatialPreview(
  ref: DatasetRef,
  spec: PipelineSpec,
  workDir: string,
  layer: string | undefined,
  options: PipelineOptions & IsolationOptions = {},
): Promise<SpatialPreview> {
  const related = await relatedFor(ref, spec, options);
  return isolated(
    ref,
    'transformSpatialPreview',
    [ref, spec, workDir, layer, hostPipelineOptions(options, related)],
    piping(ref, workDir, related),
    () => transformSpatialPreviewHere(ref, spec, workDir, layer, options),
    options,
  );
}

export async function applyPipeline(
  ref: DatasetRef,
  spec: PipelineSpec,
  workDir: string,
  options: PipelineOptions & IsolationOptions = {},
): Promise<PipelineResult> {
  const related = await relatedFor(ref, spec, options);
  return isolated(
    ref,
    'applyPipeline',
    [ref, spec, workDir, hostPipelineOptions(options, related)],
    piping(ref, workDir, related),
    () => applyPipelineHere(ref, spec, workDir, options),
    options,
  );
}

/** A raster where a vector dataset was wanted (inProcessDataset), with its driver. */
export class RasterDataset extends Error {
  constructor(readonly driver: string) {
    super(`the dataset is a raster (${driver})`);
  }
}

/**
 * The dataset itself when GDAL may open it in this process, else a GeoPackage copy of all its
 * layers made in the sandbox (in `dir`): what a delivery reads row by row in the worker, or hands
 * to a database's ogr2ogr, which must run outside the sandbox to reach the database.
 */
export async function inProcessDataset(ref: DatasetRef, dir: string, limits: WriteLimits = {}): Promise<DatasetRef> {
  if (insideSandbox() || (await opensHere(ref))) return ref;
  // A raster has no layers to copy: say what it is (the host reads it), as an in-process open would show.
  const info = await inspectDataset(ref, { signal: limits.signal });
  if (info.dataset_type === 'raster') throw new RasterDataset(info.driver);
  await mkdir(dir, { recursive: true });
  const out = path.join(dir, 'dataset.gpkg');
  await rm(out, { force: true });
  await runGdalWrite(
    'ogr2ogr',
    ['-f', 'GPKG', out, ...inputArgs(ref)],
    { readable: [datasetFolder(ref)], writable: [path.resolve(dir)], output: out },
    { ...limits, what: 'Reading the dataset' },
  );
  return datasetAt(out);
}

export function convertDataset(input: DatasetRef, request: ConvertRequest, outDir: string, options: ConvertOptions = {}): Promise<ConvertResult> {
  const { progress, signal, ...limits } = options;
  return isolated(
    input,
    'convertDataset',
    [input, request, outDir, limits],
    // This output's folder only: its parent may hold other files (a Run's folder holds what the
    // Source downloaded, a test's the canary), and a writable bind is a readable one.
    { readable: [datasetFolder(input)], writable: [path.resolve(outDir)] },
    () => convertHere(input, request, outDir, options),
    { signal, timeoutMs: limits.timeoutMs, onProgress: progress as ((p: unknown) => void) | undefined },
  );
}
