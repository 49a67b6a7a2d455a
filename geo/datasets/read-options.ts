import { DomainError } from '../../domain/errors.js';
import { crsDefinition } from '../gdal/labels.js';
import { parseCrsInput } from '../crs.js';
import type { ReadOptions } from '../gdal/dataset-ref.js';

/*
 * How to read a dataset, besides what it says itself: the CRS its coordinates are in
 * (source_crs, replacing the file's own or filling its absence) and, for CSV and plain Parquet, the
 * columns holding X, Y and Z, or (Parquet) the one holding WKB or WKT. Given as form fields on upload and inside source_resource on a Workspace import or
 * a Job (docs/api-conventions.md, "Reading options"), the same names everywhere.
 */

export type { ReadOptions };

export const READ_OPTION_KEYS = ['source_crs', 'x_column', 'y_column', 'z_column', 'geometry_column'] as const;

const invalidParameter = (message: string, parameter: string) => new DomainError('invalid_parameter', message, { parameter });

/**
 * Takes the reading options out of an object (a source_resource, the form fields of an upload),
 * checked, and answers the rest: what the connector's own selector schema checks.
 */
export function splitReadOptions(given: Record<string, unknown>, at: string): { options: ReadOptions; rest: Record<string, unknown> } {
  const rest: Record<string, unknown> = {};
  const raw: Record<string, string> = {};
  for (const [key, value] of Object.entries(given)) {
    if (!(READ_OPTION_KEYS as readonly string[]).includes(key)) {
      rest[key] = value;
      continue;
    }
    if (value === null || value === undefined || value === '') continue;
    if (typeof value !== 'string' || value.length > (key === 'source_crs' ? 20_000 : 255)) {
      throw new DomainError('validation_error', `${at}.${key} must be a string`, { issues: [{ path: `${at}.${key}`, message: 'must be a string' }] });
    }
    raw[key] = value;
  }
  const options: ReadOptions = {};
  if (raw.source_crs) options.sourceCrs = crsDefinition(parseCrsInput(raw.source_crs, `${at}.source_crs`));
  if (raw.x_column || raw.y_column) {
    if (!raw.x_column || !raw.y_column) throw invalidParameter(`${at}: x_column and y_column go together`, `${at}.${raw.x_column ? 'y_column' : 'x_column'}`);
    options.xColumn = raw.x_column.trim();
    options.yColumn = raw.y_column.trim();
  }
  if (raw.z_column) {
    if (!options.xColumn) throw invalidParameter(`${at}.z_column needs x_column and y_column`, `${at}.z_column`);
    options.zColumn = raw.z_column.trim();
  }
  if (raw.geometry_column) {
    if (options.xColumn) throw invalidParameter(`${at}: geometry_column or x_column and y_column, not both`, `${at}.geometry_column`);
    options.geometryColumn = raw.geometry_column.trim();
  }
  return { options, rest };
}

/** The options back as the snake_case keys a source_resource stores. */
export function readOptionsRecord(options: ReadOptions): Record<string, string> {
  return {
    ...(options.sourceCrs ? { source_crs: options.sourceCrs } : {}),
    ...(options.xColumn ? { x_column: options.xColumn } : {}),
    ...(options.yColumn ? { y_column: options.yColumn } : {}),
    ...(options.zColumn ? { z_column: options.zColumn } : {}),
    ...(options.geometryColumn ? { geometry_column: options.geometryColumn } : {}),
  };
}

export const hasReadOptions = (o: ReadOptions | undefined): o is ReadOptions => !!o && Object.keys(o).length > 0;

/**
 * After inspection: coordinate columns that gave no geometry do not exist (GDAL reads such a CSV
 * as a plain table); say so with the columns there are.
 */
export function checkReadColumns(options: ReadOptions | undefined, layers: { name: string; has_geometry: boolean; fields: { name: string }[] }[]): void {
  if (!options?.xColumn) return;
  const flat = layers.find((l) => !l.has_geometry);
  if (!flat) return;
  throw new DomainError(
    'invalid_parameter',
    `The CSV has no numeric columns ${[options.xColumn, options.yColumn, options.zColumn].filter(Boolean).join(', ')} to read coordinates from; its columns are: ${flat.fields.map((f) => f.name).join(', ')}`,
    { parameter: 'x_column', columns: flat.fields.map((f) => f.name) },
  );
}
