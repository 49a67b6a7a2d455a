import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { crsAssigned } from '../crs.js';
import { openDataset, type DatasetRef } from '../gdal/gdal.js';
import { inputArgs, readableOf, runGdalWrite } from '../gdal/translate.js';
import { stemOf } from './file-names.js';

/*
 * A loader that copies a dataset into a database (ogr2ogr into PostGIS, MySQL …) reads the CRS
 * from the file. A CRS that comes from outside the file — source_crs on a Job's source_resource,
 * the WGS 84 convention of a CSV's lon/lat columns — would be lost there (SRID 0), so such a
 * dataset is handed over as a GeoPackage that states it. Anything else passes as it is.
 *
 * The copy is written by ogr2ogr in a child process, as every GDAL write is (geo/gdal/translate.ts
 * says why): a GeoPackage's spatial index is built as it closes, seconds for a large layer that
 * must not be spent on the worker's event loop. Only the plan is made in this process.
 */
export async function withCrsInFile(ref: DatasetRef, dir: string): Promise<DatasetRef> {
  const ds = await openDataset(ref);
  const plan: { name: string; assign: boolean }[] = [];
  try {
    ds.layers.forEach((layer) => {
      plan.push({ name: layer.name, assign: crsAssigned(layer, ref) });
    });
  } finally {
    ds.close();
  }
  if (!plan.some((p) => p.assign)) return ref;
  await mkdir(dir, { recursive: true });
  const gpkg = path.join(dir, `${stemOf(ref.path)}.gpkg`);
  const readable = [await readableOf(ref)];
  for (const [i, layer] of plan.entries()) {
    const args = ['-f', 'GPKG', ...(i > 0 ? ['-update'] : []), ...(layer.assign ? ['-a_srs', ref.assumedCrs!] : [])];
    await runGdalWrite(
      'ogr2ogr',
      [...args, gpkg, ...inputArgs(ref), layer.name],
      { readable, writable: [dir], output: gpkg },
      { what: 'The copy that states the CRS' },
    );
  }
  return { path: gpkg, openOptions: [], warnings: ref.warnings };
}
