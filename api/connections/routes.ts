import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import * as connections from '../../application/connections.js';
import type { Services } from '../../application/services.js';
import { configurationBodySchema, connectors, publicConnectorCatalog } from '../../connectors/registry.js';
import type { Scope } from '../../domain/accounts/scopes.js';
import { kindNoun, type ConnectionKind } from '../../domain/connections/kinds.js';
import { nonBlank } from '../../platform/text.js';
import { requirePrincipal } from '../auth/principal.js';
import { errorEnvelope } from '../errors.js';
import { pageOf, pageQuery, pageView } from '../pagination.js';
import { idParam } from '../schemas.js';
import { connectionSchema, connectorSchema, discoverySchema, representConnection, testResultSchema } from './representation.js';
import { publicCatalog } from '../public-route.js';

/*
 * /sources and /destinations: the same routes for both kinds of saved connection, built from the
 * connector catalogue (connectors/registry.ts), one use case of application/connections.ts each.
 * Bodies are a union discriminated by `type`, so the OpenAPI document says exactly which
 * configuration each type takes.
 */

const errors = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope, 409: errorEnvelope, 422: errorEnvelope };

/**
 * Each type's configuration as a body takes it, made once and named (PostgisConfiguration …):
 * Source and Destination bodies and drafts share it, so the OpenAPI document and
 * web/src/api-types.ts say it once.
 */
const configurationBodies = new Map<string, z.ZodObject>();
function configurationBody(c: (typeof connectors)[number]): z.ZodObject {
  let schema = configurationBodies.get(c.type);
  if (!schema) {
    const name = c.type.replace(/(^|[^a-z0-9])([a-z0-9])/g, (_, __, first: string) => first.toUpperCase());
    schema = configurationBodySchema(c)
      .describe(`${c.label}: secrets are write-only; omit one to keep it, null clears it`)
      .meta({ id: `${name}Configuration` });
    configurationBodies.set(c.type, schema);
  }
  return schema;
}

function bodySchema(kind: ConnectionKind, draft: boolean) {
  const options = connectors
    .filter((c) => (kind === 'source' ? c.source : c.destination))
    .map((c) =>
      z.strictObject({
        name: draft ? nonBlank(200).optional() : nonBlank(200),
        type: z.literal(c.type),
        configuration: configurationBody(c),
      }),
    );
  return z.discriminatedUnion('type', options as unknown as [z.ZodObject, ...z.ZodObject[]]);
}

export function connectionRoutes(kind: ConnectionKind): (services: Services) => FastifyPluginAsyncZod {
  const plural = `${kind}s`;
  const Noun = kindNoun(kind);
  const tag = `${Noun}s`;
  const read: Scope[] = [kind === 'source' ? 'sources:read' : 'destinations:read'];
  const write: Scope[] = [kind === 'source' ? 'sources:write' : 'destinations:write'];
  const response = connectionSchema(Noun);
  const createBody = bodySchema(kind, false).meta({ id: `${Noun}Body` });
  const draftBody = bodySchema(kind, true).meta({ id: `${Noun}Draft` });

  return (services) => {
    const ownerOf = (request: FastifyRequest) => requirePrincipal(request).userId;
    const log = (request: FastifyRequest) => request.log as connections.Log;

    return async (app) => {
      app.get(
        `/${plural}`,
        {
          config: { auth: { scopes: read } },
          schema: { tags: [tag], summary: `List your ${Noun}s`, querystring: pageQuery, response: { 200: pageOf(response), ...errors } },
        },
        async (request) => pageView(await connections.listConnections(services, kind, ownerOf(request), request.query), representConnection),
      );

      app.get(
        `/${plural}/:id`,
        {
          config: { auth: { scopes: read } },
          schema: { tags: [tag], summary: `Get a ${Noun}`, params: idParam, response: { 200: response, ...errors } },
        },
        async (request) => representConnection(await connections.showConnection(services, kind, ownerOf(request), request.params.id)),
      );

      app.post(
        `/${plural}`,
        {
          config: { auth: { scopes: write } },
          schema: { tags: [tag], summary: `Create a ${Noun}`, body: createBody, response: { 201: response, ...errors } },
        },
        async (request, reply) => {
          const created = await connections.createConnection(services, kind, ownerOf(request), request.body as connections.ConnectionBody);
          return reply.code(201).send(representConnection(created));
        },
      );

      app.put(
        `/${plural}/:id`,
        {
          config: { auth: { scopes: write } },
          schema: {
            tags: [tag],
            summary: `Replace a ${Noun} (secrets left out are kept; null clears one)`,
            params: idParam,
            body: createBody,
            response: { 200: response, ...errors },
          },
        },
        async (request) =>
          representConnection(
            await connections.updateConnection(services, kind, ownerOf(request), request.params.id, request.body as connections.ConnectionBody),
          ),
      );

      app.delete(
        `/${plural}/:id`,
        {
          config: { auth: { scopes: write } },
          schema: {
            tags: [tag],
            summary: `Delete a ${Noun} (409 while a Job uses it)`,
            params: idParam,
            response: { 204: z.null().describe('Deleted'), ...errors },
          },
        },
        async (request, reply) => {
          await connections.deleteConnection(services, kind, ownerOf(request), request.params.id);
          return reply.code(204).send(null);
        },
      );

      app.post(
        `/${plural}/test`,
        {
          config: { auth: { scopes: write } },
          schema: { tags: [tag], summary: `Test an unsaved ${Noun} (nothing is stored)`, body: draftBody, response: { 200: testResultSchema, ...errors } },
        },
        async (request) => connections.testConnection(services, kind, ownerOf(request), { draft: request.body as never }, log(request)),
      );

      app.post(
        `/${plural}/:id/test`,
        {
          config: { auth: { scopes: write } },
          schema: { tags: [tag], summary: `Test a saved ${Noun}`, params: idParam, response: { 200: testResultSchema, ...errors } },
        },
        async (request) => connections.testConnection(services, kind, ownerOf(request), { id: request.params.id }, log(request)),
      );

      app.get(
        `/${plural}/:id/discover`,
        {
          config: { auth: { scopes: read } },
          schema: {
            tags: [tag],
            summary: `Schemas of a database ${Noun} that can be discovered (PostGIS, BigQuery datasets, Snowflake); with ?schema=, its tables and views`,
            params: idParam,
            querystring: z.object({ schema: z.string().min(1).max(63).optional().describe('List the tables and views of this schema') }),
            response: { 200: discoverySchema, ...errors },
          },
        },
        async (request) => connections.discover(services, kind, ownerOf(request), request.params.id, request.query.schema, log(request)),
      );
    };
  };
}

/** GET /api/v1/connectors: the catalogue of connection types, public like the other catalogues. */
export function connectorCatalogRoutes(): FastifyPluginAsyncZod {
  return publicCatalog(
    '/connectors',
    'Connection types: configuration fields (JSON Schema), secrets, selectors and targets, capabilities',
    connectorSchema,
    publicConnectorCatalog(),
  );
}
