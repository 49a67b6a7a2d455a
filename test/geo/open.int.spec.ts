import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { datasetAt } from '../../geo/datasets/dataset-files.js';
import { inspectDataset } from '../../geo/isolation/index.js';
import { refusal, tempFolder, write } from './support.js';

describe('opening uploads', () => {
  const tmp = tempFolder('open');
  afterAll(() => tmp.remove());
  const src = () =>
    write(
      path.join(tmp.dir, 'src.geojson'),
      JSON.stringify({
        type: 'FeatureCollection',
        features: [{ type: 'Feature', properties: { name: 'a' }, geometry: { type: 'Point', coordinates: [7, 46] } }],
      }),
    );

  it('picks the same driver every time for formats two drivers can read (KML, GeoPackage)', async () => {
    const kml = path.join(tmp.dir, 'a.kml');
    const gpkg = path.join(tmp.dir, 'a.gpkg');
    execFileSync('ogr2ogr', ['-f', 'KML', kml, src()]);
    execFileSync('ogr2ogr', ['-f', 'GPKG', gpkg, src()]);
    const seen = new Set<string>();
    // A GeoPackage opens in this process, a KML in a sandboxed host: the same choice each time either way.
    for (let i = 0; i < 30; i++) {
      for (const file of [kml, gpkg]) seen.add(`${path.extname(file)}:${(await inspectDataset(datasetAt(file))).driver}`);
    }
    expect([...seen].sort()).toEqual(['.gpkg:GPKG', '.kml:LIBKML']);
  });

  it('refuses VRT files, which can point at any file or URL', async () => {
    const vrt = write(
      path.join(tmp.dir, 'evil.vrt'),
      '<OGRVRTDataSource><OGRVRTLayer name="x"><SrcDataSource>/etc/passwd</SrcDataSource></OGRVRTLayer></OGRVRTDataSource>',
    );
    const error = await refusal(inspectDataset(datasetAt(vrt)), 'invalid_source');
    expect(error.message).not.toContain('/etc/passwd');
  });
});
