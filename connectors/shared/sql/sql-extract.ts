import { stat } from 'node:fs/promises';
import { openAs } from '../../../geo/gdal/gdal.js';
import type { ExtractOptions, ExtractResult, SyncState } from '../../types.js';

/*
 * How every SQL Source ends an extract: the GeoPackage it wrote, with its size and feature count,
 * and the cursor to keep; or, when an incremental Run finds nothing newer, "unchanged".
 */

/** Nothing newer than the last Run: the rest of the Run is skipped, the cursor stays. */
export const unchangedExtract = (options: ExtractOptions): ExtractResult => ({
  file: '',
  filename: '',
  bytes: 0,
  features: 0,
  sync: options.sync!,
  unchanged: true,
});

/** The written GeoPackage (one layer) as an extract result. */
export async function extractedGeoPackage(file: string, filename: string, sync?: SyncState): Promise<ExtractResult> {
  const bytes = (await stat(file)).size;
  const ds = await openAs('GPKG', file);
  try {
    return { file, filename, bytes, features: await ds.layers.get(0).features.countAsync(), ...(sync ? { sync } : {}) };
  } finally {
    ds.close();
  }
}
