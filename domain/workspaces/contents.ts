import type { Operation } from '../operations.js';

/*
 * What a Workspace holds, as its events record it and its read model shows it: the upload's
 * inspection, the pipeline, conversion requests and outputs, deliveries. The Workspace's decider
 * is domain/workspaces/workspace.ts.
 */

/** What inspection found in the upload; stored once, the upload never changes. */
export interface Inspection {
  dataset_type: 'vector' | 'raster';
  format: string;
  driver: string;
  layers: {
    name: string;
    geometry_type: string | null;
    has_geometry: boolean;
    feature_count: number | null;
    crs: string | null;
    /** Code, name and unit (absent in Workspaces inspected before it was kept). */
    crs_info?: { code: string | null; name: string | null; unit: string | null; geographic: boolean } | null;
    fields: { name: string; type: string }[];
  }[];
  raster: Record<string, unknown> | null;
  crs: string | null;
  warnings: string[];
}

export interface Pipeline {
  layers: string[];
  operations: Operation[];
  sql: string | null;
  python: { script: string; filename: string } | null;
}
export const emptyPipeline: Pipeline = { layers: [], operations: [], sql: null, python: null };

export interface ConvertRequest {
  output_format: string;
  target_crs: string | null;
  layers: string[];
  /** GDAL creation options (absent in conversions recorded before they were accepted); the engine's formats take theirs in either list. */
  creation_options?: { dataset?: Record<string, string | number | boolean>; layer?: Record<string, string | number | boolean> } | null;
  /** A PROJ pipeline for the reprojection to target_crs (absent in conversions recorded before). */
  transformation?: string | null;
}

/** What processing changed or doubted without failing (geo/warnings.ts ProcessingWarning). */
export interface OutputWarning {
  code: string;
  message: string;
  layer?: string;
  details?: Record<string, unknown>;
}

export interface ConvertOutput {
  format: string;
  filename: string;
  size: number;
  media_type: string | null;
  layers: string[];
  /** Where the file is, relative to the Workspace folder; never shown to clients. */
  file: string;
  /** The pipeline's and the format's warnings (absent in outputs recorded before they were kept). */
  warnings?: OutputWarning[];
}

/** Where the data came from: an upload, or a saved Source with its selector. */
export type WorkspaceOrigin = { kind: 'upload' } | { kind: 'source'; source_id: string; source_type: string; source_resource: Record<string, unknown> | null };

/** Public metadata of a delivery of the converted output (no secrets, no server paths). */
export interface WorkspaceDelivery {
  delivery_id: string;
  destination_id: string;
  destination_type: string;
  target: Record<string, unknown>;
  rows_written: number | null;
  bytes_written: number | null;
  duration_ms: number;
}
