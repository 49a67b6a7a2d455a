import { convertDataset, type ConvertOptions, type ConvertRequest } from '../datasets/convert.js';
import { DomainError } from '../../domain/errors.js';
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
/** A pipeline's options in a host: JSON only, the other Workspaces' datasets it names resolved by the caller. */
export type HostPipelineOptions = Omit<PipelineOptions, 'signal' | 'datasets'> & { related: Record<string, DatasetRef> };

/** The resolver a pipeline expects, over the datasets resolved before the host started (their folders are its binds). */
function withRelated({ related, ...options }: HostPipelineOptions): PipelineOptions {
  return {
    ...options,
    datasets: async (id: string) => {
      const ref = related[id];
      if (!ref) throw new DomainError('invalid_transformation', `workspace_id ${JSON.stringify(id)} is not known here`, { workspace_id: id });
      return ref;
    },
  };
}

/** JSON has no undefined: an absent layer arrives as null. */
const named = (layer: string | null | undefined) => layer ?? undefined;

export const hostOps = {
  inspectDataset: ([ref]: [DatasetRef]) => inspectDataset(ref),
  dataPreview: ([ref, layer, limit]: [DatasetRef, string | undefined, number]) => dataPreview(ref, named(layer), limit),
  spatialPreview: ([ref, layer]: [DatasetRef, string | undefined]) => spatialPreview(ref, named(layer)),
  transformDataPreview: ([ref, spec, workDir, layer, limit, options]: [DatasetRef, PipelineSpec, string, string | undefined, number, HostPipelineOptions]) =>
    transformDataPreview(ref, spec, workDir, named(layer), limit, withRelated(options)),
  transformSpatialPreview: ([ref, spec, workDir, layer, options]: [DatasetRef, PipelineSpec, string, string | undefined, HostPipelineOptions]) =>
    transformSpatialPreview(ref, spec, workDir, named(layer), withRelated(options)),
  applyPipeline: ([ref, spec, workDir, options]: [DatasetRef, PipelineSpec, string, HostPipelineOptions]) =>
    applyPipeline(ref, spec, workDir, withRelated(options)),
  convertDataset: ([input, request, outDir, limits]: [DatasetRef, ConvertRequest, string, Limits], progress: Progress) =>
    convertDataset(input, request, outDir, { ...limits, progress }),
} satisfies Record<string, (args: never, progress: Progress) => Promise<unknown>>;

export type HostOp = keyof typeof hostOps;
export type HostArgs<K extends HostOp> = Parameters<(typeof hostOps)[K]>[0];
