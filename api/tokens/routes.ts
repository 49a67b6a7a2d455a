import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { sql } from 'slonik';
import { z } from 'zod';
import { allScopes, type Scope } from '../../domain/accounts/scopes.js';
import { tokenDecider, tokenStream } from '../../domain/accounts/token.js';
import { notFound } from '../../domain/errors.js';
import { isoTime, isoTimeOrNull } from '../../platform/db.js';
import { requirePrincipal } from '../auth/principal.js';
import { displayPrefix, newTokenValue, sha256Hex } from '../auth/tokens.js';
import { execute } from '../../application/commands.js';
import { WrongExpectedRevisionError } from '../../eventstore/port.js';
import { errorEnvelope } from '../errors.js';
import { keysetWhere, limitPlusOne, pageOf, pageQuery, toPage } from '../pagination.js';
import { idParam, nonBlank, timestamp } from '../schemas.js';
import type { Services } from '../../application/services.js';

const scopeEnum = z.enum(allScopes as [Scope, ...Scope[]]);

const token = z
  .object({
    id: z.string(),
    name: z.string(),
    scopes: z.array(z.string()),
    prefix: z.string().describe('First characters of the value, to tell tokens apart'),
    created_at: timestamp,
    expires_at: timestamp.nullable(),
    last_used_at: timestamp.nullable(),
    revoked_at: timestamp.nullable(),
  })
  .meta({ id: 'Token' });

const createdToken = token.extend({ token: z.string().describe('The value: shown only in this response') }).meta({ id: 'CreatedToken' });

const tokenRow = z.object({
  id: z.string(),
  name: z.string(),
  scopes: z.array(z.string()),
  prefix: z.string(),
  created_at: isoTime,
  expires_at: isoTimeOrNull,
  last_used_at: isoTimeOrNull,
  revoked_at: isoTimeOrNull,
});

/** What the OpenAPI document says these routes take: the browser session cookie, never a PAT (a Bearer header gets 403). */
const sessionOnly = [{ session: [] }];

const errors = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope, 422: errorEnvelope };

/** Token management: browser session only (a PAT cannot mint or revoke PATs). */
export function tokenRoutes(services: Services): FastifyPluginAsyncZod {
  const load = async (ownerId: string, id: string) => {
    const row = await services.pool.maybeOne(
      sql.type(tokenRow)`SELECT id, name, scopes, prefix, created_at, expires_at, last_used_at, revoked_at
        FROM rm.tokens WHERE id = ${id} AND owner_id = ${ownerId}`,
    );
    if (!row) throw notFound('token_not_found', 'Token', id);
    return row;
  };

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
          response: { 201: createdToken, ...errors },
        },
      },
      async (request, reply) => {
        const { userId } = requirePrincipal(request);
        const value = newTokenValue();
        const tokenId = services.newId('token');
        const at = services.clock();
        const days = request.body.expires_in_days;
        await execute(services, tokenStream(tokenId), tokenDecider, {
          type: 'CreateToken',
          tokenId,
          actorId: userId,
          name: request.body.name,
          scopes: [...new Set(request.body.scopes)],
          tokenSha256: sha256Hex(value),
          prefix: displayPrefix(value),
          expiresAt: days ? new Date(at.getTime() + days * 86_400_000) : null,
          at,
        });
        return reply.code(201).send({ ...(await load(userId, tokenId)), token: value });
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
          response: { 200: pageOf(token), ...errors },
        },
      },
      async (request) => {
        const { userId } = requirePrincipal(request);
        const rows = await services.pool.any(
          sql.type(tokenRow)`SELECT id, name, scopes, prefix, created_at, expires_at, last_used_at, revoked_at FROM rm.tokens
          WHERE owner_id = ${userId} AND ${keysetWhere(request.query)}
          ORDER BY created_at DESC, id DESC LIMIT ${limitPlusOne(request.query)}`,
        );
        return toPage([...rows], request.query, (r) => r);
      },
    );

    app.delete(
      '/account/tokens/:id',
      {
        config: { auth: { session: true } },
        schema: { security: sessionOnly, tags: ['Account'], summary: 'Revoke a token', params: idParam, response: { 204: z.null(), ...errors } },
      },
      async (request, reply) => {
        const { userId } = requirePrincipal(request);
        // The token's own stream also takes TokenUsed events, written in the background while it is
        // in use: a revocation that meets one decides again on the new state instead of answering 409.
        for (let attempt = 1; ; attempt++) {
          try {
            await execute(services, tokenStream(request.params.id), tokenDecider, {
              type: 'RevokeToken',
              tokenId: request.params.id,
              actorId: userId,
              at: services.clock(),
            });
            break;
          } catch (error) {
            if (!(error instanceof WrongExpectedRevisionError) || attempt >= 5) throw error;
          }
        }
        return reply.code(204).send(null);
      },
    );
  };
}
