import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { inspectSourceProject, listSourceProjects } from '../../application/source-projects.js';
import type { Services } from '../../application/services.js';
import { requirePrincipal } from '../auth/principal.js';
import { errorEnvelope } from '../errors.js';
import { idParam } from '../schemas.js';

/*
 * POST /sources/{id}/projects and /sources/{id}/inspect-project (scope sources:read): the
 * projects of a QFieldCloud or Mergin Maps Source, and one project's files with the layers of its
 * vector files, so a Job's source_resource (project, file, layer, version) can be picked from
 * them. POST because both talk to the remote platform (inspect downloads files); nothing is stored.
 */

const errors = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope, 422: errorEnvelope };

const project = z
  .object({
    id: z.string().describe('What source_resource.project takes (QFieldCloud: the project id; Mergin Maps: the project name)'),
    name: z.string(),
    owner: z.string().nullable().describe('Owner (QFieldCloud) or workspace (Mergin Maps)'),
    description: z.string().nullable(),
    updated: z.string().nullable().describe('Last update, as the platform says it'),
    version: z.string().nullable().describe('Latest project version (Mergin Maps), else null'),
  })
  .meta({ id: 'FieldProject' });

const layer = z.object({
  name: z.string(),
  geometry_type: z.string().nullable(),
  crs: z.string().nullable(),
  feature_count: z.number().nullable(),
});

const inspection = z
  .object({
    project,
    version: z.string().nullable().describe('The version inspected (Mergin Maps), else null'),
    versions: z
      .array(z.object({ name: z.string(), created: z.string().nullable(), author: z.string().nullable() }))
      .describe('Project versions, newest first (Mergin Maps)'),
    files: z.array(
      z.object({
        name: z.string().describe('Path in the project: source_resource.file'),
        size: z.number().nullable(),
        checksum: z.string().nullable().describe("The file's hash (QFieldCloud: md5; Mergin Maps: SHA-1): what the unchanged skip compares"),
        updated: z.string().nullable(),
        layers: z.array(layer).nullable().describe('Layers of a vector file (read with GDAL); null for other files'),
        error: z.string().optional().describe('Why a vector file could not be read'),
      }),
    ),
  })
  .meta({ id: 'FieldProjectInspection' });

const inspectBody = z.strictObject({
  project: z.string().min(1).max(255).describe('A project id from /projects'),
  version: z.string().min(1).max(20).optional().describe('Mergin Maps: the version to inspect (v1, v2 …; default the latest)'),
});

export function sourceProjectRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/sources/:id/projects',
      {
        config: { auth: { scopes: ['sources:read'] } },
        schema: {
          tags: ['Sources'],
          summary: 'Projects of a QFieldCloud or Mergin Maps Source',
          params: idParam,
          response: { 200: z.object({ items: z.array(project) }), ...errors },
        },
      },
      async (request) => ({ items: await listSourceProjects(services, request.params.id, requirePrincipal(request).userId, request.log as never) }),
    );

    app.post(
      '/sources/:id/inspect-project',
      {
        config: { auth: { scopes: ['sources:read'] } },
        schema: {
          tags: ['Sources'],
          summary: "A project's files and, for each vector file, its layers (geometry type, CRS, feature count)",
          params: idParam,
          body: inspectBody,
          response: { 200: inspection, ...errors },
        },
      },
      async (request) => inspectSourceProject(services, request.params.id, requirePrincipal(request).userId, request.body, request.log as never),
    );
  };
}
