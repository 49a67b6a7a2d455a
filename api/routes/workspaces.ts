import fastifyMultipart from '@fastify/multipart';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline as streamPipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DomainError } from '../../domain/errors.js';
import { operationShape } from '../../domain/operations.js';
import { workspaceDecider, workspaceStream, type Pipeline } from '../../domain/workspaces/workspace.js';
import { prepareUpload, safeFilename } from '../../geo/datasets/dataset-files.js';
import { checkConvertRequest } from '../../geo/datasets/convert.js';
import { inspectDataset } from '../../geo/datasets/inspect.js';
import { checkPipeline } from '../../geo/operations/pipeline-check.js';
import { dataPreview, parsePreviewLimit, spatialPreview } from '../../geo/datasets/preview.js';
import { transformDataPreview, transformSpatialPreview } from '../../geo/operations/pipeline.js';
import { WorkspaceFiles } from '../../platform/workspace-files.js';
import type { convertWorkspaceWorkflow } from '../../workflows/index.js';
import { domainErrorFrom, failurePosition } from '../../application/failures.js';
import { openConnection, parseSelector } from '../../application/connections.js';
import { connectorErrorFrom } from '../../application/failures.js';
import { extractFromSource, transferError } from '../../application/transfers.js';
import { ConnectorError } from '../../connectors/shared/errors.js';
import { notImplemented } from '../../connectors/shared/fields.js';
import type { deliverWorkspaceWorkflow } from '../../workflows/index.js';
import { requirePrincipal } from '../auth/principal.js';
import { execute } from '../../application/commands.js';
import { errorEnvelope } from '../errors.js';
import { operationList } from '../schemas.js';
import type { Services } from '../../application/services.js';
import { loadWorkspace, representWorkspace, workspaceSchema, type WorkspaceRow } from '../workspaces/representation.js';
import { workerPresence } from '../workspaces/worker-presence.js';

const errors = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope, 409: errorEnvelope, 422: errorEnvelope };
const params = z.object({ id: z.string().min(1).max(100) });
const layerQuery = z.object({ layer: z.string().max(1000).optional().describe('Layer name; required only for multi-layer datasets') });
const previewQuery = layerQuery.extend({ limit: z.string().optional().describe('Rows to return: default 100, at most 500') });

const pipelineBody = z
  .object({
    layers: z.array(z.string().min(1).max(1000)).max(1000).default([]).describe('Layers the pipeline applies to; required for multi-layer datasets when operations or sql are set'),
    operations: operationList.default([]).describe('Ordered operations; mutually exclusive with sql; [] clears'),
    sql: z.string().max(100_000).nullable().default(null).describe('One SELECT against the relation `source`'),
    python: z
      .object({ script: z.string().min(1).max(1_000_000), filename: z.string().min(1).max(255).default('step.py') })
      .nullable()
      .default(null),
  })
  .meta({ id: 'WorkspacePipeline' });

const pipelineSchema = z
  .object({
    layers: z.array(z.string()),
    operations: z.array(operationShape),
    sql: z.string().nullable(),
    python: z.object({ script: z.string(), filename: z.string() }).nullable(),
  })
  .meta({ id: 'StoredPipeline' });

const convertBody = z.object({
  output_format: z.string().min(1).max(100).describe('An id (or extension) from GET /api/v1/formats'),
  target_crs: z.string().min(1).max(2000).nullable().optional().describe('e.g. EPSG:3857; omit to keep the CRS (GeoJSON: WGS 84, RFC 7946)'),
  layers: z.array(z.string().min(1)).optional().describe('Layers to convert; all by default'),
});

const fieldEntry = z.object({ name: z.string(), type: z.string() });
const dataPreviewSchema = z
  .object({
    workspace_id: z.string(),
    layer: z.string(),
    fields: z.array(fieldEntry),
    has_geometry: z.boolean(),
    geometry_type: z.string().optional().describe('Present for spatial layers'),
    crs: z.string().nullable(),
    row_count: z.number().nullable().describe('Layer row count when known'),
    preview_row_count: z.number(),
    limit: z.number(),
    truncated: z.boolean(),
    rows: z.array(z.record(z.string(), z.unknown())).describe('Keyed by field name; geometry cells hold a type label such as POINT'),
  })
  .meta({ id: 'DataPreview' });
const spatialPreviewSchema = z
  .object({
    workspace_id: z.string(),
    layer: z.string(),
    source_crs: z.string().nullable(),
    preview_crs: z.literal('EPSG:4326'),
    returned_count: z.number(),
    feature_count: z.number().nullable(),
    truncated: z.boolean(),
    geojson: z.object({ type: z.literal('FeatureCollection'), features: z.array(z.unknown()) }).catchall(z.unknown()).describe('RFC 7946 FeatureCollection, lon/lat, 2D'),
  })
  .meta({ id: 'SpatialPreview' });

const deliverBody = z.object({
  destination_id: z.string().min(1).max(100),
  destination_target: z.record(z.string(), z.unknown()).default({}).describe("Per-delivery target, checked by the Destination's connector (GET /api/v1/connectors)"),
});

const deliveryResponse = z
  .object({
    workspace_id: z.string(),
    delivery_id: z.string(),
    destination_id: z.string(),
    destination_type: z.string(),
    target: z.record(z.string(), z.unknown()).describe('Where it went: schema and table, bucket and key, remote path, URL without credentials'),
    format: z.string(),
    filename: z.string(),
    rows_written: z.number().nullable(),
    bytes_written: z.number().nullable(),
    duration_ms: z.number(),
  })
  .meta({ id: 'Delivery' });

const importBody = z.object({
  source_id: z.string().min(1).max(100),
  source_resource: z.union([z.string().min(1).max(100_000), z.record(z.string(), z.unknown())]).nullable().optional(),
});

export function workspaceRoutes(services: Services): FastifyPluginAsyncZod {
  const files = new WorkspaceFiles(services.config.dataDir);
  const maxBytes = services.config.maxUploadBytes;
  const requireWorker = workerPresence(services);
  const load = (request: FastifyRequest, id: string) => loadWorkspace(services.pool, requirePrincipal(request).userId, id, services.clock());

  /**
   * Import from a saved Source: the connector extracts into the new Workspace's folder (streamed,
   * size-limited), then the file is prepared and inspected exactly like an upload. The API does
   * this itself, as it does for uploads: the request is the transfer. On any failure nothing
   * stays behind (no files, no events).
   */
  async function importSource(userId: string, sourceId: string, selector: unknown, log: FastifyRequest['log']): Promise<string> {
    const source = await openConnection(services, 'source', sourceId, userId);
    if (!source.connector.source!.importable) {
      throw new DomainError('invalid_source', `${source.type} Sources cannot be imported into a Workspace; use a Job`, { type: source.type });
    }
    if (!source.connector.implemented) throw new DomainError('not_implemented', notImplemented(source.type, 'source').message, { type: source.type });
    const resource = parseSelector(source.connector, 'source', selector, 'source_resource');
    const workspaceId = services.newId('workspace');
    const dir = files.dir(workspaceId);
    const downloads = path.join(dir, 'original');
    try {
      await mkdir(downloads, { recursive: true });
      let extracted;
      try {
        extracted = await extractFromSource(services, { ownerId: userId, sourceId, resource }, { log: log as never, workDir: downloads, maxBytes });
      } catch (error) {
        if (error instanceof ConnectorError) throw transferError(error, 'import');
        throw error;
      }
      const size = (await stat(extracted.file)).size;
      const ref = await prepareUpload(extracted.file, extracted.filename, path.join(dir, 'dataset'), { maxUncompressedBytes: maxBytes * 4 });
      const inspection = await inspectDataset(ref);
      await execute(services, workspaceStream(workspaceId), workspaceDecider, {
        type: 'CreateWorkspace',
        workspaceId,
        actorId: userId,
        filename: extracted.filename,
        size,
        origin: { kind: 'source', source_id: sourceId, source_type: source.type, source_resource: Object.keys(resource).length ? resource : null },
        inspection: { ...inspection, raster: inspection.raster as Record<string, unknown> | null, warnings: [...ref.warnings, ...inspection.warnings] },
        dataset: files.storedDataset(workspaceId, ref),
        at: services.clock(),
        ttlMs: services.config.workspaceTtlMs,
      });
      return workspaceId;
    } catch (error) {
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  }

  return async (app) => {
    await app.register(fastifyMultipart, { limits: { fileSize: maxBytes, files: 1, fields: 10, parts: 12 }, throwFileSizeLimit: false });

    app.post('/workspaces', {
      config: { auth: { scopes: ['workspaces:write'] } },
      schema: {
        tags: ['Workspaces'],
        summary: 'Create a Workspace: multipart upload (field `file`) or JSON import {source_id, source_resource?}',
        consumes: ['multipart/form-data', 'application/json'],
        response: { 201: workspaceSchema, ...errors },
      },
    }, async (request, reply) => {
      const { userId, scopes } = requirePrincipal(request);
      if (!request.isMultipart()) {
        const body = importBody.safeParse(request.body);
        if (!body.success) {
          throw new DomainError('validation_error', 'Send multipart/form-data with a `file` field, or JSON {"source_id": …, "source_resource": …}', {
            issues: body.error.issues.map((i) => ({ path: ['body', ...i.path].join('.'), message: i.message })),
          });
        }
        if (!scopes.includes('sources:read')) {
          throw new DomainError('forbidden', 'Importing a saved Source also needs the sources:read scope', { missing_scopes: ['sources:read'] });
        }
        const workspaceId = await importSource(userId, body.data.source_id, body.data.source_resource, request.log);
        return reply.code(201).send(representWorkspace(await load(request, workspaceId)));
      }

      const workspaceId = services.newId('workspace');
      const dir = files.dir(workspaceId);
      try {
        const part = await request.file().catch((error: Error) => {
          // busboy's parse errors (no boundary, truncated body) are the client's, not ours
          throw new DomainError('validation_error', `The multipart body cannot be read: ${error.message}`);
        });
        if (!part || part.fieldname !== 'file') {
          throw new DomainError('validation_error', 'The multipart body needs one file in a field named `file`', { issues: [{ path: 'body.file', message: 'required' }] });
        }
        const original = safeFilename(part.filename || 'upload');
        const uploadPath = path.join(dir, 'original', original);
        await mkdir(path.dirname(uploadPath), { recursive: true });
        // Streamed to disk, never held in memory; the limit is enforced while streaming.
        await streamPipeline(part.file, createWriteStream(uploadPath));
        if (part.file.truncated) {
          throw new DomainError('upload_too_large', `The upload exceeds the limit of ${maxBytes} bytes (SVC_MAX_UPLOAD_MB)`, { max_bytes: maxBytes });
        }
        const size = (await stat(uploadPath)).size;
        if (size === 0) throw new DomainError('invalid_source', 'The uploaded file is empty');
        const ref = await prepareUpload(uploadPath, original, path.join(dir, 'dataset'), { maxUncompressedBytes: maxBytes * 4 });
        const inspection = await inspectDataset(ref);
        await execute(services, workspaceStream(workspaceId), workspaceDecider, {
          type: 'CreateWorkspace',
          workspaceId,
          actorId: userId,
          filename: original,
          size,
          origin: { kind: 'upload' },
          inspection: { ...inspection, raster: inspection.raster as Record<string, unknown> | null, warnings: [...ref.warnings, ...inspection.warnings] },
          dataset: files.storedDataset(workspaceId, ref),
          at: services.clock(),
          ttlMs: services.config.workspaceTtlMs,
        });
      } catch (error) {
        // Nothing half-written stays behind: no files, no events.
        await rm(dir, { recursive: true, force: true });
        throw error;
      }
      return reply.code(201).send(representWorkspace(await load(request, workspaceId)));
    });

    app.get('/workspaces/:id', {
      config: { auth: { scopes: ['workspaces:read'] } },
      schema: { tags: ['Workspaces'], summary: 'The Workspace representation', params, response: { 200: workspaceSchema, ...errors } },
    }, async (request) => representWorkspace(await load(request, request.params.id)));

    app.get('/workspaces/:id/data-preview', {
      config: { auth: { scopes: ['workspaces:read'] } },
      schema: { tags: ['Workspaces'], summary: 'Sample rows of a layer (geometry as a type label)', params, querystring: previewQuery, response: { 200: dataPreviewSchema, ...errors } },
    }, async (request) => {
      const row = await load(request, request.params.id);
      const preview = await dataPreview(files.datasetRef(row.id, row.dataset), request.query.layer, parsePreviewLimit(request.query.limit));
      return { workspace_id: row.id, ...preview };
    });

    app.get('/workspaces/:id/spatial-preview', {
      config: { auth: { scopes: ['workspaces:read'] } },
      schema: { tags: ['Workspaces'], summary: 'Sample features as GeoJSON in EPSG:4326 (at most 2000)', params, querystring: layerQuery, response: { 200: spatialPreviewSchema, ...errors } },
    }, async (request) => {
      const row = await load(request, request.params.id);
      const preview = await spatialPreview(files.datasetRef(row.id, row.dataset), request.query.layer);
      return { workspace_id: row.id, ...preview };
    });

    app.get('/workspaces/:id/transformations', {
      config: { auth: { scopes: ['workspaces:read'] } },
      schema: { tags: ['Workspaces'], summary: 'The stored pipeline', params, response: { 200: pipelineSchema, ...errors } },
    }, async (request) => (await load(request, request.params.id)).pipeline);

    app.put('/workspaces/:id/transformations', {
      config: { auth: { scopes: ['workspaces:write'] } },
      schema: { tags: ['Workspaces'], summary: 'Replace the whole pipeline ({"operations": []} clears it)', params, body: pipelineBody, response: { 200: pipelineSchema, ...errors } },
    }, async (request) => {
      const row = await load(request, request.params.id);
      const pipeline = request.body as Pipeline;
      checkPipeline(pipeline, { kind: row.inspection.dataset_type, layers: row.inspection.layers });
      await execute(services, workspaceStream(row.id), workspaceDecider, {
        type: 'SetPipeline', workspaceId: row.id, actorId: requirePrincipal(request).userId, pipeline, at: services.clock(),
      });
      return (await load(request, row.id)).pipeline;
    });

    /** Transformed previews run the stored pipeline on a bounded sample of the upload, in a scratch folder. */
    async function inScratch<T>(row: WorkspaceRow, fn: (dir: string) => Promise<T>): Promise<T> {
      const scratch = files.scratch(row.id, `preview-${randomBytes(4).toString('hex')}`);
      try {
        return await fn(scratch);
      } finally {
        await rm(scratch, { recursive: true, force: true });
      }
    }

    app.get('/workspaces/:id/transform-preview', {
      config: { auth: { scopes: ['workspaces:read'] } },
      schema: { tags: ['Workspaces'], summary: 'Data preview of the pipeline result (a truncated sample)', params, querystring: previewQuery, response: { 200: dataPreviewSchema, ...errors } },
    }, async (request) => {
      const row = await load(request, request.params.id);
      const limit = parsePreviewLimit(request.query.limit);
      const preview = await inScratch(row, (dir) => transformDataPreview(files.datasetRef(row.id, row.dataset), row.pipeline, dir, request.query.layer, limit));
      return { workspace_id: row.id, ...preview };
    });

    app.get('/workspaces/:id/transform-spatial-preview', {
      config: { auth: { scopes: ['workspaces:read'] } },
      schema: { tags: ['Workspaces'], summary: 'Spatial preview of the pipeline result (EPSG:4326, at most 2000 features)', params, querystring: layerQuery, response: { 200: spatialPreviewSchema, ...errors } },
    }, async (request) => {
      const row = await load(request, request.params.id);
      const preview = await inScratch(row, (dir) => transformSpatialPreview(files.datasetRef(row.id, row.dataset), row.pipeline, dir, request.query.layer));
      return { workspace_id: row.id, ...preview };
    });

    app.post('/workspaces/:id/convert', {
      config: { auth: { scopes: ['workspaces:run'] } },
      schema: { tags: ['Workspaces'], summary: 'Convert the upload through the stored pipeline (waits for the result)', params, body: convertBody, response: { 200: workspaceSchema, ...errors } },
    }, async (request) => {
      const { userId } = requirePrincipal(request);
      const row = await load(request, request.params.id);
      const layers = request.body.layers ?? [];
      // Refused here, before a conversion starts: a bad request never marks the Workspace failed.
      const format = checkConvertRequest(
        { outputFormat: request.body.output_format, targetCrs: request.body.target_crs ?? null, layers },
        { kind: row.inspection.dataset_type, layers: row.inspection.layers.map((l) => l.name) },
      );
      await requireWorker();

      const conversionId = `cv_${randomBytes(8).toString('hex')}`;
      const convertRequest = { output_format: format.id, target_crs: request.body.target_crs ?? null, layers };
      // The workflow owns the lifecycle (start, convert, outcome, each recorded as an event);
      // this call waits for it, then for the read models to show its outcome.
      try {
        const { position } = await services.temporal!.workflow.execute<typeof convertWorkspaceWorkflow>('convertWorkspaceWorkflow', {
          taskQueue: services.config.taskQueue,
          workflowId: `workspace-convert-${row.id}-${conversionId}`,
          args: [{
            workspaceId: row.id, actorId: userId, conversionId, request: convertRequest, dataset: row.dataset,
            baseName: row.filename.replace(/\.[^.]+$/, '') || 'result',
          }],
        });
        await services.projections.waitFor(BigInt(position));
      } catch (error) {
        const position = failurePosition(error);
        if (position !== undefined) await services.projections.waitFor(position);
        const domain = domainErrorFrom(error);
        if (domain) throw domain;
        request.log.error({ err: error, workspaceId: row.id }, 'conversion failed');
        throw new DomainError('internal_error', 'The conversion failed on the worker; the error has been logged');
      }
      return representWorkspace(await load(request, row.id));
    });

    app.get('/workspaces/:id/download', {
      config: { auth: { scopes: ['workspaces:read'] } },
      schema: { tags: ['Workspaces'], summary: 'The converted result (binary)', params, response: { ...errors } },
    }, async (request, reply) => {
      const row = await load(request, request.params.id);
      if (!row.output) {
        throw new DomainError('job_not_ready', 'Nothing to download yet: POST /convert first', { status: row.status });
      }
      const file = files.resolve(row.id, row.output.file);
      const { size } = await stat(file);
      const ascii = row.output.filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-length', size)
        .header('content-disposition', `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(row.output.filename)}`)
        .send(createReadStream(file) as never);
    });

    app.post('/workspaces/:id/deliver', {
      config: { auth: { scopes: ['workspaces:run', 'destinations:read'] } },
      schema: { tags: ['Workspaces'], summary: 'Deliver the converted output to a saved Destination (waits for the result)', params, body: deliverBody, response: { 200: deliveryResponse, ...errors } },
    }, async (request) => {
      const row = await load(request, request.params.id);
      if (!row.output) {
        throw new DomainError('job_not_ready', 'Nothing to deliver yet: POST /convert first; delivery never converts with guessed defaults', { status: row.status });
      }
      const { userId } = requirePrincipal(request);
      const destination = await openConnection(services, 'destination', request.body.destination_id, userId);
      if (!destination.connector.destination!.deliverable) {
        throw new DomainError('invalid_destination', `A Workspace cannot deliver to a ${destination.type} Destination; use a Job or another Destination`, { type: destination.type });
      }
      if (!destination.connector.implemented) throw new DomainError('not_implemented', notImplemented(destination.type, 'destination').message, { type: destination.type });
      const target = parseSelector(destination.connector, 'destination', request.body.destination_target, 'destination_target');
      await requireWorker();
      const deliveryId = `dl_${randomBytes(8).toString('hex')}`;
      try {
        const { delivery, position } = await services.temporal!.workflow.execute<typeof deliverWorkspaceWorkflow>('deliverWorkspaceWorkflow', {
          taskQueue: services.config.taskQueue,
          workflowId: `workspace-deliver-${row.id}-${deliveryId}`,
          args: [{ workspaceId: row.id, actorId: userId, destinationId: destination.id, target, deliveryId }],
        });
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
        request.log.error({ err: error, workspaceId: row.id }, 'delivery failed');
        throw new DomainError('internal_error', 'The delivery failed on the worker; the error has been logged');
      }
    });
  };
}
