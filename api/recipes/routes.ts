import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { sql } from 'slonik';
import { z } from 'zod';
import { operationShape } from '../../domain/operations.js';
import { recipeDecider, recipeStream } from '../../domain/recipes/recipe.js';
import { notFound } from '../../domain/errors.js';
import { isoTime } from '../../platform/db.js';
import { requirePrincipal } from '../auth/principal.js';
import { execute } from '../../application/commands.js';
import { errorEnvelope } from '../errors.js';
import { keysetWhere, limitPlusOne, pageOf, pageQuery, toPage } from '../pagination.js';
import { idParam, nonBlank, operationList, timestamp } from '../schemas.js';
import type { Services } from '../../application/services.js';

const recipeBody = z.object({
  name: nonBlank(200),
  description: z.string().max(4000).default(''),
  operations: operationList,
});

const recipe = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    operations: z.array(operationShape),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Recipe' });

const recipeRow = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  operations: z.array(operationShape),
  created_at: isoTime,
  updated_at: isoTime,
});

const errors = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope, 409: errorEnvelope, 422: errorEnvelope };

export function recipeRoutes(services: Services): FastifyPluginAsyncZod {
  const load = async (ownerId: string, id: string) => {
    const row = await services.reads.maybeOne(
      recipeRow,
      'SELECT id, name, description, operations, created_at, updated_at FROM rm.recipes WHERE id = $1 AND owner_id = $2',
      [id, ownerId],
    );
    if (!row) throw notFound('recipe_not_found', 'Recipe', id);
    return row;
  };

  return async (app) => {
    app.get(
      '/recipes',
      {
        config: { auth: { scopes: ['recipes:read'] } },
        schema: { tags: ['Recipes'], summary: 'List your Recipes', querystring: pageQuery, response: { 200: pageOf(recipe), ...errors } },
      },
      async (request) => {
        const { userId } = requirePrincipal(request);
        const rows = await services.pool.any(
          sql.type(recipeRow)`SELECT id, name, description, operations, created_at, updated_at FROM rm.recipes
          WHERE owner_id = ${userId} AND ${keysetWhere(request.query)}
          ORDER BY created_at DESC, id DESC LIMIT ${limitPlusOne(request.query)}`,
        );
        return toPage([...rows], request.query, (r) => r);
      },
    );

    app.get(
      '/recipes/:id',
      {
        config: { auth: { scopes: ['recipes:read'] } },
        schema: { tags: ['Recipes'], summary: 'Get a Recipe', params: idParam, response: { 200: recipe, ...errors } },
      },
      async (request) => load(requirePrincipal(request).userId, request.params.id),
    );

    app.post(
      '/recipes',
      {
        config: { auth: { scopes: ['recipes:write'] } },
        schema: { tags: ['Recipes'], summary: 'Create a Recipe', body: recipeBody, response: { 201: recipe, ...errors } },
      },
      async (request, reply) => {
        const { userId } = requirePrincipal(request);
        const recipeId = services.newId('recipe');
        await execute(services, recipeStream(recipeId), recipeDecider, {
          type: 'CreateRecipe',
          recipeId,
          actorId: userId,
          ...request.body,
          at: services.clock(),
        });
        return reply.code(201).send(await load(userId, recipeId));
      },
    );

    app.put(
      '/recipes/:id',
      {
        config: { auth: { scopes: ['recipes:write'] } },
        schema: { tags: ['Recipes'], summary: 'Replace a Recipe', params: idParam, body: recipeBody, response: { 200: recipe, ...errors } },
      },
      async (request) => {
        const { userId } = requirePrincipal(request);
        await execute(services, recipeStream(request.params.id), recipeDecider, {
          type: 'UpdateRecipe',
          recipeId: request.params.id,
          actorId: userId,
          ...request.body,
          at: services.clock(),
        });
        return load(userId, request.params.id);
      },
    );

    app.delete(
      '/recipes/:id',
      {
        config: { auth: { scopes: ['recipes:write'] } },
        schema: { tags: ['Recipes'], summary: 'Delete a Recipe', params: idParam, response: { 204: z.null().describe('Deleted'), ...errors } },
      },
      async (request, reply) => {
        const { userId } = requirePrincipal(request);
        await execute(services, recipeStream(request.params.id), recipeDecider, {
          type: 'DeleteRecipe',
          recipeId: request.params.id,
          actorId: userId,
          at: services.clock(),
        });
        return reply.code(204).send(null);
      },
    );
  };
}
