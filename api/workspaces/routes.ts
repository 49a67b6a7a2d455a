import fastifyMultipart from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Services } from '../../application/services.js';
import * as pipelines from '../../application/workspace-pipeline.js';
import * as workspaces from '../../application/workspaces.js';
import { DomainError } from '../../domain/errors.js';
import type { Pipeline } from '../../domain/workspaces/contents.js';
import { requirePrincipal } from '../auth/principal.js';
import { errorEnvelope } from '../errors.js';
import { representWorkspace, workspaceSchema } from './representation.js';
import {
  convertBody,
  dataPreviewSchema,
  deliverBody,
  deliveryResponse,
  importBody,
  pipelineBody,
  pipelineSchema,
  progressParams,
  progressSchema,
  spatialPreviewSchema,
} from './schemas.js';
import { readProgress } from '../../application/operation-progress.js';
import { READ_OPTION_KEYS } from '../../geo/datasets/read-options.js';
import { parseRange } from '../../platform/byte-range.js';

/*
 * The Workspace routes: HTTP in (auth scopes, schemas, multipart), one use case of
 * application/workspaces.ts per route, the representation (./representation.ts) out.
 */

const errors = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope, 409: errorEnvelope, 422: errorEnvelope };
const params = z.object({ id: z.string().min(1).max(100) });
const layerQuery = z.object({ layer: z.string().max(1000).optional().describe('Layer name; required only for multi-layer datasets') });
/**
 * A signal that fires when the client goes away before its answer is sent (the connection closed
 * under an unfinished response), so the work done for it stops.
 */
function callerGone(reply: FastifyReply): AbortSignal {
  const gone = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) gone.abort();
  });
  return gone.signal;
}

const previewQuery = layerQuery.extend({ limit: z.string().optional().describe('Rows to return: default 100, at most 500') });

/** The upload's file part; busboy's parse errors (no boundary, truncated body) are the client's, not ours. */
async function filePart(request: FastifyRequest) {
  const part = await request.file().catch((error: Error) => {
    throw new DomainError('validation_error', `The multipart body cannot be read: ${error.message}`);
  });
  if (part?.fieldname !== 'file') {
    throw new DomainError('validation_error', 'The multipart body needs one file in a field named `file`', {
      issues: [{ path: 'body.file', message: 'required' }],
    });
  }
  // Reading options as form fields, sent before the file (busboy gives the fields seen so far).
  const fields: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(part.fields)) {
    const one = Array.isArray(field) ? field[0] : field;
    if (one && one.type === 'field' && name !== 'file') fields[name] = one.value;
  }
  const unknown = Object.keys(fields).filter((k) => !(READ_OPTION_KEYS as readonly string[]).includes(k));
  if (unknown.length) {
    throw new DomainError(
      'validation_error',
      `Unknown form field ${unknown.map((u) => JSON.stringify(u)).join(', ')}; the upload takes file, ${READ_OPTION_KEYS.join(', ')}`,
      {
        issues: unknown.map((u) => ({ path: `body.${u}`, message: 'unknown field' })),
      },
    );
  }
  return { filename: part.filename, file: part.file, fields };
}

/** The JSON body of an import, and the extra scope it needs. */
function importRequest(body: unknown, scopes: readonly string[]) {
  const parsed = importBody.safeParse(body);
  if (!parsed.success) {
    throw new DomainError('validation_error', 'Send multipart/form-data with a `file` field, or JSON {"source_id": …, "source_resource": …}', {
      issues: parsed.error.issues.map((i) => ({ path: ['body', ...i.path].join('.'), message: i.message })),
    });
  }
  if (!scopes.includes('sources:read')) {
    throw new DomainError('forbidden', 'Importing a saved Source also needs the sources:read scope', { missing_scopes: ['sources:read'] });
  }
  return { sourceId: parsed.data.source_id, selector: parsed.data.source_resource, progressId: parsed.data.progress_id };
}

export function workspaceRoutes(services: Services): FastifyPluginAsyncZod {
  const userOf = (request: FastifyRequest) => requirePrincipal(request).userId;
  const log = (request: FastifyRequest) => request.log as workspaces.Log;

  return async (app) => {
    await app.register(fastifyMultipart, { limits: { fileSize: services.config.maxUploadBytes, files: 1, fields: 10, parts: 12 }, throwFileSizeLimit: false });

    app.post(
      '/workspaces',
      {
        config: { auth: { scopes: ['workspaces:write'] } },
        schema: {
          tags: ['Workspaces'],
          summary:
            'Create a Workspace: multipart upload (field `file`, and before it optional fields source_crs, x_column, y_column, z_column, geometry_column (plain Parquet)) or JSON import {source_id, source_resource?, progress_id?} (source_resource may carry the same reading options; with progress_id, GET /api/v1/progress/{progress_id} follows the transfer)',
          consumes: ['multipart/form-data', 'application/json'],
          response: { 201: workspaceSchema, ...errors },
        },
      },
      async (request, reply) => {
        const { userId, scopes } = requirePrincipal(request);
        const created = request.isMultipart()
          ? await workspaces.createFromUpload(services, userId, await filePart(request))
          : await workspaces.importFromSource(services, userId, importRequest(request.body, scopes), log(request));
        return reply.code(201).send(representWorkspace(created));
      },
    );

    app.get(
      '/workspaces/:id',
      {
        config: { auth: { scopes: ['workspaces:read'] } },
        schema: { tags: ['Workspaces'], summary: 'The Workspace representation', params, response: { 200: workspaceSchema, ...errors } },
      },
      async (request) => representWorkspace(await workspaces.showWorkspace(services, userOf(request), request.params.id)),
    );

    app.get(
      '/workspaces/:id/data-preview',
      {
        config: { auth: { scopes: ['workspaces:read'] } },
        schema: {
          tags: ['Workspaces'],
          summary: 'Sample rows of a layer (geometry as a type label)',
          params,
          querystring: previewQuery,
          response: { 200: dataPreviewSchema, ...errors },
        },
      },
      async (request, reply) => pipelines.previewData(services, userOf(request), request.params.id, request.query, false, callerGone(reply)),
    );

    app.get(
      '/workspaces/:id/spatial-preview',
      {
        config: { auth: { scopes: ['workspaces:read'] } },
        schema: {
          tags: ['Workspaces'],
          summary: 'Sample features as GeoJSON in EPSG:4326 (at most 2000)',
          params,
          querystring: layerQuery,
          response: { 200: spatialPreviewSchema, ...errors },
        },
      },
      async (request, reply) => pipelines.previewSpatial(services, userOf(request), request.params.id, request.query, false, callerGone(reply)),
    );

    app.get(
      '/workspaces/:id/transformations',
      {
        config: { auth: { scopes: ['workspaces:read'] } },
        schema: { tags: ['Workspaces'], summary: 'The stored pipeline', params, response: { 200: pipelineSchema, ...errors } },
      },
      async (request) => workspaces.getPipeline(services, userOf(request), request.params.id),
    );

    app.put(
      '/workspaces/:id/transformations',
      {
        config: { auth: { scopes: ['workspaces:write'] } },
        schema: {
          tags: ['Workspaces'],
          summary: 'Replace the whole pipeline ({"operations": []} clears it)',
          params,
          body: pipelineBody,
          response: { 200: pipelineSchema, ...errors },
        },
      },
      async (request) => pipelines.setPipeline(services, userOf(request), request.params.id, request.body as Pipeline),
    );

    app.get(
      '/workspaces/:id/transform-preview',
      {
        config: { auth: { scopes: ['workspaces:read'] } },
        schema: {
          tags: ['Workspaces'],
          summary: 'Data preview of the pipeline result (a truncated sample)',
          params,
          querystring: previewQuery,
          response: { 200: dataPreviewSchema, ...errors },
        },
      },
      async (request, reply) => pipelines.previewData(services, userOf(request), request.params.id, request.query, true, callerGone(reply)),
    );

    app.get(
      '/workspaces/:id/transform-spatial-preview',
      {
        config: { auth: { scopes: ['workspaces:read'] } },
        schema: {
          tags: ['Workspaces'],
          summary: 'Spatial preview of the pipeline result (EPSG:4326, at most 2000 features)',
          params,
          querystring: layerQuery,
          response: { 200: spatialPreviewSchema, ...errors },
        },
      },
      async (request, reply) => pipelines.previewSpatial(services, userOf(request), request.params.id, request.query, true, callerGone(reply)),
    );

    app.post(
      '/workspaces/:id/convert',
      {
        config: { auth: { scopes: ['workspaces:run'] } },
        schema: {
          tags: ['Workspaces'],
          summary: 'Convert the upload through the stored pipeline (waits for the result)',
          params,
          body: convertBody,
          response: { 200: workspaceSchema, ...errors },
        },
      },
      async (request) => representWorkspace(await workspaces.convert(services, userOf(request), request.params.id, request.body, log(request))),
    );

    app.get(
      '/workspaces/:id/download',
      {
        config: { auth: { scopes: ['workspaces:read'] } },
        schema: {
          tags: ['Workspaces'],
          summary: 'The converted result (binary)',
          description:
            'Answers one byte range when asked (`Range: bytes=a-b`, `bytes=a-` or `bytes=-n`) with 206 and Content-Range, as a PMTiles viewer reading the archive in place does; ' +
            '416 with `Content-Range: bytes */size` for a range beyond the file. Several ranges in one header are answered with the whole file.',
          params,
          response: { ...errors, 416: errorEnvelope },
        },
      },
      async (request, reply) => {
        const asked = parseRange(request.headers.range);
        let got: Awaited<ReturnType<typeof workspaces.download>>;
        try {
          got = await workspaces.download(services, userOf(request), request.params.id, asked);
        } catch (err) {
          if (err instanceof DomainError && err.code === 'range_not_satisfiable') reply.header('content-range', `bytes */${String(err.details.size)}`);
          throw err;
        }
        const { body, size, range, filename } = got;
        const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
        reply
          .header('content-type', 'application/octet-stream')
          .header('accept-ranges', 'bytes')
          .header('content-disposition', `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`);
        if (range) {
          return reply
            .code(206)
            .header('content-range', `bytes ${range.start}-${range.end}/${size}`)
            .header('content-length', range.end - range.start + 1)
            .send(body as never);
        }
        return reply.header('content-length', size).send(body as never);
      },
    );

    app.get(
      '/progress/:progress_id',
      {
        // Only the caller's own requests are found, and a figure of bytes is all they show: any
        // signed-in caller or token may follow the requests it started, whatever its scopes.
        config: { auth: { scopes: [] } },
        schema: {
          tags: ['Workspaces'],
          summary: 'How far a Workspace import, convert or delivery started with this progress_id has got',
          description:
            'Send `progress_id` (8–64 of A–Z a–z 0–9 _ -, your choice) in the body of POST /workspaces (JSON import), /workspaces/{id}/convert or /workspaces/{id}/deliver, and read this while the request runs. ' +
            '404 until the server has begun the work; the figures are at most a second old; the outcome stays readable for a day.',
          params: progressParams,
          response: { 200: progressSchema, ...errors },
        },
      },
      async (request) => readProgress(services.pool, userOf(request), request.params.progress_id),
    );

    app.post(
      '/workspaces/:id/deliver',
      {
        config: { auth: { scopes: ['workspaces:run', 'destinations:read'] } },
        schema: {
          tags: ['Workspaces'],
          summary: 'Deliver the converted output to a saved Destination (waits for the result)',
          params,
          body: deliverBody,
          response: { 200: deliveryResponse, ...errors },
        },
      },
      async (request) =>
        workspaces.deliver(
          services,
          userOf(request),
          request.params.id,
          { destinationId: request.body.destination_id, target: request.body.destination_target, progressId: request.body.progress_id },
          log(request),
        ),
    );
  };
}
