import fastifyCookie from '@fastify/cookie';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { LogController, type FastifyInstance, type FastifyReply } from 'fastify';
import {
  type FastifyPluginAsyncZod,
  jsonSchemaTransform,
  jsonSchemaTransformObject,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { DomainError } from '../domain/errors.js';
import { watchDatabase } from '../platform/database-watch.js';
import { isWellFormedText } from '../platform/text.js';
import { createAccessLog, LazyChildLogger, logDestination, redactPaths } from '../platform/logger.js';
import { registerAuthentication } from './auth/authenticate.js';
import { createSessionTable } from '../application/sessions.js';
import { createProgressTable } from '../application/operation-progress.js';
import { databaseUnavailable, invalidParameter, registerErrorHandling, sendError } from './errors.js';
import { trackRouteMethods } from './methods.js';
import { registerTelemetry } from './telemetry.js';
import { finishDocument } from './openapi.js';
import { authRoutes } from './auth/routes.js';
import { catalogRoutes } from './catalogs/routes.js';
import { connectionBrowseRoutes } from './connection-browse/routes.js';
import { connectionRoutes, connectorCatalogRoutes } from './connections/routes.js';
import { registerHealth } from './health/routes.js';
import { hookRoutes } from './hooks/routes.js';
import { hubBrowseRoutes } from './hub/routes.js';
import { jobRoutes, pipelineAliasRoutes } from './jobs/routes.js';
import { channelTypeRoutes, notificationChannelRoutes } from './notification-channels/routes.js';
import { recipeRoutes } from './recipes/routes.js';
import { scheduleRoutes } from './schedules/routes.js';
import { sourceProjectRoutes } from './source-projects/routes.js';
import { tokenRoutes } from './tokens/routes.js';
import { registerWeb } from './web/routes.js';
import { workspaceRoutes } from './workspaces/routes.js';
import type { Services } from '../application/services.js';
import pkg from '../package.json' with { type: 'json' };

export const API_PREFIX = '/api/v1';

type OpenApiDocument = { paths?: Record<string, Record<string, Record<string, unknown>>> };

/**
 * POST /workspaces reads its multipart body as a stream, so no body schema is declared on the
 * route (it would be validated); the document describes both accepted bodies here instead.
 */
function describeUpload(doc: OpenApiDocument): OpenApiDocument {
  const op = doc.paths?.[`${API_PREFIX}/workspaces`]?.post;
  if (op) {
    op.requestBody = {
      required: true,
      content: {
        'multipart/form-data': {
          schema: {
            type: 'object',
            required: ['file'],
            properties: { file: { type: 'string', format: 'binary', minLength: 1, description: 'The dataset (not empty); a Shapefile as one .zip' } },
          },
        },
        'application/json': {
          schema: {
            type: 'object',
            required: ['source_id'],
            properties: {
              source_id: { type: 'string', minLength: 1, description: 'A saved Source you own' },
              source_resource: {
                oneOf: [{ type: 'object' }, { type: 'string', minLength: 1 }, { type: 'null' }],
                description:
                  "The Source's selector (table, object key, layer, collection, asset), checked by its connector (GET /api/v1/connectors); a string is the type's shorthand field",
              },
            },
          },
        },
      },
    };
  }
  return doc;
}

/**
 * GET /workspaces/{id}/download sends the file as it is (a stream fastify does not serialise), so
 * its 200 is described here rather than by a response schema the serialiser would apply.
 */
function describeDownload(doc: OpenApiDocument): OpenApiDocument {
  const op = doc.paths?.[`${API_PREFIX}/workspaces/{id}/download`]?.get as { responses?: Record<string, unknown> } | undefined;
  if (op) {
    op.responses = {
      200: {
        description: 'The converted file (a .zip when the format is several files or the output several layers)',
        headers: {
          'content-disposition': { schema: { type: 'string' }, description: 'attachment; the file name, also as filename* in UTF-8' },
          'content-length': { schema: { type: 'integer' } },
        },
        content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
      },
      ...op.responses,
    };
  }
  return doc;
}

/**
 * Text PostgreSQL and the event store cannot hold: NUL (text and jsonb refuse it) and unpaired
 * UTF-16 surrogates (JSON allows "\ud800"; UTF-8 has no encoding for it, so it failed deep in a
 * write as a 500). The path of the first such string in a parsed body (`name`, `operations.0.…`),
 * object keys included; null when there is none.
 */
function unstorableText(value: unknown, path = '', depth = 0): string | null {
  if (typeof value === 'string') return value.includes('\u0000') || !isWellFormedText(value) ? path || '(body)' : null;
  if (depth > 64 || value === null || typeof value !== 'object') return null;
  for (const [key, item] of Object.entries(value)) {
    const at = path ? `${path}.${key}` : key;
    if (key.includes('\u0000') || !isWellFormedText(key)) return at;
    const found = unstorableText(item, at, depth + 1);
    if (found) return found;
  }
  return null;
}

/** The name of a path or query parameter holding NUL or an unpaired surrogate, if any. */
function nulParameter(values: unknown): string | undefined {
  if (!values || typeof values !== 'object') return undefined;
  for (const name in values) if (unstorableText((values as Record<string, unknown>)[name])) return name;
  return undefined;
}

/** Route plugins mounted under /api/v1; a new resource adds its plugin here. */
export type RoutePlugin = (services: Services) => FastifyPluginAsyncZod;
const apiRoutes: RoutePlugin[] = [
  authRoutes,
  tokenRoutes,
  recipeRoutes,
  catalogRoutes,
  connectorCatalogRoutes,
  connectionRoutes('source'),
  connectionRoutes('destination'),
  hubBrowseRoutes('source'),
  hubBrowseRoutes('destination'),
  sourceProjectRoutes,
  workspaceRoutes,
  jobRoutes,
  scheduleRoutes,
  hookRoutes,
  pipelineAliasRoutes,
  notificationChannelRoutes,
  channelTypeRoutes,
  connectionBrowseRoutes('source'),
  connectionBrowseRoutes('destination'),
];

/**
 * The application as a value: server.ts listens on it, tests call app.inject on it.
 * Plugins first (cookies, schemas, OpenAPI), then authentication, then the routes.
 */
export async function buildApp(
  services: Services,
  options: { logger?: boolean; logStream?: NodeJS.WritableStream; extraRoutes?: RoutePlugin[] } = {},
): Promise<FastifyInstance> {
  const app = Fastify({
    logger:
      options.logger === false
        ? false
        : { level: services.config.logLevel, redact: { paths: redactPaths, censor: '[redacted]' }, stream: options.logStream ?? logDestination() },
    // One access line per request instead of fastify's two (see the onResponse hook below).
    logController: new LogController({ disableRequestLogging: true }),
    // Each request's logger is made when something logs through it (platform/logger.ts).
    ...(options.logger === false
      ? {}
      : { childLoggerFactory: (logger, bindings, childOptions) => new LazyChildLogger(logger as never, bindings, childOptions) as never }),
    // Only behind a proxy that sets X-Forwarded-For; otherwise clients could pick their own IP.
    trustProxy: process.env.SVC_TRUST_PROXY === 'true',
    bodyLimit: 4 * 1024 * 1024,
    // Long ids reach the route and get a 400 from its schema, not a bare 414 from the router.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
    // Errors the framework raises before a route runs (bad URL encoding …) use the envelope too.
    frameworkErrors: (error, _request, reply) => {
      void (reply as FastifyReply)
        .code(400)
        .type('application/json')
        .send({ error: { code: 'invalid_parameter', message: error.message, details: {} } });
    },
  }).withTypeProvider<ZodTypeProvider>();
  // Browser sessions are the API's own table (not events: nothing refers to a session).
  await createSessionTable(services.pool);
  // So is the progress of the long requests a caller follows (application/operation-progress.ts).
  await createProgressTable(services.pool);

  // JSON bodies: text PostgreSQL cannot store (NUL, unpaired surrogates) is refused here, in one
  // place for every route, with a 422 instead of failing deep in a write.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    if (body === '') return done(null, undefined);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body as string);
    } catch {
      return done(new DomainError('validation_error', 'The request body is not valid JSON'), undefined);
    }
    const bad = unstorableText(parsed);
    if (bad !== null)
      return done(
        new DomainError(
          'validation_error',
          `Text in the request body (${bad}) must be valid Unicode: no NUL (\\u0000) characters and no unpaired surrogates (\\ud800–\\udfff)`,
          { issues: [{ path: `body.${bad}`, message: 'not valid Unicode text' }] },
        ),
        undefined,
      );
    done(null, parsed);
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  // While the service database does not answer from this server (a partition, a restart), API
  // requests get 503 with Retry-After at once, not after a connection timeout or a quarter of an
  // hour of TCP retries (platform/database-watch.ts); /healthz still answers, /readyz says why.
  const database = watchDatabase(services.config.databaseUrl, {
    onChange: (reachable, error) =>
      reachable
        ? services.log.info('the service database answers again')
        : services.log.error({ err: error }, 'the service database does not answer: API requests get 503 until it does'),
  });
  app.addHook('onClose', () => database.close());
  app.addHook('onRequest', async (request, reply) => {
    if (database.reachable() || !request.url.startsWith(`${API_PREFIX}/`)) return;
    const unavailable = databaseUnavailable();
    return sendError(reply, unavailable.code, unavailable.message);
  });
  registerErrorHandling(app, trackRouteMethods(app), database);
  // Request metrics and, with traces on, a span per request (before any route is added).
  registerTelemetry(app);
  // The access log: one line per request, written once the answer is sent, with what the incoming
  // line would have said (method, URL, request id) plus status and time. Fastify's default writes
  // two lines (incoming, completed); at info that cost a third of a trivial route's throughput
  // (bench/api/NOTES.md). Errors are logged where they happen, with their cause.
  const access = options.logger === false ? null : createAccessLog(services.config.logLevel, options.logStream ?? logDestination());
  if (access) {
    app.addHook('onResponse', (request, reply, done) => {
      access({ reqId: request.id, method: request.method, url: request.url, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 });
      done();
    });
  }
  // Path and query parameters with NUL (or an unpaired surrogate) would reach PostgreSQL (which
  // cannot store them) or GDAL: refused up front, as the OpenAPI document's patterns say.
  app.addHook('preValidation', (request, _reply, done) => {
    const name = nulParameter(request.params) ?? nulParameter(request.query);
    done(
      name === undefined
        ? undefined
        : invalidParameter(`The parameter ${name} must be valid Unicode: no NUL (\\u0000) characters and no unpaired surrogates`, { parameter: name }),
    );
  });
  await app.register(fastifyCookie);
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Geospatial conversion and automation service',
        version: pkg.version,
        description:
          'Public REST API (/api/v1). Authenticate with a personal access token (Authorization: Bearer svcpat_…) or the svc_session cookie. ' +
          'Errors use {"error": {"code", "message", "details"}}; a server that cannot reach its database (or, for Run Now, Temporal) answers 503 service_unavailable with a Retry-After header. Lists take ?limit= and ?cursor= and return {items, next_cursor}.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', description: 'Personal access token (svcpat_…)' },
          session: { type: 'apiKey', in: 'cookie', name: 'svc_session' },
        },
      },
      security: [{ bearer: [] }, { session: [] }],
    },
    transform: jsonSchemaTransform,
    transformObject: (input) => finishDocument(describeDownload(describeUpload(jsonSchemaTransformObject(input) as OpenApiDocument))),
  });
  // The docs page and its assets are public, like the document they show.
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith(`${API_PREFIX}/docs`)) route.config = { ...route.config, auth: { public: true } };
  });
  await app.register(fastifySwaggerUi, { routePrefix: `${API_PREFIX}/docs`, uiConfig: { docExpansion: 'list' } });
  await registerAuthentication(app, services);
  registerHealth(app, services, database);

  app.get(`${API_PREFIX}/openapi.json`, { config: { auth: { public: true } }, schema: { hide: true } }, async () => app.swagger());

  for (const routes of [...apiRoutes, ...(options.extraRoutes ?? [])]) {
    await app.register(routes(services), { prefix: API_PREFIX });
  }
  await registerWeb(app, { basemapOrigin: services.config.basemap?.origin ?? null });
  return app;
}
