import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { formatCatalog, gdalSummary } from '../../geo/datasets/formats.js';
import { publicCatalog } from '../../geo/operations/catalog.js';
import { pythonStepAvailable } from '../../geo/sandbox/python-step.js';
import { errorEnvelope } from '../errors.js';
import type { Services } from '../../application/services.js';
import pkg from '../../package.json' with { type: 'json' };

const format = z
  .object({
    id: z.string().describe('GDAL driver short name; use it as output_format'),
    name: z.string(),
    kind: z.enum(['vector', 'raster']),
    read: z.boolean(),
    write: z.boolean(),
    extensions: z.array(z.string()),
    media_type: z.string().nullable(),
    multi_layer: z.boolean(),
  })
  .meta({ id: 'Format' });

const transformation = z
  .object({
    id: z.string().describe('Stable id; the `type` of an operation object'),
    label: z.string(),
    description: z.string(),
    category: z.enum(['attribute', 'filter', 'geometry', 'crs']),
    requires_geometry: z.boolean(),
    parameters: z.record(z.string(), z.unknown()).describe('JSON Schema of the parameters'),
    example: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'Transformation' });

const systemSchema = z
  .object({
    name: z.string(),
    version: z.string(),
    edition: z.string(),
    gdal: z.object({ version: z.string(), drivers: z.object({ total: z.number(), vector: z.number(), raster: z.number() }) }),
    node: z.string(),
    event_store: z.enum(['postgres', 'kurrentdb']),
    features: z.record(z.string(), z.boolean()),
    container_image: z.string().nullable().describe('Implementation detail; do not depend on it'),
    temporal_ui: z
      .object({ url: z.string(), namespace: z.string() })
      .nullable()
      .describe("The Temporal UI (SVC_TEMPORAL_UI_URL) and namespace, for links to a Run's workflow; null when not configured"),
  })
  .meta({ id: 'System' });

export function catalogRoutes(services: Services): FastifyPluginAsyncZod {
  // What this process can do does not change while it runs (GDAL's drivers, whether bwrap and
  // Python are installed): computed on the first call, not on every one (a file-system probe each time).
  let capabilities: ReturnType<typeof describeSystem> | undefined;
  let systemJson: string | undefined;
  const system = () => (capabilities ??= describeSystem());
  const describeSystem = () => ({
    name: 'geoflow',
    version: pkg.version,
    edition: services.config.edition,
    gdal: gdalSummary(),
    node: process.versions.node,
    event_store: services.store.kind,
    features: {
      raster_processing: formatCatalog().some((f) => f.kind === 'raster' && f.write),
      vector_processing: true,
      sql: true,
      python_step: pythonStepAvailable(),
    },
    container_image: services.config.containerImage,
    // Where the browser links a Run's workflow; only what the operator chose to publish.
    temporal_ui: services.config.temporalUiUrl ? { url: services.config.temporalUiUrl, namespace: services.config.temporalNamespace } : null,
  });

  return async (app) => {
    app.get(
      '/formats',
      {
        config: { auth: { public: true } },
        schema: {
          security: [],
          tags: ['Catalogs'],
          summary: 'Formats this server reads and writes (from its GDAL build)',
          response: { 200: z.object({ items: z.array(format) }) },
        },
      },
      async () => ({ items: formatCatalog() }),
    );

    app.get(
      '/system',
      {
        config: { auth: { public: true } },
        schema: {
          security: [],
          tags: ['Catalogs'],
          summary: 'Runtime capabilities (no secrets)',
          response: { 200: systemSchema },
        },
        // Checked against its schema and serialized once (it never changes): a string with a JSON
        // content type is sent as it is.
      },
      async (_request, reply) => {
        systemJson ??= JSON.stringify(systemSchema.parse(system()));
        return reply.type('application/json; charset=utf-8').send(systemJson as never);
      },
    );

    app.get(
      '/transformations',
      {
        config: { auth: { scopes: ['workspaces:read'] } },
        schema: {
          tags: ['Catalogs'],
          summary: 'The transformation catalog: every operation with its parameters',
          response: { 200: z.object({ items: z.array(transformation) }), 401: errorEnvelope, 403: errorEnvelope },
        },
      },
      async () => ({ items: publicCatalog() as never }),
    );
  };
}
