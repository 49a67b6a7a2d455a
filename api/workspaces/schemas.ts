import { z } from 'zod';
import { operationShape } from '../../domain/operations.js';
import { creationOptions, crsInfo, operationList, processingWarning } from '../schemas.js';
import { PROGRESS_ID_PATTERN, PROGRESS_PHASES } from '../../application/operation-progress.js';

/** A long request's own name, so its caller can follow it (GET /api/v1/progress/{progress_id}). */
const progressIdField = z
  .string()
  .regex(PROGRESS_ID_PATTERN, 'Use 8–64 letters, digits, _ or -')
  .optional()
  .describe('An id of your choosing (8–64 of A–Z a–z 0–9 _ -): while this request runs, GET /api/v1/progress/{progress_id} says how far it has got');

/* The Workspace routes' request bodies and answers (beside the Workspace itself: ./representation.ts). */

export const pipelineBody = z
  .object({
    layers: z
      .array(z.string().min(1).max(1000))
      .max(1000)
      .default([])
      .describe('Layers the pipeline applies to; required for multi-layer datasets when operations or sql are set'),
    operations: operationList.default([]).describe('Ordered operations; mutually exclusive with sql; [] clears'),
    sql: z.string().max(100_000).nullable().default(null).describe('One SELECT against the relation `source`'),
    python: z
      .object({ script: z.string().min(1).max(1_000_000), filename: z.string().min(1).max(255).default('step.py') })
      .nullable()
      .default(null),
  })
  .meta({ id: 'WorkspacePipeline' });

export const pipelineSchema = z
  .object({
    layers: z.array(z.string()),
    operations: z.array(operationShape),
    sql: z.string().nullable(),
    python: z.object({ script: z.string(), filename: z.string() }).nullable(),
  })
  .meta({ id: 'StoredPipeline' });

export const convertBody = z.object({
  output_format: z.string().min(1).max(100).describe('An id (or extension) from GET /api/v1/formats'),
  target_crs: z
    .string()
    .min(1)
    .max(2000)
    .nullable()
    .optional()
    .describe(
      'e.g. EPSG:3857; omit to keep the CRS (GeoJSON: WGS 84, RFC 7946). An authority code, OGC URN, WKT, PROJJSON or PROJ string; a URL or file path is refused',
    ),
  layers: z.array(z.string().min(1)).optional().describe('Layers to convert; all by default'),
  transformation: z
    .string()
    .min(1)
    .max(10_000)
    .nullable()
    .optional()
    .describe(
      'With target_crs: a PROJ pipeline (+proj=pipeline …) to reproject with instead of the one PROJ chooses; the output reports the one used (warning crs_operation)',
    ),
  creation_options: creationOptions
    .nullable()
    .optional()
    .describe(
      'Creation options of the output format, checked against the driver\'s own list (a name or value it does not take is a 400 naming the allowed ones); GeoParquet, PMTiles and MBTiles take theirs in either list, e.g. {"dataset": {"ROW_GROUP_SIZE": "100000"}} (docs/formats.md)',
    ),
  progress_id: progressIdField,
});

const fieldEntry = z.object({ name: z.string(), type: z.string() });
export const dataPreviewSchema = z
  .object({
    workspace_id: z.string(),
    layer: z.string(),
    fields: z.array(fieldEntry),
    has_geometry: z.boolean(),
    geometry_type: z.string().optional().describe('Present for spatial layers'),
    crs: z.string().nullable(),
    crs_info: crsInfo.nullable(),
    row_count: z.number().nullable().describe('Layer row count when known'),
    preview_row_count: z.number(),
    limit: z.number(),
    truncated: z.boolean(),
    rows: z.array(z.record(z.string(), z.unknown())).describe('Keyed by field name; geometry cells hold a type label such as POINT'),
    warnings: z.array(processingWarning).optional().describe("Transformed previews: the pipeline's warnings about this layer"),
  })
  .meta({ id: 'DataPreview' });
export const spatialPreviewSchema = z
  .object({
    workspace_id: z.string(),
    layer: z.string(),
    source_crs: z.string().nullable(),
    source_crs_info: crsInfo.nullable(),
    preview_crs: z.literal('EPSG:4326'),
    returned_count: z.number(),
    feature_count: z.number().nullable(),
    truncated: z.boolean(),
    geojson: z
      .object({ type: z.literal('FeatureCollection'), features: z.array(z.unknown()) })
      .catchall(z.unknown())
      .describe('RFC 7946 FeatureCollection, lon/lat, 2D'),
    warnings: z.array(processingWarning).optional().describe("Transformed previews: the pipeline's warnings about this layer"),
  })
  .meta({ id: 'SpatialPreview' });

export const deliverBody = z.object({
  destination_id: z.string().min(1).max(100),
  destination_target: z
    .record(z.string(), z.unknown())
    .default({})
    .describe("Per-delivery target, checked by the Destination's connector (GET /api/v1/connectors)"),
  progress_id: progressIdField,
});

export const progressParams = z.object({ progress_id: z.string().regex(PROGRESS_ID_PATTERN, 'Use 8–64 letters, digits, _ or -') });

export const progressSchema = z
  .object({
    progress_id: z.string(),
    operation: z.enum(['import', 'convert', 'deliver']),
    status: z.enum(['running', 'completed', 'failed']).describe('completed and failed stay readable for a day; the request itself answers with the outcome'),
    phase: z
      .enum(PROGRESS_PHASES)
      .nullable()
      .describe(
        'What it is doing: an import transfers, then inspects; a convert runs the pipeline, then writes (only writing has a percentage); a delivery transfers',
      ),
    bytes_written: z.number().nullable().describe('Bytes transferred (import, deliver) or written (convert) so far'),
    bytes_total: z.number().nullable().describe("What bytes_written is heading for, when known: the remote file's declared size, the output's size"),
    features_written: z.number().nullable(),
    percent: z.number().nullable().describe("0–100: GDAL's own figure on a convert, else bytes_written over bytes_total; null when neither is known"),
    started_at: z.string(),
    updated_at: z.string(),
  })
  .meta({ id: 'Progress' });

export const deliveryResponse = z
  .object({
    workspace_id: z.string(),
    delivery_id: z.string(),
    destination_id: z.string(),
    destination_type: z.string(),
    target: z.record(z.string(), z.unknown()).describe('Where it went: schema and table, bucket and key, remote path, URL without credentials'),
    format: z.string(),
    filename: z.string(),
    rows_written: z.number().nullable(),
    bytes_written: z.number().nullable(),
    duration_ms: z.number(),
  })
  .meta({ id: 'Delivery' });

export const importBody = z.object({
  source_id: z.string().min(1).max(100),
  source_resource: z
    .union([z.string().min(1).max(100_000), z.record(z.string(), z.unknown())])
    .nullable()
    .optional(),
  progress_id: progressIdField,
});
