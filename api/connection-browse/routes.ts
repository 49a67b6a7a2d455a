import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { browseGeonode, browseGeoserver, listLayers, listStores, listWorkspaces } from '../../application/connection-browse.js';
import type { Services } from '../../application/services.js';
import type { Scope } from '../../domain/accounts/scopes.js';
import { kindNoun, type ConnectionKind } from '../../domain/connections/kinds.js';
import { requirePrincipal } from '../auth/principal.js';
import { errorEnvelope } from '../errors.js';
import { idParam } from '../schemas.js';

/*
 * Browse helpers of GeoServer and GeoNode connections, under /sources/{id}/… and
 * /destinations/{id}/… with the read scope of the kind (the spec's "GeoServer and GeoNode
 * listings"). Like discovery, another user's connection is a 404 that does not say it exists.
 */

type BrowseRequest = Parameters<typeof requirePrincipal>[0] & { log: unknown; params: { id: string } };
type GeoserverList<T> = Parameters<typeof browseGeoserver<T>>[4];

const errors = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope, 422: errorEnvelope };

const gsName = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/, 'a GeoServer workspace name');
const workspaceParams = idParam.extend({ workspace: gsName });

const named = z.object({ name: z.string() });
const workspaces = z.object({ items: z.array(named) }).meta({ id: 'GeoserverWorkspaces' });
const stores = z.object({ workspace: z.string(), items: z.array(named) }).meta({ id: 'GeoserverStores' });
const layers = z
  .object({
    workspace: z.string(),
    items: z.array(z.object({ name: z.string(), qualified_name: z.string().describe('workspace:name, as source_resource.layer takes it') })),
  })
  .meta({ id: 'GeoserverLayers' });
const datasets = z
  .object({
    items: z.array(
      z.object({
        id: z.string(),
        name: z.string().nullable(),
        alternate: z.string().nullable(),
        title: z.string().nullable(),
        page_url: z.string().nullable(),
      }),
    ),
    total: z.number().nullable().describe('Datasets matching, as GeoNode counts them'),
    page: z.number(),
    page_size: z.number(),
  })
  .meta({ id: 'GeonodeDatasets' });
const datasetQuery = z.object({
  search: z
    .string()
    .min(1)
    .max(200)
    .regex(/^[^\u0000]*$/)
    .optional()
    .describe("GeoNode's full-text search"),
  page: z.coerce.number().int().min(1).max(100_000).default(1),
  page_size: z.coerce.number().int().min(1).max(100).default(20),
});

export function connectionBrowseRoutes(kind: ConnectionKind): (services: Services) => FastifyPluginAsyncZod {
  const plural = `${kind}s`;
  const Noun = kindNoun(kind);
  const tag = `${Noun}s`;
  const read: Scope[] = [kind === 'source' ? 'sources:read' : 'destinations:read'];
  return (services) => async (app) => {
    const base = (request: { log: unknown }) => ({ log: request.log as never, workDir: services.config.dataDir, maxBytes: services.config.maxUploadBytes });
    /** A GeoServer listing of the requester's connection `:id`. */
    const geoserver = <T>(request: BrowseRequest, list: GeoserverList<T>) =>
      browseGeoserver(services, kind, request.params.id, requirePrincipal(request).userId, list, base(request));

    app.get(
      `/${plural}/:id/geoserver/workspaces`,
      {
        config: { auth: { scopes: read } },
        schema: { tags: [tag], summary: `Workspaces of a GeoServer ${Noun}`, params: idParam, response: { 200: workspaces, ...errors } },
      },
      async (request) => geoserver(request, listWorkspaces),
    );

    app.get(
      `/${plural}/:id/geoserver/workspaces/:workspace/stores`,
      {
        config: { auth: { scopes: read } },
        schema: { tags: [tag], summary: `Data stores of a workspace of a GeoServer ${Noun}`, params: workspaceParams, response: { 200: stores, ...errors } },
      },
      async (request) => geoserver(request, (access, ctx) => listStores(access, request.params.workspace, ctx)),
    );

    app.get(
      `/${plural}/:id/geoserver/workspaces/:workspace/layers`,
      {
        config: { auth: { scopes: read } },
        schema: { tags: [tag], summary: `Layers of a workspace of a GeoServer ${Noun}`, params: workspaceParams, response: { 200: layers, ...errors } },
      },
      async (request) => geoserver(request, (access, ctx) => listLayers(access, request.params.workspace, ctx)),
    );

    app.get(
      `/${plural}/:id/geonode/datasets`,
      {
        config: { auth: { scopes: read } },
        schema: {
          tags: [tag],
          summary: `Datasets of a GeoNode ${Noun} (GeoNode's search and paging)`,
          params: idParam,
          querystring: datasetQuery,
          response: { 200: datasets, ...errors },
        },
      },
      async (request) => browseGeonode(services, kind, request.params.id, requirePrincipal(request).userId, request.query, base(request)),
    );
  };
}
