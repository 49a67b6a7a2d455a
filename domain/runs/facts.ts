import type { StepName } from '../jobs/definition.js';

/*
 * What a Run's steps report: counts, what each read and wrote, warnings, progress while it
 * works, and the error it failed with. Recorded by the Run's events (domain/runs/run.ts).
 */

export interface RunStats {
  features_read: number | null;
  features_written: number | null;
  bytes_read: number | null;
  bytes_written: number | null;
}
export const emptyStats: RunStats = { features_read: null, features_written: null, bytes_read: null, bytes_written: null };

export interface RunError {
  code: string;
  message: string;
  step: StepName | null;
  retryable: boolean;
  /** Classified cause of a remote failure (unreachable, authentication_failed …), when there is one. */
  reason?: string;
}

/** One layer as a step read or wrote it. */
export interface LayerFacts {
  name: string;
  /** WKT spelling (POINT, MULTIPOLYGON …); null without geometry. */
  geometry_type: string | null;
  /** EPSG:4326 or the CRS's name; null when unknown or without geometry. */
  crs: string | null;
  /** The CRS's code, name and unit, when the step read the layer (absent in older Runs). */
  crs_info?: { code: string | null; name: string | null; unit: string | null; geographic: boolean } | null;
  features: number | null;
}

/** Data a step read or wrote: where (a Source or Destination and the place in it, or the Run's own file) and what. */
export interface DataFacts {
  /** The Source or Destination, by id and type (its settings are on the connection, never here). */
  connection?: { id: string; type: string };
  /** The table, object key, layer, URL without query … as the connector names it: public, never a secret. */
  location?: Record<string, unknown>;
  filename?: string;
  /** GDAL driver short name (GPKG, GeoJSON …). */
  format?: string | null;
  bytes?: number | null;
  features?: number | null;
  layers?: LayerFacts[];
}

/** What one step of a Run read and wrote: the Run's log (its warnings are the Run's `warnings`, each naming its step). */
export interface StepLog {
  read?: DataFacts;
  wrote?: DataFacts;
  /** What a Python step printed, each truncated. */
  output?: { stdout: string; stderr: string };
}

/** What a step changed or doubted without failing (a field a format renamed, a repaired geometry). */
export interface RunWarning {
  step: StepName;
  code: string;
  message: string;
  layer?: string;
  details?: Record<string, unknown>;
}

/** How far a running step is: what it has written so far, and the share done when its tool says. */
export interface StepProgress {
  bytes_written?: number;
  /** What bytes_written is heading for, when known up front (a download's declared size). */
  bytes_total?: number;
  features_written?: number;
  /** 0–100. */
  percent?: number;
}
