import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { CRS_CODE_PATTERN, crsInputKind, describeCrs, parseCrsInput } from '../../geo/crs.js';
import { formatCatalog, gdalSummary } from '../../geo/datasets/formats.js';
import { publicCatalog } from '../../geo/operations/catalog.js';
import { pythonStepAvailable } from '../../geo/sandbox/python-step.js';
import { errorEnvelope, invalidParameter, notFound } from '../errors.js';
import { crsInfo } from '../schemas.js';
import type { Services } from '../../application/services.js';
import pkg from '../../package.json' with { type: 'json' };
import { publicRoute } from '../public-route.js';

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
    basemap: z
      .object({
        url: z.string().describe('XYZ tile URL template: {z}/{x}/{y}, {s} for a subdomain (a, b, c)'),
        attribution: z.string().describe('Shown on the map; may be empty'),
      })
      .nullable()
      .describe(
        'The tile service the maps draw under the data (SVC_BASEMAP_URL); null: the Natural Earth land and boundaries the browser app ships, no network needed',
      ),
    limits: z
      .object({
        max_upload_bytes: z.number().int().describe('Largest Workspace upload (SVC_MAX_UPLOAD_MB); a bigger one is refused with upload_too_large'),
      })
      .describe('Limits a client can check before it sends'),
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
    basemap: services.config.basemap ? { url: services.config.basemap.url, attribution: services.config.basemap.attribution } : null,
    limits: { max_upload_bytes: services.config.maxUploadBytes },
  });

  return async (app) => {
    app.get(
      '/formats',
      publicRoute({
        tags: ['Catalogs'],
        summary: 'Formats this server reads and writes (from its GDAL build)',
        response: { 200: z.object({ items: z.array(format) }) },
      }),
      async () => ({ items: formatCatalog() }),
    );

    app.get(
      '/system',
      // Checked against its schema and serialized once (it never changes): a string with a JSON
      // content type is sent as it is.
      publicRoute({
        tags: ['Catalogs'],
        summary: 'Runtime capabilities (no secrets)',
        response: { 200: systemSchema },
      }),
      async (_request, reply) => {
        systemJson ??= JSON.stringify(systemSchema.parse(system()));
        return reply.type('application/json; charset=utf-8').send(systemJson as never);
      },
    );

    app.get(
      '/crs/:code',
      publicRoute({
        tags: ['Catalogs'],
        summary: "A coordinate reference system by its code: name and unit (what a Job or an operation names, shown like a layer's crs_info)",
        params: z.object({
          code: z.string().min(1).max(100).regex(new RegExp(CRS_CODE_PATTERN)).describe('An authority code (EPSG:2263, ESRI:102100) or an OGC URN'),
        }),
        response: { 200: crsInfo, 400: errorEnvelope, 404: errorEnvelope },
      }),
      async (request) => {
        const { code } = request.params;
        const kind = crsInputKind(code);
        if (kind !== 'code' && kind !== 'urn')
          throw invalidParameter(`code: give an authority code such as EPSG:4326 or an OGC URN, not ${JSON.stringify(code.slice(0, 40))}`);
        // A well-formed code that PROJ's database does not hold is a resource that is not there.
        let srs: ReturnType<typeof parseCrsInput>;
        try {
          srs = parseCrsInput(code, 'code');
        } catch {
          throw notFound(`No coordinate reference system ${JSON.stringify(code.trim().slice(0, 80))} is known here (PROJ's database); try EPSG:4326`);
        }
        return describeCrs(srs)!;
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
