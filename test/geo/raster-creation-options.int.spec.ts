import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkConvertRequest } from '../../geo/datasets/convert.js';
import { convertDataset } from '../../geo/isolation/index.js';
import { datasetAt } from '../../geo/datasets/dataset-files.js';
import { gdal } from '../../geo/gdal/gdal.js';
import { refusal, tempFolder } from './support.js';

/*
 * Raster creation options (issue 34): gdal_translate's -co, checked against the GTiff driver's
 * own list, really applied (GDAL reads the file back as DEFLATE-compressed and tiled), and a bad
 * option or value refused before any work, naming what is allowed.
 */
describe('raster creation options', { timeout: 120_000 }, () => {
  const tmp = tempFolder('raster-co');
  const d = (n: string) => path.join(tmp.dir, n);
  let tif: string;

  beforeAll(() => {
    // 600 × 400 pixels of a gradient (compressible, and more than one 256-pixel tile each way).
    tif = d('dem.tif');
    const ds = gdal.open(tif, 'w', 'GTiff', 600, 400, 1, gdal.GDT_Int16);
    ds.srs = gdal.SpatialReference.fromUserInput('EPSG:2056');
    ds.geoTransform = [2_600_000, 1, 0, 1_200_400, 0, -1];
    const values = new Int16Array(600 * 400);
    for (let i = 0; i < values.length; i++) values[i] = 400 + (i % 600) + Math.floor(i / 600);
    ds.bands.get(1).pixels.write(0, 0, 600, 400, values);
    ds.close();
  });
  afterAll(() => tmp.remove());

  const structure = (file: string) => {
    const ds = gdal.open(file);
    try {
      const band = ds.bands.get(1);
      const md = ds.getMetadata('IMAGE_STRUCTURE') as Record<string, string>;
      return {
        compression: md.COMPRESSION ?? null,
        block: [band.blockSize.x, band.blockSize.y],
        size: [ds.rasterSize.x, ds.rasterSize.y],
        pixel: band.pixels.get(10, 10),
      };
    } finally {
      ds.close();
    }
  };

  it('a GTiff convert with COMPRESS=DEFLATE and TILED=YES writes a DEFLATE-compressed, tiled file of the same pixels', async () => {
    const plain = await convertDataset(datasetAt(tif), { outputFormat: 'GTiff' }, d('plain'));
    const before = structure(path.join(d('plain'), plain.filename));
    expect(before.compression).toBeNull();
    expect(before.block[1]).not.toBe(256);
    const result = await convertDataset(
      datasetAt(tif),
      { outputFormat: 'GTiff', creationOptions: { dataset: { COMPRESS: 'DEFLATE', TILED: 'YES' } } },
      d('deflate'),
    );
    const after = structure(path.join(d('deflate'), result.filename));
    expect(after).toEqual({ compression: 'DEFLATE', block: [256, 256], size: [600, 400], pixel: before.pixel });
    expect(result.size).toBeLessThan(plain.size);
    // Booleans are YES/NO, names case-insensitive.
    const lower = await convertDataset(datasetAt(tif), { outputFormat: 'gtiff', creationOptions: { dataset: { compress: 'lzw', tiled: true } } }, d('lzw'));
    expect(structure(path.join(d('lzw'), lower.filename))).toMatchObject({ compression: 'LZW', block: [256, 256] });
  });

  it('refuses an option GTiff does not list, a value outside its choices, or layer options, naming what is allowed (400, before any work)', async () => {
    const raster = { kind: 'raster' as const, layers: [] };
    const unknown = await refusal(
      Promise.resolve().then(() => checkConvertRequest({ outputFormat: 'GTiff', creationOptions: { dataset: { COMPRES: 'DEFLATE' } } }, raster)),
      'invalid_parameter',
    );
    expect(unknown.message).toMatch(/\(GTiff\) has no dataset creation option "COMPRES"; it takes .*COMPRESS/);
    expect(unknown.details).toMatchObject({
      parameter: 'creation_options.dataset',
      option: 'COMPRES',
      allowed_options: expect.arrayContaining(['COMPRESS', 'TILED', 'BLOCKXSIZE', 'PREDICTOR']),
    });
    const value = await refusal(
      convertDataset(datasetAt(tif), { outputFormat: 'GTiff', creationOptions: { dataset: { COMPRESS: 'ZIPPY' } } }, d('bad-value')),
      'invalid_parameter',
    );
    expect(value.message).toMatch(/COMPRESS must be one of .*DEFLATE/);
    expect(value.details).toMatchObject({ option: 'COMPRESS', allowed_values: expect.arrayContaining(['NONE', 'LZW', 'DEFLATE']) });
    const yesNo = await refusal(
      Promise.resolve().then(() => checkConvertRequest({ outputFormat: 'GTiff', creationOptions: { dataset: { TILED: 'maybe' } } }, raster)),
      'invalid_parameter',
    );
    expect(yesNo.details).toMatchObject({ option: 'TILED', allowed_values: ['YES', 'NO'] });
    const layer = await refusal(
      Promise.resolve().then(() => checkConvertRequest({ outputFormat: 'GTiff', creationOptions: { layer: { COMPRESS: 'DEFLATE' } } }, raster)),
      'invalid_parameter',
    );
    expect(layer.message).toMatch(/raster format, which has no layers; use creation_options.dataset/);
  });
});
