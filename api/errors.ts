import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { DomainError } from '../domain/errors.js';
import { WrongExpectedRevisionError } from '../eventstore/port.js';
import { looksLikeConnectionFailure, type DatabaseWatch } from '../platform/database-watch.js';
import { scrubText } from '../platform/redact.js';

/** HTTP status of every public error code (DESIGN.md's table; docs/api-conventions.md). */
const statusByCode: Record<string, number> = {
  validation_error: 422,
  invalid_parameter: 400,
  invalid_source: 400,
  invalid_destination: 400,
  invalid_transformation: 422,
  conversion_failed: 422,
  postgis_failed: 422,
  not_implemented: 422,
  // GeoParquet or vector tiles asked of a server without the formats engine (docs/formats.md).
  format_unavailable: 422,
  source_failed: 422,
  delivery_failed: 422,
  target_exists: 409,
  upload_too_large: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  job_not_found: 404,
  recipe_not_found: 404,
  source_not_found: 404,
  destination_not_found: 404,
  run_not_found: 404,
  token_not_found: 404,
  notification_channel_not_found: 404,
  job_expired: 404,
  conflict: 409,
  // A download's Range header beyond the file (RFC 9110 §15.5.17); the answer says its size.
  range_not_satisfiable: 416,
  job_not_ready: 409,
  run_queue_full: 409,
  internal_error: 500,
  // The server ran out of something a GDAL step needs: 5xx, each with a code that says which
  // and a message that names the setting to change (issue 22).
  processing_timeout: 500,
  out_of_memory: 500,
  insufficient_storage: 500,
  // The database (or, for Run Now, Temporal) does not answer from this server: try again after
  // Retry-After, or on another replica. The one status beyond the spec's list (issue 37).
  service_unavailable: 503,
};

/** Seconds a client should wait before it tries again after a 503 (the Retry-After header). */
export const RETRY_AFTER_SECONDS = 5;

export const statusOf = (code: string) => statusByCode[code] ?? 400;

export class ApiError extends DomainError {}
export const unauthorized = (
  message = 'Authentication required: send a personal access token as "Authorization: Bearer …" or log in',
  details: Record<string, unknown> = {},
) => new ApiError('unauthorized', message, details);
export const forbidden = (message: string, details: Record<string, unknown> = {}) => new ApiError('forbidden', message, details);
export const invalidParameter = (message: string, details: Record<string, unknown> = {}) => new ApiError('invalid_parameter', message, details);
/** A resource addressed by the path that is not there (not one of the stored resources, which have their own *_not_found). */
export const notFound = (message: string) => new ApiError('not_found', message);

export const errorEnvelope = z
  .object({
    error: z.object({
      code: z.string().describe('Stable machine-readable code'),
      message: z.string().describe('A sentence for people'),
      details: z.record(z.string(), z.unknown()),
    }),
  })
  .meta({ id: 'Error' });

export function sendError(reply: FastifyReply, code: string, message: string, details: Record<string, unknown> = {}) {
  if (code === 'service_unavailable') {
    details = { retry_after_seconds: RETRY_AFTER_SECONDS, ...details };
    reply.header('retry-after', String(details.retry_after_seconds));
  }
  return reply
    .code(statusOf(code))
    .type('application/json')
    .send({ error: { code, message: scrubText(message), details } });
}

/** The answer while the service database does not answer from this server. */
export const databaseUnavailable = () =>
  new ApiError('service_unavailable', 'The service database does not answer from this server; nothing was changed, try again shortly');

export function registerErrorHandling(app: FastifyInstance, allowedMethods: (path: string) => string[] = () => [], database?: DatabaseWatch): void {
  /** No route for this method and path: 405 with Allow when the path exists under other methods. */
  const noRoute = (request: FastifyRequest, reply: FastifyReply) => {
    const path = request.url.split('?')[0]!;
    const allowed = allowedMethods(path);
    if (allowed.length) {
      reply.header('allow', allowed.join(', '));
      return sendError(reply, 'method_not_allowed', `${request.method} is not allowed on ${path}; use ${allowed.join(', ')}`, { allowed });
    }
    return sendError(reply, 'not_found', `No route ${request.method} ${path}`);
  };
  app.setNotFoundHandler(noRoute);

  app.setErrorHandler(async (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (hasZodFastifySchemaValidationErrors(error)) {
      const where = error.validationContext ?? 'body';
      const issues = error.validation.map((v) => ({
        path: [
          where,
          ...String(v.instancePath ?? '')
            .split('/')
            .filter(Boolean),
        ].join('.'),
        message: v.message ?? 'invalid',
      }));
      if (where === 'body') {
        return sendError(reply, 'validation_error', `Invalid request body: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
      }
      return sendError(reply, 'invalid_parameter', `Invalid ${where}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
    }
    if (error instanceof DomainError) return sendError(reply, error.code, error.message, error.details);
    if (error instanceof WrongExpectedRevisionError) {
      return sendError(reply, 'conflict', 'The resource was changed by another request at the same time; reload it and try again');
    }
    // Fastify's own 4xx (bad JSON, wrong content type, body too large …)
    const status = error.statusCode ?? 500;
    // A body error on a request no route takes (QUERY without a Content-Type …): answer as for no route.
    if (request.is404 && status >= 400 && status < 500) return noRoute(request, reply);
    if (status >= 400 && status < 500) {
      if (error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.name === 'SyntaxError') {
        return sendError(reply, 'validation_error', 'The request body is not valid JSON');
      }
      if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
        return sendError(reply, 'validation_error', `Unsupported Content-Type ${request.headers['content-type'] ?? '(none)'}`);
      }
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendError(reply, 'validation_error', 'The request body is too large');
      return sendError(reply, status === 404 ? 'not_found' : 'invalid_parameter', scrubText(error.message));
    }
    // A lost or refused connection, while the database does not answer this server (or did not
    // a moment ago: a request cut off by a partition may fail just after it healed): 503.
    if (database && looksLikeConnectionFailure(error) && (database.failedWithin(60_000) || !(await database.check()))) {
      request.log.warn({ err: error }, 'the service database does not answer');
      const unavailable = databaseUnavailable();
      return sendError(reply, unavailable.code, unavailable.message);
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, 'internal_error', 'Something went wrong on the server; the error has been logged');
  });
}
