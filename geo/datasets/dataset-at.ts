import type { DatasetRef } from '../gdal/dataset-ref.js';
import { extensionOf } from './file-names.js';

/* The DatasetRef of a file on disk: CSV and TSV read with open options that find WKT or lon/lat columns. */

/** GDAL CSV open options that turn WKT or lon/lat columns into a geometry. */
export const csvOpenOptions = [
  'GEOM_POSSIBLE_NAMES=wkt,geom,geometry,the_geom',
  'X_POSSIBLE_NAMES=lon,long,longitude,x,lng',
  'Y_POSSIBLE_NAMES=lat,latitude,y',
  'KEEP_GEOM_COLUMNS=NO',
  'AUTODETECT_TYPE=YES',
  'EMPTY_STRING_AS_NULL=YES',
];

/** A dataset already on disk (a pipeline output, a file from an import). */
export function datasetAt(file: string): DatasetRef {
  return refFor(file);
}

export function refFor(file: string): DatasetRef {
  const ext = extensionOf(file);
  if (ext === 'csv' || ext === 'tsv') {
    return { path: file, openOptions: [...csvOpenOptions], driver: 'CSV', assumedCrs: 'EPSG:4326', warnings: [] };
  }
  return { path: file, openOptions: [], warnings: [] };
}
