import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { gdal } from '../../geo/gdal/gdal.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest } from '../support/e2e.js';
import { constantGeoTiff, fixtureDir } from '../support/fixtures.js';
import { temporalAddress } from '../support/worker.js';

const it = e2eTest({ worker: true, scopes: ['workspaces:read', 'workspaces:write', 'workspaces:run'] });
const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');

/*
 * Raster creation options through POST /workspaces/{id}/convert (issue 34): a GeoTIFF converted
 * with COMPRESS=DEFLATE and TILED=YES downloads as a file GDAL reads as such; a name or value the
 * GTiff driver does not list is a 400 naming what it takes, before any work.
 */
describe.skipIf(skip)('raster creation options through /api/v1/workspaces', () => {
  const base = fixtureDir();

  it('checks raster creation options against GTiff, applies them, and the download is DEFLATE-compressed and tiled', async ({ upload, get, send }) => {
    const tif = constantGeoTiff(path.join(base, 'dem.tif'), {
      size: [600, 400],
      burn: [1200],
      type: 'Int16',
      srs: 'EPSG:2056',
      ullr: [2600000, 1200400, 2600600, 1200000],
    });
    const created = await upload(tif);
    expect(created.statusCode, created.body).toBe(201);
    const ws = created.json();
    const url = `/api/v1/workspaces/${ws.id}/convert`;
    const name = await send('POST', url, { output_format: 'GTiff', creation_options: { dataset: { COMPRES: 'DEFLATE' } } });
    expect(name.statusCode).toBe(400);
    expect(name.json().error).toMatchObject({
      code: 'invalid_parameter',
      message: expect.stringContaining('has no dataset creation option "COMPRES"'),
      details: { option: 'COMPRES', allowed_options: expect.arrayContaining(['COMPRESS', 'TILED', 'BLOCKXSIZE']) },
    });
    const value = await send('POST', url, { output_format: 'GTiff', creation_options: { dataset: { COMPRESS: 'ZIPPY' } } });
    expect(value.statusCode).toBe(400);
    expect(value.json().error).toMatchObject({
      code: 'invalid_parameter',
      details: { option: 'COMPRESS', allowed_values: expect.arrayContaining(['NONE', 'LZW', 'DEFLATE']) },
    });
    const layer = await send('POST', url, { output_format: 'GTiff', creation_options: { layer: { COMPRESS: 'DEFLATE' } } });
    expect(layer.statusCode).toBe(400);
    expect(layer.json().error.message).toMatch(/raster format, which has no layers/);
    // Nothing was converted by the refusals.
    expect((await get(`/api/v1/workspaces/${ws.id}`)).json().status).toBe('inspected');

    const done = await send('POST', url, { output_format: 'GTiff', creation_options: { dataset: { COMPRESS: 'DEFLATE', TILED: 'YES' } } });
    expect(done.statusCode, done.body).toBe(200);
    const download = await get(`/api/v1/workspaces/${ws.id}/download`);
    expect(download.statusCode).toBe(200);
    const file = path.join(base, 'downloaded.tif');
    writeFileSync(file, download.rawPayload);
    const ds = gdal.open(file);
    try {
      expect(ds.getMetadata('IMAGE_STRUCTURE').COMPRESSION).toBe('DEFLATE');
      const band = ds.bands.get(1);
      expect([band.blockSize.x, band.blockSize.y]).toEqual([256, 256]);
      expect([ds.rasterSize.x, ds.rasterSize.y]).toEqual([600, 400]);
      expect(band.pixels.get(300, 200)).toBe(1200);
    } finally {
      ds.close();
    }
  });
});
