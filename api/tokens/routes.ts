import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Services } from '../../application/services.js';
import * as tokens from '../../application/tokens.js';
import { allScopes, type Scope } from '../../domain/accounts/scopes.js';
import { requirePrincipal } from '../auth/principal.js';
import { errorEnvelope } from '../errors.js';
import { pageOf, pageQuery, pageView } from '../pagination.js';
import { idParam, nonBlank } from '../schemas.js';
import { createdTokenSchema, tokenSchema } from './representation.js';

const scopeEnum = z.enum(allScopes as [Scope, ...Scope[]]);

/** What the OpenAPI document says these routes take: the browser session cookie, never a PAT (a Bearer header gets 403). */
const sessionOnly = [{ session: [] }];

const errors = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope, 422: errorEnvelope };

/** Token management: browser session only (a PAT cannot mint or revoke PATs); the use cases are application/tokens.ts. */
export function tokenRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/account/tokens',
      {
        config: { auth: { session: true } },
        schema: {
          security: sessionOnly,
          tags: ['Account'],
          summary: 'Create a personal access token (the value is shown once)',
          body: z.object({
            name: nonBlank(200),
            scopes: z.array(scopeEnum).min(1).describe('Scopes from the API table; at least one'),
            expires_in_days: z.number().int().min(1).max(3650).optional().describe('Omit for a token that does not expire'),
          }),
          response: { 201: createdTokenSchema, ...errors },
        },
      },
      async (request, reply) => {
        const { token, value } = await tokens.createToken(services, requirePrincipal(request).userId, request.body);
        return reply.code(201).send({ ...token, token: value });
      },
    );

    app.get(
      '/account/tokens',
      {
        config: { auth: { session: true } },
        schema: {
          security: sessionOnly,
          tags: ['Account'],
          summary: 'List your tokens (never their values)',
          querystring: pageQuery,
          response: { 200: pageOf(tokenSchema), ...errors },
        },
      },
      async (request) => pageView(await tokens.listTokens(services, requirePrincipal(request).userId, request.query), (t) => t),
    );

    app.delete(
      '/account/tokens/:id',
      {
        config: { auth: { session: true } },
        schema: { security: sessionOnly, tags: ['Account'], summary: 'Revoke a token', params: idParam, response: { 204: z.null(), ...errors } },
      },
      async (request, reply) => {
        await tokens.revokeToken(services, requirePrincipal(request).userId, request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}
