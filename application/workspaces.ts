import { randomBytes } from 'node:crypto';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { DomainError } from '../domain/errors.js';
import { RangeNotSatisfiable, type ByteRange, type ResolvedRange } from '../platform/byte-range.js';
import type { ConvertRequest, Pipeline, WorkspaceOrigin } from '../domain/workspaces/contents.js';
import { workspaceDecider, workspaceStream } from '../domain/workspaces/workspace.js';
import { ConnectorError } from '../domain/transfers.js';
import { checkConvertRequest } from '../geo/datasets/convert.js';
import { datasetAtUpload, prepareUpload, safeFilename } from '../geo/datasets/dataset-files.js';
import { checkReadColumns, splitReadOptions, type ReadOptions } from '../geo/datasets/read-options.js';
import { inspectDataset } from '../geo/isolation/index.js';
import { storedDataset } from '../geo/datasets/stored.js';
import { loadWorkspace, type WorkspaceRow } from '../projections/workspaces.js';
import { connectorErrorFrom, domainErrorFrom, failurePosition } from '../temporal/failures.js';
import { workspaceConvertWorkflowId, workspaceDeliverWorkflowId } from '../temporal/ids.js';
import type { ConvertWorkspaceWorkflow, DeliverWorkspaceWorkflow } from '../temporal/workspaces.js';
import { execute } from './commands.js';
import { relatedDatasets } from './workspace-pipeline.js';
import { describeConnection, parseSelector } from './connections.js';
import type { Services } from './services.js';
import { extractFromSource, stepProgressOf, transferError, type TransferContext } from './transfers.js';
import { progressReporter, withProgress, type ProgressKey } from './operation-progress.js';
import { requireWorker } from './worker-presence.js';

/*
 * The Workspace use cases: create one from an upload or a saved Source, convert, download and
 * deliver (setting its pipeline and previews: application/workspace-pipeline.ts). The API's routes
 * translate HTTP to these calls and back; reads go through the read model
 * (projections/workspaces.ts), writes through the Workspace's decider.
 */

/** Where a use case logs what it cannot say to the caller (the request's logger). */
export type Log = TransferContext['log'];

/** The caller's Workspace as the read model has it (job_not_found, job_expired otherwise). */
const getWorkspace = (services: Services, userId: string, id: string) => loadWorkspace(services.pool, userId, id, services.clock());

/** The caller's Workspace, as its read model has it (the API shows it through api/workspaces/representation.ts). */
export const showWorkspace = (services: Services, userId: string, id: string): Promise<WorkspaceRow> => getWorkspace(services, userId, id);

/** The Workspace's stored pipeline. */
export const getPipeline = async (services: Services, userId: string, id: string): Promise<Pipeline> => (await getWorkspace(services, userId, id)).pipeline;

/**
 * Prepares and inspects a file that has arrived in a new Workspace's `original/` folder, then
 * records the Workspace. On any failure nothing stays behind: no files, no events.
 */
async function createWorkspace(
  services: Services,
  workspaceId: string,
  userId: string,
  origin: WorkspaceOrigin,
  arrive: () => Promise<{ file: string; filename: string; size: number }>,
  read: ReadOptions = {},
): Promise<WorkspaceRow> {
  const { files, config } = services;
  try {
    const arrived = await arrive();
    const prepared = await prepareUpload(arrived.file, arrived.filename, await files.workDir(workspaceId, 'dataset'), {
      maxUncompressedBytes: config.maxUploadBytes * 4,
      read,
    });
    // The upload as it came is read where it is stored, not stored a second time as the dataset.
    const ref = await datasetAtUpload(arrived.file, prepared);
    const inspection = await inspectDataset(ref);
    checkReadColumns(read, inspection.layers);
    // Stored before the Workspace is recorded: any API replica or worker may read it next.
    await files.publish(workspaceId, 'dataset');
    await execute(services, workspaceStream(workspaceId), workspaceDecider, {
      type: 'CreateWorkspace',
      workspaceId,
      actorId: userId,
      filename: arrived.filename,
      size: arrived.size,
      origin,
      inspection: { ...inspection, raster: inspection.raster as Record<string, unknown> | null, warnings: [...ref.warnings, ...inspection.warnings] },
      dataset: storedDataset(files, workspaceId, ref),
      at: services.clock(),
      ttlMs: config.workspaceTtlMs,
    });
  } catch (error) {
    // What the request's own failure was matters; files left behind (storage down) go with the cleanup's orphans.
    await files.remove(workspaceId).catch(() => undefined);
    throw error;
  }
  return showWorkspace(services, userId, workspaceId);
}

/** An upload, streamed into the Workspace's files (never held in memory), the size limit enforced while streaming. */
export async function createFromUpload(
  services: Services,
  userId: string,
  upload: { filename: string; file: Readable & { truncated: boolean }; fields?: Record<string, unknown> },
): Promise<WorkspaceRow> {
  // Reading options as form fields (source_crs, x_column, y_column, z_column), checked before the upload is stored.
  const { options: read } = splitReadOptions(upload.fields ?? {}, 'body');
  const maxBytes = services.config.maxUploadBytes;
  const workspaceId = services.newId('workspace');
  const original = safeFilename(upload.filename || 'upload');
  return createWorkspace(
    services,
    workspaceId,
    userId,
    { kind: 'upload' },
    async () => {
      const size = await services.files.put(workspaceId, `original/${original}`, upload.file);
      if (upload.file.truncated) {
        // In the unit people know files by (MB: MiB, as SVC_MAX_UPLOAD_MB counts); the exact figure is in details.
        const mb = maxBytes / (1024 * 1024);
        throw new DomainError(
          'upload_too_large',
          `The file is larger than this server accepts: uploads are limited to ${Number.isInteger(mb) ? mb : mb.toFixed(1)} MB`,
          {
            max_bytes: maxBytes,
          },
        );
      }
      if (size === 0) throw new DomainError('invalid_source', 'The uploaded file is empty');
      return { file: await services.files.local(workspaceId, `original/${original}`), filename: original, size };
    },
    read,
  );
}

/**
 * An import from a saved Source: the connector extracts into the new Workspace's files (streamed,
 * size-limited), then the file is prepared and inspected exactly like an upload. The API does
 * this itself, as it does for uploads: the request is the transfer. The Source is described
 * (type, public fields) to check the request, and its secrets are decrypted once, by the extract.
 */
export async function importFromSource(
  services: Services,
  userId: string,
  request: { sourceId: string; selector: unknown; progressId?: string | undefined },
  log: Log,
): Promise<WorkspaceRow> {
  const source = await describeConnection(services, 'source', request.sourceId, userId);
  if (!source.connector.source!.importable) {
    throw new DomainError('invalid_source', `${source.type} Sources cannot be imported into a Workspace; use a Job`, { type: source.type });
  }
  const resource = parseSelector(source.connector, 'source', request.selector, 'source_resource');
  const { options: read } = splitReadOptions(resource, 'source_resource');
  const workspaceId = services.newId('workspace');
  const origin = { kind: 'source' as const, source_id: source.id, source_type: source.type, source_resource: Object.keys(resource).length ? resource : null };
  const following = progressKey(userId, request.progressId);
  const progress = progressReporter({ pool: services.pool, log: services.log }, following);
  return withProgress(services, following, { operation: 'import', progress: { phase: 'transfer' } }, () =>
    createWorkspace(
      services,
      workspaceId,
      userId,
      origin,
      async () => {
        const workDir = await services.files.workDir(workspaceId, 'original');
        const extracted = await extractFromSource(
          services,
          { ownerId: userId, sourceId: source.id, resource },
          { log, workDir, maxBytes: services.config.maxUploadBytes, ...(progress ? { progress: (info) => progress(stepProgressOf(info)) } : {}) },
        ).catch((error: unknown) => {
          throw error instanceof ConnectorError ? transferError(error, 'import') : error;
        });
        await services.files.publish(workspaceId, 'original');
        // Transferred: what is left is preparing and inspecting the file, which has no figures.
        progress?.({ phase: 'inspect' });
        return { file: extracted.file, filename: extracted.filename, size: (await stat(extracted.file)).size };
      },
      read,
    ),
  );
}

/** The key of a request the caller follows (GET /api/v1/progress/{progress_id}), or null. */
const progressKey = (ownerId: string, progressId: string | null | undefined): ProgressKey | null => (progressId ? { ownerId, progressId } : null);

export interface ConvertBody {
  output_format: string;
  target_crs?: string | null | undefined;
  layers?: string[] | undefined;
  creation_options?: ConvertRequest['creation_options'] | undefined;
  transformation?: string | null | undefined;
  progress_id?: string | undefined;
}

/**
 * Converts the upload through the stored pipeline on a worker and waits for the outcome. The
 * workflow owns the lifecycle (start, convert, outcome, each recorded as an event); this waits
 * for it, then for the read models to show its outcome.
 */
export async function convert(services: Services, userId: string, id: string, body: ConvertBody, log: Log): Promise<WorkspaceRow> {
  const row = await getWorkspace(services, userId, id);
  const layers = body.layers ?? [];
  // Refused here, before a conversion starts: a bad request never marks the Workspace failed.
  const creationOptions = body.creation_options ?? null;
  const format = checkConvertRequest(
    { outputFormat: body.output_format, targetCrs: body.target_crs ?? null, layers, creationOptions, transformation: body.transformation ?? null },
    { kind: row.inspection.dataset_type, layers: row.inspection.layers.map((l) => l.name) },
  );
  const related = await relatedDatasets(services, userId, row.id, row.pipeline);
  await requireWorker(services);
  const conversionId = `cv_${randomBytes(8).toString('hex')}`;
  const request: ConvertRequest = {
    output_format: format.id,
    target_crs: body.target_crs ?? null,
    layers,
    ...(creationOptions ? { creation_options: creationOptions } : {}),
    // Checked above; the worker reprojects with it (geo/datasets/convert-vector.ts).
    ...(body.transformation ? { transformation: body.transformation } : {}),
  };
  const following = progressKey(userId, body.progress_id);
  try {
    const { position } = await withProgress(services, following, { operation: 'convert', progress: { phase: 'pipeline' } }, () =>
      services.temporal!.workflow.execute<ConvertWorkspaceWorkflow>('convertWorkspaceWorkflow', {
        taskQueue: services.config.taskQueue,
        workflowId: workspaceConvertWorkflowId(row.id, conversionId),
        args: [
          {
            workspaceId: row.id,
            actorId: userId,
            conversionId,
            request,
            dataset: row.dataset,
            baseName: row.filename.replace(/\.[^.]+$/, '') || 'result',
            uploadFilename: row.filename,
            ...(related.size ? { related: Object.fromEntries(related) } : {}),
            ...(following ? { progress: following } : {}),
          },
        ],
      }),
    );
    await services.projections.waitFor(BigInt(position));
  } catch (error) {
    const position = failurePosition(error);
    if (position !== undefined) await services.projections.waitFor(position);
    const domain = domainErrorFrom(error);
    if (domain) throw domain;
    log.error({ err: error, workspaceId: row.id }, 'conversion failed');
    throw new DomainError('internal_error', 'The conversion failed on the worker; the error has been logged');
  }
  return showWorkspace(services, userId, row.id);
}

/** The converted result, streamed. */
export async function download(
  services: Services,
  userId: string,
  id: string,
  range?: ByteRange,
): Promise<{ body: Readable; size: number; range?: ResolvedRange; filename: string }> {
  const row = await getWorkspace(services, userId, id);
  if (!row.output) throw new DomainError('job_not_ready', 'Nothing to download yet: POST /convert first', { status: row.status });
  try {
    return { ...(await services.files.get(row.id, row.output.file, range)), filename: row.output.filename };
  } catch (err) {
    if (err instanceof RangeNotSatisfiable) {
      throw new DomainError('range_not_satisfiable', `The requested range is beyond the download's ${err.size} bytes`, { size: err.size });
    }
    throw err;
  }
}

/**
 * Delivers the converted output to a saved Destination on a worker and waits for the result. The
 * Destination is described here to check the request; its secrets are decrypted only on the
 * worker, which talks to it.
 */
export async function deliver(
  services: Services,
  userId: string,
  id: string,
  request: { destinationId: string; target: unknown; progressId?: string | undefined },
  log: Log,
) {
  const row = await getWorkspace(services, userId, id);
  if (!row.output) {
    throw new DomainError('job_not_ready', 'Nothing to deliver yet: POST /convert first; delivery never converts with guessed defaults', {
      status: row.status,
    });
  }
  const destination = await describeConnection(services, 'destination', request.destinationId, userId);
  if (!destination.connector.destination!.deliverable) {
    throw new DomainError('invalid_destination', `A Workspace cannot deliver to a ${destination.type} Destination; use a Job or another Destination`, {
      type: destination.type,
    });
  }
  const target = parseSelector(destination.connector, 'destination', request.target, 'destination_target');
  await requireWorker(services);
  const deliveryId = `dl_${randomBytes(8).toString('hex')}`;
  const following = progressKey(userId, request.progressId);
  const output = row.output;
  try {
    // What the delivery is heading for is known before it starts: the output's size.
    const start = { operation: 'deliver' as const, progress: { phase: 'transfer' as const, bytes_written: 0, bytes_total: output.size } };
    const { delivery, position } = await withProgress(services, following, start, () =>
      services.temporal!.workflow.execute<DeliverWorkspaceWorkflow>('deliverWorkspaceWorkflow', {
        taskQueue: services.config.taskQueue,
        workflowId: workspaceDeliverWorkflowId(row.id, deliveryId),
        args: [{ workspaceId: row.id, actorId: userId, destinationId: destination.id, target, deliveryId, ...(following ? { progress: following } : {}) }],
      }),
    );
    await services.projections.waitFor(BigInt(position));
    return {
      workspace_id: row.id,
      delivery_id: deliveryId,
      destination_id: delivery.destination_id,
      destination_type: delivery.destination_type,
      target: delivery.target,
      format: row.output.format,
      filename: row.output.filename,
      rows_written: delivery.rows_written ?? null,
      bytes_written: delivery.bytes_written ?? null,
      duration_ms: delivery.duration_ms,
    };
  } catch (error) {
    const connector = connectorErrorFrom(error);
    if (connector) throw transferError(connector, 'deliver');
    const domain = domainErrorFrom(error);
    if (domain) throw domain;
    log.error({ err: error, workspaceId: row.id }, 'delivery failed');
    throw new DomainError('internal_error', 'The delivery failed on the worker; the error has been logged');
  }
}
