import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { hubFolders, hubItems, hubLayers } from '../../application/hub-browse.js';
import type { Services } from '../../application/services.js';
import { kindNoun, type ConnectionKind } from '../../domain/connections/kinds.js';
import type { Scope } from '../../domain/accounts/scopes.js';
import { requirePrincipal } from '../auth/principal.js';
import { errorEnvelope } from '../errors.js';

/*
 * The hub browse helpers under /sources/{id}/hub/… and /destinations/{id}/hub/…: what the
 * pickers list before choosing a hub Source's item or a Destination's target. Read scopes of
 * the kind, like discover; another user's connection is 404 like every connection route.
 */

const errors = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope, 422: errorEnvelope };
const params = z.object({ id: z.string().min(1).max(100) });
const itemParams = params.extend({ itemId: z.string().regex(/^[A-Za-z0-9]{1,64}$/, 'a portal item id (letters and digits)') });

const item = z.object({
  id: z.string(),
  title: z.string(),
  type: z.string().describe('Portal item type: Feature Service, GeoJson, Shapefile, CSV …'),
  owner: z.string().nullable().describe("The owner's user name (null when the portal does not say)"),
  url: z.string().nullable().describe('Service URL of a feature layer item'),
  tags: z.array(z.string()),
  access: z.string().nullable().describe('private, shared, org or public'),
  modified: z.string().nullable().describe('ISO 8601 UTC'),
});

const itemsPage = z
  .object({
    portal: z.string(),
    query: z.string().describe('The search sent to the portal'),
    total: z.number(),
    start: z.number(),
    next_start: z.number().nullable().describe('start of the next page, null on the last'),
    items: z.array(item.meta({ id: 'HubItem' })),
  })
  .meta({ id: 'HubItems' });

const folders = z
  .object({ portal: z.string(), username: z.string(), folders: z.array(z.object({ id: z.string(), title: z.string() })) })
  .meta({ id: 'HubFolders' });

const layers = z
  .object({
    item: item,
    layers: z.array(z.object({ id: z.number(), name: z.string(), kind: z.enum(['layer', 'table']), geometry_type: z.string().nullable() })),
  })
  .meta({ id: 'HubLayers' });

export function hubBrowseRoutes(kind: ConnectionKind): (services: Services) => FastifyPluginAsyncZod {
  const plural = `${kind}s`;
  const Noun = kindNoun(kind);
  const read: Scope[] = [kind === 'source' ? 'sources:read' : 'destinations:read'];
  const tags = [`${Noun}s`];
  /** Whose connection, which one, and the request's logger. */
  const asked = (request: FastifyRequest & { params: { id: string } }) => ({
    kind,
    id: request.params.id,
    actorId: requirePrincipal(request).userId,
    log: request.log as never,
  });
  return (services) => async (app) => {
    app.get(
      `/${plural}/:id/hub/items`,
      {
        config: { auth: { scopes: read } },
        schema: {
          tags,
          summary: `Search the portal of a hub ${Noun} for items (newest first)`,
          params,
          querystring: z.object({
            q: z
              .string()
              .max(1000)
              .optional()
              .describe('Portal search (q syntax: words, title:"…", type:"Feature Service", owner:…); empty lists everything visible'),
            owner_only: z.enum(['true', 'false']).default('false').describe("Only the signed-in user's items"),
            start: z.coerce.number().int().min(1).max(10_000).default(1).describe('1-based position of the first result (next_start of the previous page)'),
            num: z.coerce.number().int().min(1).max(100).default(20),
          }),
          response: { 200: itemsPage, ...errors },
        },
      },
      async (request) => {
        const q = request.query;
        return hubItems(services, asked(request), { q: q.q, start: q.start, num: q.num, owner_only: q.owner_only === 'true' });
      },
    );

    app.get(
      `/${plural}/:id/hub/folders`,
      {
        config: { auth: { scopes: read } },
        schema: { tags, summary: `The signed-in user's folders on the portal of a hub ${Noun}`, params, response: { 200: folders, ...errors } },
      },
      async (request) => hubFolders(services, asked(request)),
    );

    app.get(
      `/${plural}/:id/hub/items/:itemId/layers`,
      {
        config: { auth: { scopes: read } },
        schema: {
          tags,
          summary: `Layers and tables of a feature layer item on the portal of a hub ${Noun}`,
          params: itemParams,
          response: { 200: layers, ...errors },
        },
      },
      async (request) => hubLayers(services, asked(request), request.params.itemId),
    );
  };
}
