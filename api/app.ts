import fastifyCookie from '@fastify/cookie';
import fastifySwagger from '@fastify/swagger';
import fastifySwaggerUi from '@fastify/swagger-ui';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { type FastifyPluginAsyncZod, jsonSchemaTransform, jsonSchemaTransformObject, serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { redactPaths } from '../platform/logger.js';
import { registerAuthentication } from './auth/authenticate.js';
import { registerErrorHandling } from './errors.js';
import { authRoutes } from './routes/auth.js';
import { catalogRoutes } from './routes/catalogs.js';
import { registerHealth } from './routes/health.js';
import { recipeRoutes } from './routes/recipes.js';
import { tokenRoutes } from './routes/tokens.js';
import { registerWeb } from './routes/web.js';
import { workspaceRoutes } from './routes/workspaces.js';
import type { Services } from './services.js';
import pkg from '../package.json' with { type: 'json' };

export const API_PREFIX = '/api/v1';

/** Route plugins mounted under /api/v1; a new resource adds its plugin here. */
export type RoutePlugin = (services: Services) => FastifyPluginAsyncZod;
const apiRoutes: RoutePlugin[] = [authRoutes, tokenRoutes, recipeRoutes, catalogRoutes, workspaceRoutes];

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
        : { level: services.config.logLevel, redact: { paths: redactPaths, censor: '[redacted]' }, ...(options.logStream ? { stream: options.logStream } : {}) },
    // Only behind a proxy that sets X-Forwarded-For; otherwise clients could pick their own IP.
    trustProxy: process.env.SVC_TRUST_PROXY === 'true',
    bodyLimit: 4 * 1024 * 1024,
    // Long ids reach the route and get a 400 from its schema, not a bare 414 from the router.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
    // Errors the framework raises before a route runs (bad URL encoding …) use the envelope too.
    frameworkErrors: (error, _request, reply) => {
      void (reply as FastifyReply).code(400).type('application/json').send({ error: { code: 'invalid_parameter', message: error.message, details: {} } });
    },
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  registerErrorHandling(app);
  await app.register(fastifyCookie);
  await app.register(fastifySwagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Geospatial conversion and automation service',
        version: pkg.version,
        description:
          'Public REST API (/api/v1). Authenticate with a personal access token (Authorization: Bearer svcpat_…) or the svc_session cookie. ' +
          'Errors use {"error": {"code", "message", "details"}}. Lists take ?limit= and ?cursor= and return {items, next_cursor}.',
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
    transformObject: jsonSchemaTransformObject,
  });
  // The docs page and its assets are public, like the document they show.
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith(`${API_PREFIX}/docs`)) route.config = { ...route.config, auth: { public: true } };
  });
  await app.register(fastifySwaggerUi, { routePrefix: `${API_PREFIX}/docs`, uiConfig: { docExpansion: 'list' } });
  registerAuthentication(app, services);
  registerHealth(app, services);

  app.get(`${API_PREFIX}/openapi.json`, { config: { auth: { public: true } }, schema: { hide: true } }, async () => app.swagger());

  for (const routes of [...apiRoutes, ...(options.extraRoutes ?? [])]) {
    await app.register(routes(services), { prefix: API_PREFIX });
  }
  await registerWeb(app);
  return app;
}
