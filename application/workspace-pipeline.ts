import { randomBytes } from 'node:crypto';
import type { StoredDataset } from '../domain/datasets.js';
import { DomainError } from '../domain/errors.js';
import type { Pipeline } from '../domain/workspaces/contents.js';
import { workspaceDecider, workspaceStream } from '../domain/workspaces/workspace.js';
import { parsePreviewLimit } from '../geo/datasets/preview.js';
import { localDataset, type LocalDataset } from '../geo/datasets/stored.js';
import { dataPreview, spatialPreview, transformDataPreview, transformSpatialPreview } from '../geo/isolation/index.js';
import { checkPipeline } from '../geo/operations/pipeline-check.js';
import { loadWorkspace, type WorkspaceRow } from '../projections/workspaces.js';
import { execute } from './commands.js';
import type { Services } from './services.js';

/*
 * A Workspace's pipeline: set it (checked against what the Workspace holds and the other
 * Workspaces it reads), and preview the data with or without it. Converting through it is
 * application/workspaces.ts.
 */

/** The caller's Workspace as the read model has it (job_not_found, job_expired otherwise). */
const getWorkspace = (services: Services, userId: string, id: string) => loadWorkspace(services.pool, userId, id, services.clock());

/**
 * The other Workspaces a pipeline's operations read layers of (workspace_id: a second upload or
 * import): the caller's, not expired, by id. Anything else is refused as the operation's error.
 */
export async function relatedDatasets(services: Services, userId: string, self: string, pipeline: Pipeline): Promise<Map<string, StoredDataset>> {
  const ids = new Set<string>();
  for (const op of pipeline.operations) {
    const ref = (op as Record<string, unknown>).workspace_id;
    if (typeof ref === 'string') ids.add(ref);
  }
  const found = new Map<string, StoredDataset>();
  for (const other of ids) {
    if (other === self)
      throw new DomainError('invalid_transformation', 'workspace_id names this Workspace itself: leave it out to use its own layers', { workspace_id: other });
    try {
      found.set(other, (await getWorkspace(services, userId, other)).dataset);
    } catch (error) {
      if (error instanceof DomainError && (error.code === 'job_not_found' || error.code === 'job_expired')) {
        throw new DomainError(
          'invalid_transformation',
          `workspace_id ${JSON.stringify(other)}: ${error.code === 'job_expired' ? 'that Workspace has expired; upload the file again' : 'you have no Workspace with that id'}`,
          { workspace_id: other },
        );
      }
      throw error;
    }
  }
  return found;
}

/** The resolver the pipeline engine asks for another Workspace's dataset. */
const resolverOf = (services: Services, related: Map<string, StoredDataset>) => async (id: string) => {
  const stored = related.get(id);
  if (!stored) throw new DomainError('invalid_transformation', `workspace_id ${JSON.stringify(id)} is not known here`, { workspace_id: id });
  return localDataset(services.files, id, stored);
};

/** Replaces the whole pipeline, checked against what the Workspace holds. */
export async function setPipeline(services: Services, userId: string, id: string, pipeline: Pipeline): Promise<Pipeline> {
  const row = await getWorkspace(services, userId, id);
  checkPipeline(pipeline, { kind: row.inspection.dataset_type, layers: row.inspection.layers });
  await relatedDatasets(services, userId, row.id, pipeline);
  await execute(services, workspaceStream(row.id), workspaceDecider, {
    type: 'SetPipeline',
    workspaceId: row.id,
    actorId: userId,
    pipeline,
    at: services.clock(),
  });
  return (await getWorkspace(services, userId, row.id)).pipeline;
}

export interface PreviewRequest {
  layer?: string | undefined;
  /** As the query string has it: default 100, at most 500. */
  limit?: string | undefined;
}

/** Sample rows of a layer of the upload, or (transformed) of the pipeline's result. `signal`: the caller went away. */
export async function previewData(services: Services, userId: string, id: string, request: PreviewRequest, transformed = false, signal?: AbortSignal) {
  const row = await getWorkspace(services, userId, id);
  const limit = parsePreviewLimit(request.limit);
  const datasets = transformed ? resolverOf(services, await relatedDatasets(services, userId, row.id, row.pipeline)) : undefined;
  const preview = await onDataset(services, row, transformed, signal, (dataset, scratch, bounds) =>
    scratch
      ? transformDataPreview(dataset, row.pipeline, scratch, request.layer, limit, { ...bounds, datasets })
      : dataPreview(dataset, request.layer, limit, bounds),
  );
  return { workspace_id: row.id, ...preview };
}

/** Sample features as GeoJSON in EPSG:4326, of the upload or (transformed) of the pipeline's result. */
export async function previewSpatial(services: Services, userId: string, id: string, request: PreviewRequest, transformed = false, signal?: AbortSignal) {
  const row = await getWorkspace(services, userId, id);
  const datasets = transformed ? resolverOf(services, await relatedDatasets(services, userId, row.id, row.pipeline)) : undefined;
  const preview = await onDataset(services, row, transformed, signal, (dataset, scratch, bounds) =>
    scratch ? transformSpatialPreview(dataset, row.pipeline, scratch, request.layer, { ...bounds, datasets }) : spatialPreview(dataset, request.layer, bounds),
  );
  return { workspace_id: row.id, ...preview };
}

/** What bounds a preview: its deadline and the caller going away (one signal), the time and file size of each GDAL stage. */
interface PreviewBounds {
  signal: AbortSignal;
  timeoutMs: number;
  maxBytes: number;
}

/**
 * Runs a preview on the Workspace's dataset. A transformed one runs the stored pipeline on a
 * bounded sample of the upload, in a scratch folder of its own, removed afterwards. Every preview
 * is bounded like one (SVC_PREVIEW_TIMEOUT_S, SVC_PREVIEW_MAX_MB): past its deadline, or when the
 * caller goes away, whatever GDAL process works for it is stopped.
 */
async function onDataset<T>(
  services: Services,
  row: WorkspaceRow,
  transformed: boolean,
  caller: AbortSignal | undefined,
  preview: (dataset: LocalDataset, scratch: string | null, bounds: PreviewBounds) => Promise<T>,
): Promise<T> {
  const { previewTimeoutMs: timeoutMs, previewMaxBytes: maxBytes } = services.config;
  const stop = new AbortController();
  const seconds = Math.round(timeoutMs / 1000);
  const deadline = setTimeout(
    () =>
      stop.abort(
        new DomainError(
          transformed ? 'invalid_transformation' : 'processing_timeout',
          `The preview was stopped after ${seconds} s (SVC_PREVIEW_TIMEOUT_S): ${transformed ? 'the pipeline is too heavy to preview; convert to see its whole result' : 'the layer is too slow to read for a preview'}`,
          { limit_s: seconds, setting: 'SVC_PREVIEW_TIMEOUT_S' },
        ),
      ),
    timeoutMs,
  );
  const onCaller = () => stop.abort(new DomainError('invalid_parameter', 'The request was cancelled'));
  if (caller?.aborted) onCaller();
  caller?.addEventListener('abort', onCaller, { once: true });
  const scratch = transformed ? `tmp/preview-${randomBytes(4).toString('hex')}` : null;
  try {
    const dataset = await localDataset(services.files, row.id, row.dataset);
    return await preview(dataset, scratch && (await services.files.workDir(row.id, scratch)), { signal: stop.signal, timeoutMs, maxBytes });
  } finally {
    clearTimeout(deadline);
    caller?.removeEventListener('abort', onCaller);
    if (scratch) await services.files.remove(row.id, scratch);
  }
}
