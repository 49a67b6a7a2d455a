import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { crsAssigned } from '../crs.js';
import { gdal, openDataset, type DatasetRef } from '../gdal/gdal.js';
import { stemOf } from './file-names.js';

/*
 * A loader that copies a dataset into a database (ogr2ogr into PostGIS, MySQL …) reads the CRS
 * from the file. A CRS that comes from outside the file — source_crs on a Job's source_resource,
 * the WGS 84 convention of a CSV's lon/lat columns — would be lost there (SRID 0), so such a
 * dataset is handed over as a GeoPackage that states it. Anything else passes as it is.
 */
export async function withCrsInFile(ref: DatasetRef, dir: string): Promise<DatasetRef> {
  const ds = await openDataset(ref);
  try {
    const plan: { name: string; assign: boolean }[] = [];
    ds.layers.forEach((layer) => {
      plan.push({ name: layer.name, assign: crsAssigned(layer, ref) });
    });
    if (!plan.some((p) => p.assign)) return ref;
    await mkdir(dir, { recursive: true });
    const gpkg = path.join(dir, `${stemOf(ref.path)}.gpkg`);
    for (const [i, layer] of plan.entries()) {
      const args = ['-f', 'GPKG', ...(i > 0 ? ['-update'] : []), ...(layer.assign ? ['-a_srs', ref.assumedCrs!] : []), layer.name];
      (await gdal.vectorTranslateAsync(gpkg, ds, args)).close();
    }
    return { path: gpkg, openOptions: [], warnings: ref.warnings };
  } finally {
    ds.close();
  }
}
