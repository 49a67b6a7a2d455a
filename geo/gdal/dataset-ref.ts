/*
 * The description of a dataset that GDAL opens, and how to read it, shared by geo/datasets and
 * geo/formats as types alone (no module here loads GDAL).
 */

/**
 * What GDAL opens for a Workspace: a path on the server plus the open options it needs.
 * Internal only: it holds a filesystem path, so it is stored server-side and never returned by
 * the API (inspect, preview and convert results carry no paths).
 */
export interface DatasetRef {
  /** File or folder GDAL opens (a folder for several shapefiles side by side, or a .gdb). */
  path: string;
  /** Driver open options (`KEY=VALUE`), e.g. the CSV geometry column guesses. */
  openOptions: string[];
  /** Driver that the open options belong to (only set with openOptions). */
  driver?: string;
  /**
   * CRS assumed for layers that carry none: coordinates in CSV lon/lat or WKT columns are WGS 84
   * by convention, and CSV has no place to say so.
   */
  assumedCrs?: string;
  /** assumedCrs replaces the CRS the file declares (source_crs set on upload or import). */
  crsOverride?: boolean;
  /** Remarks about what was chosen (several datasets in one ZIP, …), for the Workspace warnings. */
  warnings: string[];
  /** The driver of the uploaded file when GDAL reads a copy of it (a one-column CSV). */
  uploadDriver?: string;
  /** A (Geo)Parquet upload, which GDAL reads through a GeoPackage copy (geo/formats/geoparquet.ts). */
  parquet?: ParquetOrigin;
}

/** What the Parquet footers say of the one layer a (Geo)Parquet file or folder holds. */
export interface ParquetInspection {
  layer: {
    name: string;
    feature_count: number;
    fields: { name: string; type: string }[];
    geometry_type: string | null;
    has_geometry: boolean;
    crs: string | null;
    crs_projjson?: Record<string, unknown> | null;
    extent: [number, number, number, number] | null;
  };
  geoparquet_version: string | null;
  encoding: string | null;
  warnings: string[];
  files: number;
}

/** The parts of a DatasetRef that a GeoParquet input adds: where the Parquet is and what it said. */
export interface ParquetOrigin {
  paths: string[];
  inspection: ParquetInspection;
}

/**
 * How to read a dataset besides what it says itself (geo/datasets/read-options.ts takes them from
 * a request): the CRS of its coordinates, the CSV columns of X, Y and Z, or the Parquet column
 * holding WKB or WKT.
 */
export interface ReadOptions {
  sourceCrs?: string;
  xColumn?: string;
  yColumn?: string;
  zColumn?: string;
  /** Parquet without GeoParquet metadata: the column holding WKB or WKT geometry. */
  geometryColumn?: string;
}
