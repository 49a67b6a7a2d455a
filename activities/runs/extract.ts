import path from 'node:path';
import type { Services } from '../../application/services.js';
import { extractFromSource } from '../../application/transfers.js';
import { prepareUpload, withoutSecondName } from '../../geo/datasets/dataset-files.js';
import { checkReadColumns, hasReadOptions, readOptionsRecord, splitReadOptions } from '../../geo/datasets/read-options.js';
import { storedDataset } from '../../geo/datasets/stored.js';
import { inspectDataset } from '../../geo/isolation/index.js';
import { mediaTypeOf, type RunArtifact } from './artifact.js';
import { featuresOf, layerFacts, stepLog } from './log.js';
import type { StepServices } from './step-services.js';
import { runStep, transferContext, type StepWork } from './steps.js';

export interface ExtractOutcome {
  unchanged: boolean;
  /** The cursor the Source returned (kept on the Job if the Run succeeds). */
  sync: { cursor: unknown } | null;
  artifact: RunArtifact;
}

type ExtractServices = StepServices & Pick<Services, 'cipher'>;

/** What an unchanged Source hands on: nothing (the workflow skips the later steps). */
const nothing: RunArtifact = {
  dataset: { path: '', open_options: [], driver: null, assumed_crs: null },
  file: '',
  filename: '',
  format: '',
  media_type: null,
  layers: [],
};

/**
 * Reads the Source into the Run's folder (incrementally when it can), then opens it like an
 * upload. The Source is opened, and its secrets decrypted, here on the worker.
 */
export function extractWork(services: ExtractServices, runId: string): StepWork<ExtractOutcome> {
  const { files } = services;
  return async (run, dir, progress) => {
    const snapshot = run.snapshot;
    const cursor = run.sync?.cursor ?? null;
    const extracted = await extractFromSource(
      services,
      {
        ownerId: run.ownerId,
        sourceId: snapshot.source_id,
        resource: snapshot.source_resource ?? {},
        parameters: run.parameters,
        sync: cursor === null ? null : { cursor },
      },
      transferContext(services, path.join(dir, 'download'), progress),
    );
    const sync = extracted.sync ? { cursor: extracted.sync.cursor } : null;
    const source = { connection: { id: snapshot.source_id, type: extracted.type }, location: extracted.location };
    if (extracted.unchanged) {
      return {
        result: { unchanged: true, sync, artifact: nothing },
        stats: { bytes_read: 0, features_read: 0 },
        log: stepLog({ read: { ...source, bytes: 0, features: 0 } }),
      };
    }
    // The Job's reading options (source_resource.source_crs, x_column, …): how to open what was read.
    const { options: read } = splitReadOptions(snapshot.source_resource ?? {}, 'source_resource');
    const ref = await prepareUpload(extracted.file, extracted.filename, path.join(dir, 'dataset'), {
      maxUncompressedBytes: services.config.maxJobInputBytes * 4,
      read,
    });
    // One name for a file the dataset holds as it came: the step's folder is stored once.
    const file = await withoutSecondName(extracted.file, ref);
    const info = await inspectDataset(ref);
    checkReadColumns(read, info.layers);
    const layers = layerFacts(info);
    const features = extracted.features ?? featuresOf(layers);
    const artifact: RunArtifact = {
      dataset: storedDataset(files, runId, ref),
      file: files.nameOf(runId, file),
      filename: extracted.filename,
      format: info.driver,
      media_type: mediaTypeOf(info.driver),
      layers: info.layers.map((l) => l.name),
      ...(hasReadOptions(read) ? { read: readOptionsRecord(read) } : {}),
    };
    return {
      result: { unchanged: false, sync, artifact },
      stats: { bytes_read: extracted.bytes, features_read: features },
      // What opening the data remarked (a shapefile without .prj, an assumed CRS …).
      warnings: info.warnings.map((message) => ({ code: 'dataset_note', message })),
      log: stepLog({ read: { ...source, filename: extracted.filename, format: info.driver, bytes: extracted.bytes, features, layers } }),
    };
  };
}

export function extractActivities(services: ExtractServices) {
  return {
    /** Reads the Source into the Run's folder (incrementally when it can), then opens it like an upload. */
    async extractStep(input: { runId: string }): Promise<ExtractOutcome> {
      return runStep(services, input.runId, 'extract', extractWork(services, input.runId));
    },
  };
}
