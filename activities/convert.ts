import { Context } from '@temporalio/activity';
import path from 'node:path';
import type { Services } from '../application/services.js';
import type { StepProgress } from '../domain/runs/facts.js';
import type { ConvertOutput } from '../domain/workspaces/contents.js';
import type { ConvertRequest } from '../geo/datasets/convert.js';
import type { LocalDataset } from '../geo/datasets/stored.js';
import { convertDataset } from '../geo/isolation/index.js';

export interface ConvertToFileInput {
  /** Whose files the output joins: a Workspace or a Run. */
  owner: string;
  /** The dataset as GDAL opens it on this worker. */
  dataset: LocalDataset;
  request: ConvertRequest;
  /** A folder of the owner's (FileStore.workDir) that receives the output. */
  outDir: string;
  progress: (p: StepProgress) => void;
}

/**
 * The one convert of Workspaces (activities/workspaces.ts) and Runs (activities/runs/convert.ts):
 * GDAL, sandboxed, within this worker's SVC_GDAL_* limits, reporting progress as it writes and
 * stopped when the activity is cancelled. Storing the folder is the caller's (a Workspace
 * publishes its output, a Run hands its step folder on). The answer is the converted file as a
 * Workspace's output records it; a Run's artifact takes its fields.
 */
export async function convertToFile(services: Pick<Services, 'config' | 'files'>, input: ConvertToFileInput): Promise<ConvertOutput> {
  const result = await convertDataset(input.dataset, input.request, input.outDir, {
    timeoutMs: services.config.gdalTimeoutMs,
    memoryBytes: services.config.gdalMemoryBytes,
    progress: input.progress,
    signal: Context.current().cancellationSignal,
  });
  return {
    format: result.format,
    filename: result.filename,
    size: result.size,
    media_type: result.media_type ?? null,
    layers: result.layers,
    file: services.files.nameOf(input.owner, path.join(input.outDir, result.filename)),
    warnings: result.warnings,
  };
}
