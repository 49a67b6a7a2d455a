import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import * as recipes from '../../application/recipes.js';
import type { Services } from '../../application/services.js';
import { requirePrincipal } from '../auth/principal.js';
import { errorEnvelope } from '../errors.js';
import { pageOf, pageQuery, pageView } from '../pagination.js';
import { idParam, nonBlank, operationList } from '../schemas.js';
import { recipeSchema } from './representation.js';

const recipeBody = z.object({
  name: nonBlank(200),
  description: z.string().max(4000).default(''),
  operations: operationList,
});

const errors = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope, 409: errorEnvelope, 422: errorEnvelope };

/** /recipes: one use case of application/recipes.ts per route. */
export function recipeRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/recipes',
      {
        config: { auth: { scopes: ['recipes:read'] } },
        schema: { tags: ['Recipes'], summary: 'List your Recipes', querystring: pageQuery, response: { 200: pageOf(recipeSchema), ...errors } },
      },
      async (request) => pageView(await recipes.listRecipes(services, requirePrincipal(request).userId, request.query), (r) => r),
    );

    app.get(
      '/recipes/:id',
      {
        config: { auth: { scopes: ['recipes:read'] } },
        schema: { tags: ['Recipes'], summary: 'Get a Recipe', params: idParam, response: { 200: recipeSchema, ...errors } },
      },
      async (request) => recipes.showRecipe(services, requirePrincipal(request).userId, request.params.id),
    );

    app.post(
      '/recipes',
      {
        config: { auth: { scopes: ['recipes:write'] } },
        schema: { tags: ['Recipes'], summary: 'Create a Recipe', body: recipeBody, response: { 201: recipeSchema, ...errors } },
      },
      async (request, reply) => reply.code(201).send(await recipes.createRecipe(services, requirePrincipal(request).userId, request.body)),
    );

    app.put(
      '/recipes/:id',
      {
        config: { auth: { scopes: ['recipes:write'] } },
        schema: { tags: ['Recipes'], summary: 'Replace a Recipe', params: idParam, body: recipeBody, response: { 200: recipeSchema, ...errors } },
      },
      async (request) => recipes.updateRecipe(services, requirePrincipal(request).userId, request.params.id, request.body),
    );

    app.delete(
      '/recipes/:id',
      {
        config: { auth: { scopes: ['recipes:write'] } },
        schema: { tags: ['Recipes'], summary: 'Delete a Recipe', params: idParam, response: { 204: z.null().describe('Deleted'), ...errors } },
      },
      async (request, reply) => {
        await recipes.deleteRecipe(services, requirePrincipal(request).userId, request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}
