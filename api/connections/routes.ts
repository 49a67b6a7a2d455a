import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { sql } from 'slonik';
import { z } from 'zod';
import {
  draftConnection,
  kindNoun,
  openConnection,
  parseConfiguration,
  publicConfiguration,
  sealSecrets,
  withDeadline,
  type OpenedConnection,
} from '../../application/connections.js';
import { execute } from '../../application/commands.js';
import { jobsUsing } from '../../application/jobs.js';
import type { Services } from '../../application/services.js';
import { configurationBodySchema, connectorByType, connectors, publicConnectorCatalog, requireImplemented } from '../../connectors/registry.js';
import { ConnectorError } from '../../domain/transfers.js';
import { outboundRefusal } from '../../temporal/failures.js';
import { nonBlank } from '../../platform/text.js';
import { connectionDecider, connectionStream, notFoundCode, type ConnectionKind } from '../../domain/connections/connection.js';
import type { Scope } from '../../domain/accounts/scopes.js';
import { DomainError, notFound } from '../../domain/errors.js';
import { isoTime } from '../../platform/db.js';
import { requirePrincipal } from '../auth/principal.js';
import { errorEnvelope } from '../errors.js';
import { keysetWhere, limitPlusOne, pageOf, pageQuery, toPage } from '../pagination.js';
import { idParam, timestamp } from '../schemas.js';

/*
 * /sources and /destinations: the same routes for both kinds of saved connection, built from the
 * connector catalogue (connectors/registry.ts). Bodies are a union discriminated by `type`, so
 * the OpenAPI document says exactly which configuration each type takes.
 */

const TEST_TIMEOUT_MS = 10_000;
const errors = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope, 409: errorEnvelope, 422: errorEnvelope };

const connectionRow = z.object({
  id: z.string(),
  name: z.string(),
  type: z.string(),
  configuration: z.record(z.string(), z.unknown()),
  secret_fields: z.array(z.string()),
  created_at: isoTime,
  updated_at: isoTime,
});
type ConnectionRow = z.infer<typeof connectionRow>;

const represent = (row: ConnectionRow) => ({
  id: row.id,
  name: row.name,
  type: row.type,
  configuration: publicConfiguration(connectorByType(row.type), row.configuration, row.secret_fields),
  created_at: row.created_at,
  updated_at: row.updated_at,
});

const testResult = z
  .object({
    ok: z.boolean(),
    status: z.string().describe('ok, unreachable, timeout, authentication_failed, permission_denied, tls_error, not_found, invalid_response …'),
    message: z.string(),
    tried: z.record(z.string(), z.unknown()).describe('What was contacted (host, port, bucket, url): never a secret'),
    duration_ms: z.number(),
  })
  .meta({ id: 'ConnectionTestResult' });

const discovery = z
  .object({
    host: z.string(),
    database: z.string(),
    schemas: z.array(z.string()),
    schema: z.string().optional(),
    tables: z.array(z.object({ schema: z.string(), name: z.string(), has_geometry: z.boolean(), geometry_type: z.string().nullable() })).optional(),
  })
  .meta({ id: 'PostgisDiscovery' });

function bodySchema(kind: ConnectionKind, draft: boolean) {
  const options = connectors
    .filter((c) => (kind === 'source' ? c.source : c.destination))
    .map((c) =>
      z.strictObject({
        name: draft ? nonBlank(200).optional() : nonBlank(200),
        type: z.literal(c.type),
        configuration: configurationBodySchema(c).describe(`${c.label}: secrets are write-only; omit one to keep it, null clears it`),
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
  const decider = connectionDecider(kind);
  const response = z
    .object({
      id: z.string(),
      name: z.string(),
      type: z.string(),
      configuration: z.record(z.string(), z.unknown()).describe('Public fields, plus has_<secret> flags instead of secret values'),
      created_at: timestamp,
      updated_at: timestamp,
    })
    .meta({ id: Noun });
  const createBody = bodySchema(kind, false).meta({ id: `${Noun}Body` });
  const draftBody = bodySchema(kind, true).meta({ id: `${Noun}Draft` });

  return (services) => {
    const load = async (ownerId: string, id: string) => {
      const row = await services.pool.maybeOne(
        sql.type(connectionRow)`SELECT id, name, type, configuration, secret_fields, created_at, updated_at
          FROM rm.connections WHERE id = ${id} AND owner_id = ${ownerId} AND kind = ${kind}`,
      );
      if (!row) throw notFound(notFoundCode(kind), Noun, id);
      return row;
    };

    const ctxBase = (request: { log: unknown }) => ({ log: request.log as never, workDir: services.config.dataDir, maxBytes: services.config.maxUploadBytes });

    /** A connection test: always a classified result (200), never a thrown remote failure. */
    async function runTest(connection: OpenedConnection, request: { log: unknown }) {
      const { connector } = connection;
      try {
        requireImplemented(connector, 'test');
      } catch (error) {
        throw domainOf(error as ConnectorError);
      }
      const started = Date.now();
      let result;
      try {
        result = await withDeadline(TEST_TIMEOUT_MS, ctxBase(request), (ctx) => connector.test(connection.config, ctx));
      } catch (error) {
        const failure = error instanceof ConnectorError ? error : new ConnectorError('invalid_response', `${connector.label} test failed unexpectedly`);
        result = { ok: false, status: failure.reason, message: failure.message, tried: {}, duration_ms: Date.now() - started };
      }
      // Nothing was sent: a 403 naming the setting, never a classified result (which would tell open ports from closed ones).
      if (result.status === 'refused_by_policy') throw outboundRefusal(result.message);
      return result;
    }

    return async (app) => {
      app.get(
        `/${plural}`,
        {
          config: { auth: { scopes: read } },
          schema: { tags: [tag], summary: `List your ${Noun}s`, querystring: pageQuery, response: { 200: pageOf(response), ...errors } },
        },
        async (request) => {
          const { userId } = requirePrincipal(request);
          const rows = await services.pool.any(
            sql.type(connectionRow)`SELECT id, name, type, configuration, secret_fields, created_at, updated_at FROM rm.connections
            WHERE owner_id = ${userId} AND kind = ${kind} AND ${keysetWhere(request.query)}
            ORDER BY created_at DESC, id DESC LIMIT ${limitPlusOne(request.query)}`,
          );
          return toPage([...rows], request.query, represent);
        },
      );

      app.get(
        `/${plural}/:id`,
        {
          config: { auth: { scopes: read } },
          schema: { tags: [tag], summary: `Get a ${Noun}`, params: idParam, response: { 200: response, ...errors } },
        },
        async (request) => represent(await load(requirePrincipal(request).userId, request.params.id)),
      );

      app.post(
        `/${plural}`,
        {
          config: { auth: { scopes: write } },
          schema: { tags: [tag], summary: `Create a ${Noun}`, body: createBody, response: { 201: response, ...errors } },
        },
        async (request, reply) => {
          const { userId } = requirePrincipal(request);
          const body = request.body as { name: string; type: string; configuration: Record<string, unknown> };
          const { connector, configuration, secrets } = parseConfiguration(kind, body);
          const id = services.newId(kind);
          await execute(services, connectionStream(kind, id), decider, {
            type: 'CreateConnection',
            connectionId: id,
            actorId: userId,
            name: body.name,
            connectionType: connector.type,
            configuration,
            secretFields: connector.secrets,
            secrets: sealSecrets(services.cipher, id, secrets),
            at: services.clock(),
          });
          return reply.code(201).send(represent(await load(userId, id)));
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
        async (request) => {
          const { userId } = requirePrincipal(request);
          const body = request.body as { name: string; type: string; configuration: Record<string, unknown> };
          await load(userId, request.params.id);
          const { connector, configuration, secrets } = parseConfiguration(kind, body);
          await execute(services, connectionStream(kind, request.params.id), decider, {
            type: 'UpdateConnection',
            connectionId: request.params.id,
            actorId: userId,
            name: body.name,
            connectionType: connector.type,
            configuration,
            secretFields: connector.secrets,
            secrets: sealSecrets(services.cipher, request.params.id, secrets),
            at: services.clock(),
          });
          return represent(await load(userId, request.params.id));
        },
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
          const { userId } = requirePrincipal(request);
          await load(userId, request.params.id);
          // A Job would fail at its next Run: say which ones use it instead.
          const users = await jobsUsing(services, kind, request.params.id, userId);
          if (users.length) {
            throw new DomainError(
              'conflict',
              `${Noun} ${request.params.id} is used by ${users.length === 1 ? 'the Job' : `${users.length} Jobs:`} ${users.map((j) => `${j.name} (${j.id})`).join(', ')}; change or delete ${users.length === 1 ? 'it' : 'them'} first`,
              {
                jobs: users,
              },
            );
          }
          await execute(services, connectionStream(kind, request.params.id), decider, {
            type: 'DeleteConnection',
            connectionId: request.params.id,
            actorId: userId,
            at: services.clock(),
          });
          return reply.code(204).send(null);
        },
      );

      app.post(
        `/${plural}/test`,
        {
          config: { auth: { scopes: write } },
          schema: { tags: [tag], summary: `Test an unsaved ${Noun} (nothing is stored)`, body: draftBody, response: { 200: testResult, ...errors } },
        },
        async (request) => runTest(draftConnection(kind, request.body as never), request),
      );

      app.post(
        `/${plural}/:id/test`,
        {
          config: { auth: { scopes: write } },
          schema: { tags: [tag], summary: `Test a saved ${Noun}`, params: idParam, response: { 200: testResult, ...errors } },
        },
        async (request) => runTest(await openConnection(services, kind, request.params.id, requirePrincipal(request).userId), request),
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
            response: { 200: discovery, ...errors },
          },
        },
        async (request) => {
          const connection = await openConnection(services, kind, request.params.id, requirePrincipal(request).userId);
          if (!connection.connector.discover) {
            throw new DomainError(
              kind === 'source' ? 'invalid_source' : 'invalid_destination',
              `Discovery works on ${Noun}s whose type can list its tables (GET /api/v1/connectors: capabilities.discover); this one is ${connection.type}`,
              { type: connection.type },
            );
          }
          try {
            return await withDeadline(TEST_TIMEOUT_MS * 3, ctxBase(request), (ctx) =>
              connection.connector.discover!(connection.config, { schema: request.query.schema }, ctx),
            );
          } catch (error) {
            if (error instanceof ConnectorError) {
              if (error.reason === 'refused_by_policy') throw outboundRefusal(error.message);
              throw new DomainError('postgis_failed', error.message, { reason: error.reason, ...error.details });
            }
            throw error;
          }
        },
      );
    };
  };
}

/** A connector's refusal as the API's error. */
export function domainOf(error: ConnectorError): DomainError {
  if (error.reason === 'not_implemented') return new DomainError('not_implemented', error.message, error.details);
  return new DomainError('invalid_parameter', error.message, { reason: error.reason, ...error.details });
}

const catalogEntry = z
  .object({
    type: z.string(),
    label: z.string(),
    description: z.string(),
    kinds: z.array(z.enum(['source', 'destination'])),
    implemented: z.boolean(),
    verified_against: z.string(),
    configuration: z.record(z.string(), z.unknown()).describe('JSON Schema of the configuration'),
    secrets: z.array(z.string()),
    example: z.record(z.string(), z.unknown()),
    capabilities: z.object({
      test: z.boolean(),
      discover: z.boolean(),
      projects: z.boolean().describe('POST /sources/{id}/projects and /inspect-project answer (qfieldcloud, merginmaps)'),
      import: z.boolean(),
      deliver: z.boolean(),
      incremental: z.boolean(),
    }),
    source: z
      .object({
        resource: z.record(z.string(), z.unknown()).describe('JSON Schema of source_resource'),
        resource_required: z.boolean(),
        resource_shorthand: z.string().nullable(),
        importable: z.boolean(),
        incremental: z.boolean(),
        incremental_note: z.string().nullable(),
      })
      .nullable(),
    destination: z.object({ target: z.record(z.string(), z.unknown()).describe('JSON Schema of destination_target'), deliverable: z.boolean() }).nullable(),
  })
  .meta({ id: 'Connector' });

/** GET /api/v1/connectors: the catalogue of connection types, public like the other catalogues. */
export function connectorCatalogRoutes(): FastifyPluginAsyncZod {
  const items = publicConnectorCatalog();
  return async (app) => {
    app.get(
      '/connectors',
      {
        config: { auth: { public: true } },
        schema: {
          security: [],
          tags: ['Catalogs'],
          summary: 'Connection types: configuration fields (JSON Schema), secrets, selectors and targets, capabilities',
          response: { 200: z.object({ items: z.array(catalogEntry) }) },
        },
      },
      async () => ({ items }),
    );
  };
}
