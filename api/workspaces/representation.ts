import { z } from 'zod';
import type { WorkspaceRow } from '../../projections/workspaces.js';
import { crsInfo, processingWarning, timestamp } from '../schemas.js';

const layer = z
  .object({
    name: z.string(),
    geometry_type: z.string().nullable(),
    has_geometry: z.boolean(),
    feature_count: z.number().nullable(),
    crs: z.string().nullable(),
    crs_info: crsInfo.nullable().optional().describe('Code, name and unit of the CRS (absent in Workspaces inspected before it was shown)'),
    fields: z.array(z.object({ name: z.string(), type: z.string() })),
  })
  .catchall(z.unknown())
  .meta({ id: 'WorkspaceLayer' });

export const workspaceSchema = z
  .object({
    id: z.string(),
    status: z.enum(['inspected', 'converting', 'completed', 'failed']),
    filename: z.string(),
    size: z.number().describe('Bytes uploaded'),
    dataset_type: z.enum(['vector', 'raster']),
    format: z.string(),
    driver: z.string(),
    layers: z.array(layer),
    raster: z.record(z.string(), z.unknown()).nullable(),
    crs: z.string().nullable(),
    crs_info: crsInfo.nullable().describe('Code, name and unit of the CRS of the first spatial layer'),
    warnings: z.array(z.string()),
    source: z.record(z.string(), z.unknown()).nullable().describe('The saved Source this Workspace imported, if any'),
    pipeline: z.record(z.string(), z.unknown()),
    output: z
      .object({
        format: z.string(),
        filename: z.string(),
        size: z.number(),
        media_type: z.string().nullable(),
        layers: z.array(z.string()),
        warnings: z
          .array(processingWarning)
          .describe('What the pipeline and the output format changed or doubted: renamed fields with the mapping, cut values, repaired geometries'),
      })
      .nullable(),
    errors: z.array(z.object({ code: z.string(), message: z.string() })),
    created_at: timestamp,
    updated_at: timestamp,
    expires_at: timestamp,
  })
  .meta({ id: 'Workspace' });

/** What the API shows of a Workspace (its `Workspace`): the inspection fields flattened, no paths, no owner. */
export function representWorkspace(row: WorkspaceRow): z.infer<typeof workspaceSchema> {
  const i = row.inspection;
  const origin = row.origin as { kind: string; source_id?: string; source_resource?: string | null };
  return {
    id: row.id,
    status: row.status as 'inspected' | 'converting' | 'completed' | 'failed',
    filename: row.filename,
    size: row.size,
    dataset_type: i.dataset_type,
    format: i.format,
    driver: i.driver,
    layers: i.layers,
    raster: i.raster,
    crs: i.crs,
    crs_info: i.layers.find((l) => l.has_geometry && l.crs)?.crs_info ?? null,
    warnings: i.warnings,
    source: origin.kind === 'source' ? { id: origin.source_id, resource: origin.source_resource ?? null } : null,
    pipeline: row.pipeline as unknown as Record<string, unknown>,
    output: row.output
      ? {
          format: row.output.format,
          filename: row.output.filename,
          size: row.output.size,
          media_type: row.output.media_type,
          layers: row.output.layers,
          warnings: row.output.warnings ?? [],
        }
      : null,
    errors: row.errors,
    created_at: row.created_at,
    updated_at: row.updated_at,
    expires_at: row.expires_at,
  };
}
