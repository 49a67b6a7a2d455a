import { convertDataset, type ConvertOptions, type ConvertRequest } from '../datasets/convert.js';
import type { DatasetRef } from '../datasets/dataset-files.js';
import { inspectDataset } from '../datasets/inspect.js';
import { dataPreview, spatialPreview } from '../datasets/preview.js';
import { applyPipeline, transformDataPreview, transformSpatialPreview, type PipelineOptions, type PipelineSpec } from '../operations/pipeline.js';

/*
 * The GDAL work a sandboxed host runs on a dataset the service's own processes do not open
 * (geo/isolation/index.ts decides which). Each op takes JSON arguments (paths are the same inside
 * the host, whose binds put every folder at its own path) and may report progress.
 */

type Progress = (p: unknown) => void;
type Limits = Omit<ConvertOptions, 'progress' | 'signal'>;
type PipelineLimits = Omit<PipelineOptions, 'signal'>;

/** JSON has no undefined: an absent layer arrives as null. */
const named = (layer: string | null | undefined) => layer ?? undefined;

export const hostOps = {
  inspectDataset: ([ref]: [DatasetRef]) => inspectDataset(ref),
  dataPreview: ([ref, layer, limit]: [DatasetRef, string | undefined, number]) => dataPreview(ref, named(layer), limit),
  spatialPreview: ([ref, layer]: [DatasetRef, string | undefined]) => spatialPreview(ref, named(layer)),
  transformDataPreview: ([ref, spec, workDir, layer, limit, options]: [DatasetRef, PipelineSpec, string, string | undefined, number, PipelineLimits]) =>
    transformDataPreview(ref, spec, workDir, named(layer), limit, options),
  transformSpatialPreview: ([ref, spec, workDir, layer, options]: [DatasetRef, PipelineSpec, string, string | undefined, PipelineLimits]) =>
    transformSpatialPreview(ref, spec, workDir, named(layer), options),
  applyPipeline: ([ref, spec, workDir, options]: [DatasetRef, PipelineSpec, string, PipelineLimits]) => applyPipeline(ref, spec, workDir, options),
  convertDataset: ([input, request, outDir, limits]: [DatasetRef, ConvertRequest, string, Limits], progress: Progress) =>
    convertDataset(input, request, outDir, { ...limits, progress }),
} satisfies Record<string, (args: never, progress: Progress) => Promise<unknown>>;

export type HostOp = keyof typeof hostOps;
export type HostArgs<K extends HostOp> = Parameters<(typeof hostOps)[K]>[0];
