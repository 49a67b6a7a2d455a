import { execFileSync } from 'node:child_process';
import { copyFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { datasetAt } from '../../geo/datasets/dataset-files.js';
import { srsCollections } from '../../geo/gdal/gdal.js';
import { inspectDataset } from '../../geo/datasets/inspect.js';
import { tempFolder, write } from './support.js';

/**
 * gdal-async caches CRS wrappers by a native address that GDAL reuses after a dataset closes;
 * without the collection in geo/gdal/gdal.ts layerSrs, alternating files report each other's CRS.
 * The collection runs only when a read met a stale wrapper (a full one costs a worker 100–300 ms).
 */
describe('CRS of consecutive files', () => {
  const tmp = tempFolder('srs');
  afterAll(() => tmp.remove());

  /** One point (Bern) in a GeoJSON `<name>.geojson`, and as GeoPackages in Swiss LV95 and in Web Mercator. */
  const oneCityTwoCrs = (name: string, lv95File: string, mercatorFile: string) => {
    const src = write(
      path.join(tmp.dir, `${name}.geojson`),
      JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: [7.4, 46.9] } }] }),
    );
    const lv95 = path.join(tmp.dir, lv95File);
    const mercator = path.join(tmp.dir, mercatorFile);
    execFileSync('ogr2ogr', ['-f', 'GPKG', lv95, src, '-t_srs', 'EPSG:2056']);
    execFileSync('ogr2ogr', ['-f', 'GPKG', mercator, src, '-t_srs', 'EPSG:3857']);
    return { lv95, mercator };
  };

  it('reports each file its own CRS across hundreds of alternating opens', async () => {
    const { lv95, mercator } = oneCityTwoCrs('p', 'lv95.gpkg', 'mercator.gpkg');
    const wrong: string[] = [];
    for (let i = 0; i < 200; i++) {
      const [file, want] = i % 2 ? [lv95, 'EPSG:2056'] : [mercator, 'EPSG:3857'];
      const info = await inspectDataset(datasetAt(file));
      if (info.layers[0]!.crs !== want) wrong.push(`${i}: ${info.layers[0]!.crs}`);
    }
    expect(wrong).toEqual([]);
  });

  it('reports each of hundreds of new files its own CRS (no file read twice), collecting only when a wrapper was stale', async () => {
    const { lv95, mercator } = oneCityTwoCrs('n', 'n-lv95.gpkg', 'n-mercator.gpkg');
    const wrong: string[] = [];
    const before = srsCollections.count;
    const reads = 200;
    for (let i = 0; i < reads; i++) {
      const [from, want] = i % 2 ? [lv95, 'EPSG:2056'] : [mercator, 'EPSG:3857'];
      // A copy of its own: another file identity, so the CRS is read from GDAL every time.
      const file = path.join(tmp.dir, `copy-${i}.gpkg`);
      copyFileSync(from, file);
      const info = await inspectDataset(datasetAt(file));
      if (info.layers[0]!.crs !== want) wrong.push(`${i}: ${info.layers[0]!.crs}`);
    }
    expect(wrong).toEqual([]);
    // Collections happened only on stale reads, not before every read as they used to.
    expect(srsCollections.count - before).toBeLessThan(reads);
  });

  it('reads the CRS again when a file is replaced at the same path (CRS read once per file identity)', async () => {
    const src = write(
      path.join(tmp.dir, 'q.geojson'),
      JSON.stringify({ type: 'FeatureCollection', features: [{ type: 'Feature', properties: {}, geometry: { type: 'Point', coordinates: [7.4, 46.9] } }] }),
    );
    const file = path.join(tmp.dir, 'replaced.gpkg');
    for (const [i, want] of ['EPSG:2056', 'EPSG:3857', 'EPSG:2056'].entries()) {
      execFileSync('ogr2ogr', ['-overwrite', '-f', 'GPKG', file, src, '-t_srs', want, '-nln', 'q']);
      for (let read = 0; read < 3; read++) expect((await inspectDataset(datasetAt(file))).layers[0]!.crs, `version ${i}, read ${read}`).toBe(want);
    }
  });
});
