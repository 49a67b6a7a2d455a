import { z } from 'zod';
import { validateOperations } from '../geo/operations/catalog.js';
import { operationShape } from '../domain/operations.js';

export const timestamp = z.string().describe('ISO 8601 UTC');

export { nonBlank } from '../platform/text.js';
export const idParam = z.object({ id: z.string().min(1).max(100) });

/**
 * An ordered list of operations, checked against the transformation catalog: an unknown type or
 * a bad parameter is a 422 naming the exact field (operations.1.distance).
 */
export const operationList = z
  .array(operationShape)
  .max(200)
  .transform((ops, ctx) => {
    const result = validateOperations(ops);
    if (result.ok) return result.operations;
    for (const issue of result.issues) ctx.addIssue({ code: 'custom', path: issue.path.slice(1), message: issue.message });
    return z.NEVER;
  });

/** A warning of processing that did not fail (geo/warnings.ts): an operation's or a format's. */
export const processingWarning = z
  .object({
    code: z
      .string()
      .describe(
        'Stable: units_degrees, geometry_repaired, geometry_invalid, geometry_empty, field_renamed, type_changed, value_truncated, geometry_split, crs_operation, crs_changed, crs_outside_area, format_warning, …',
      ),
    message: z.string(),
    layer: z.string().optional(),
    details: z.record(z.string(), z.unknown()).optional().describe('What a client needs to act: the field mapping, the rows concerned'),
  })
  .meta({ id: 'ProcessingWarning' });

/** GDAL creation options for an output format (checked against the driver's own lists). */
export const creationOptions = z
  .object({
    dataset: z
      .record(z.string().min(1).max(100), z.union([z.string().max(1000), z.number(), z.boolean()]))
      .optional()
      .describe('Dataset creation options (ogr2ogr -dsco, gdal_translate -co), e.g. {"SPATIAL_INDEX": "NO"}'),
    layer: z
      .record(z.string().min(1).max(100), z.union([z.string().max(1000), z.number(), z.boolean()]))
      .optional()
      .describe('Layer creation options (ogr2ogr -lco), e.g. {"GEOMETRY": "AS_XY"} for CSV, {"COORDINATE_PRECISION": 6} for GeoJSON'),
  })
  .strict()
  .meta({ id: 'CreationOptions' });

/** A CRS as shown beside its label: what a user needs to know before choosing units. */
export const crsInfo = z
  .object({
    code: z.string().nullable().describe('AUTHORITY:CODE, e.g. EPSG:2263; null for a CRS without one'),
    name: z.string().nullable().describe('e.g. NAD83 / New York Long Island (ftUS)'),
    unit: z.string().nullable().describe('Unit of the coordinates: degree, metre, US survey foot, …'),
    geographic: z.boolean().describe('Longitude/latitude: distances in source units are degrees'),
  })
  .meta({ id: 'CrsInfo' });
