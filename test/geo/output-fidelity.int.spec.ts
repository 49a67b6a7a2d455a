import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertDataset, checkConvertRequest } from '../../geo/datasets/convert.js';
import { datasetAt, prepareUpload } from '../../geo/datasets/dataset-files.js';
import { driverOptions } from '../../geo/datasets/output-fidelity.js';
import { pyZip, readLayer, refusal, run, tempFolder, vectorFromCsv } from './support.js';

/*
 * What a format forces on the data is said, with the mapping (issue 34, finding 4): Shapefile
 * field names, DateTime as Date, values cut at 254 characters, GeoJSON's WGS 84; creation options
 * are checked against the driver's own list; the download never carries the upload's name.
 */
describe('output fidelity of a conversion', { timeout: 120_000 }, () => {
  const tmp = tempFolder('fidelity');
  const d = (n: string) => path.join(tmp.dir, n);
  let boroughs: string;

  beforeAll(() => {
    // NYC boroughs as nybb_16a has them: long field names, in EPSG:2263 (US feet).
    boroughs = vectorFromCsv(
      d('boroughs.gpkg'),
      [
        'borough_name_long,borough_name_code,surveyed_at,note,wkt',
        `Manhattan,1,2024-01-02T10:11:12,${'x'.repeat(300)},"POLYGON ((980000 190000,1000000 190000,1000000 220000,980000 220000,980000 190000))"`,
        'Brooklyn,3,2024-03-04T05:06:07,short,"POLYGON ((980000 150000,1020000 150000,1020000 190000,980000 190000,980000 150000))"',
      ].join('\n'),
      ['-a_srs', 'EPSG:2263', '-nln', 'boroughs', '-nlt', 'POLYGON'],
    );
  });
  afterAll(() => tmp.remove());

  it('reports the Shapefile field-name mapping, the DateTime stored as a date and the values cut, and the names really are so', async () => {
    const out = d('shp-out');
    const result = await convertDataset(datasetAt(boroughs), { outputFormat: 'ESRI Shapefile' }, out);
    expect(result.warnings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          code: 'field_renamed',
          layer: 'boroughs',
          details: { mapping: { borough_name_long: 'borough_na', borough_name_code: 'borough__1', surveyed_at: 'surveyed_a' } },
          message: expect.stringContaining('borough_name_long → borough_na'),
        }),
        expect.objectContaining({
          code: 'type_changed',
          layer: 'boroughs',
          details: { field: 'surveyed_at', from: 'DateTime', to: 'Date', written_as: 'surveyed_a' },
          message: expect.stringContaining('field surveyed_at is stored as a date'),
        }),
        expect.objectContaining({ code: 'value_truncated', layer: 'boroughs', details: { field: 'note', max_characters: 254 } }),
      ]),
    );
    // One warning per field, not GDAL's generic line as well.
    expect(result.warnings.filter((w) => w.code === 'type_changed')).toHaveLength(1);
    run('unzip', ['-q', '-o', path.join(out, result.filename), '-d', d('shp-unzipped')]);
    const written = readLayer(path.join(d('shp-unzipped'), 'boroughs.shp'));
    expect(written.fields.map((f) => f.name)).toEqual(['borough_na', 'borough__1', 'surveyed_a', 'note']);
    expect(String(written.features[0]!.props.note)).toHaveLength(254);
  });

  it('says a GeoJSON output was reprojected to WGS 84, and a GeoPackage output changes nothing', async () => {
    const geojson = await convertDataset(datasetAt(boroughs), { outputFormat: 'GeoJSON' }, d('gj'));
    expect(geojson.warnings).toEqual([expect.objectContaining({ code: 'crs_changed', layer: 'boroughs', details: { from: 'EPSG:2263', to: 'EPSG:4326' } })]);
    const gpkg = await convertDataset(datasetAt(boroughs), { outputFormat: 'GPKG' }, d('gpkg'));
    expect(gpkg.warnings).toEqual([]);
  });

  it('accepts creation options the driver lists and applies them (CSV as X/Y columns, GeoJSON precision)', async () => {
    const points = vectorFromCsv(d('points.gpkg'), 'name,wkt\nA,"POINT (7.123456789 46.987654321)"\n', ['-a_srs', 'EPSG:4326', '-nln', 'points']);
    const csv = await convertDataset(datasetAt(points), { outputFormat: 'CSV', creationOptions: { layer: { GEOMETRY: 'AS_XY' } } }, d('csv'));
    const text = run('cat', [path.join(d('csv'), csv.filename)]);
    expect(text.split('\n')[0]).toMatch(/^X,Y,name/);
    expect(text.split('\n')[1]).toBe('7.123456789,46.987654321,A');
    const gj = await convertDataset(datasetAt(points), { outputFormat: 'GeoJSON', creationOptions: { layer: { COORDINATE_PRECISION: 3 } } }, d('gj-prec'));
    expect(run('cat', [path.join(d('gj-prec'), gj.filename)])).toContain('[ 7.123, 46.988 ]');
    const gpkg = await convertDataset(
      datasetAt(points),
      { outputFormat: 'GPKG', creationOptions: { layer: { SPATIAL_INDEX: false, FID: 'point_id' } } },
      d('gpkg-opts'),
    );
    const info = run('ogrinfo', ['-so', path.join(d('gpkg-opts'), gpkg.filename), 'points']);
    expect(info).toContain('FID Column = point_id');
    const rtrees = run('ogrinfo', [
      '-ro',
      '-q',
      path.join(d('gpkg-opts'), gpkg.filename),
      '-sql',
      "SELECT count(*) AS n FROM sqlite_master WHERE name LIKE 'rtree_%'",
    ]);
    expect(rtrees).toContain('n (Integer) = 0');
  });

  it('refuses an option the driver does not list, or a value outside its choices, naming what is allowed (400, before any work)', async () => {
    const dataset = { kind: 'vector' as const, layers: ['boroughs'] };
    const unknown = await refusal(
      Promise.resolve().then(() => checkConvertRequest({ outputFormat: 'CSV', creationOptions: { layer: { GEOMETRIE: 'AS_XY' } } }, dataset)),
      'invalid_parameter',
    );
    expect(unknown.message).toMatch(/\(CSV\) has no layer creation option "GEOMETRIE"; it takes .*GEOMETRY/);
    expect(unknown.details).toMatchObject({
      parameter: 'creation_options.layer',
      option: 'GEOMETRIE',
      allowed_options: expect.arrayContaining(['GEOMETRY', 'SEPARATOR']),
    });
    const value = await refusal(
      Promise.resolve().then(() => checkConvertRequest({ outputFormat: 'CSV', creationOptions: { layer: { GEOMETRY: 'AS_SOMETHING' } } }, dataset)),
      'invalid_parameter',
    );
    expect(value.details).toMatchObject({ option: 'GEOMETRY', allowed_values: expect.arrayContaining(['AS_WKT', 'AS_XY', 'AS_XYZ', 'AS_YX']) });
    const path_ = await refusal(
      Promise.resolve().then(() => checkConvertRequest({ outputFormat: 'GML', creationOptions: { dataset: { XSISCHEMAURI: 'file:///etc/passwd' } } }, dataset)),
      'invalid_parameter',
    );
    expect(path_.message).toMatch(/paths and URLs/);
    // The lists come from GDAL itself.
    expect(driverOptions('ESRI Shapefile', 'layer').map((o) => o.name)).toEqual(expect.arrayContaining(['ENCODING', 'SHPT', 'RESIZE']));
  });

  it('never names the download after the upload: a Shapefile from nybb_16a.zip is nybb_16a-shapefile.zip', async () => {
    mkdirSync(d('shp-src'), { recursive: true });
    run('ogr2ogr', ['-f', 'ESRI Shapefile', d('shp-src'), boroughs, '-nln', 'nybb', '-lco', 'ENCODING=UTF-8']);
    const zip = pyZip(
      d('nybb_16a.zip'),
      ['shp', 'shx', 'dbf', 'prj', 'cpg'].map((ext) => ({ name: `nybb.${ext}`, file: path.join(d('shp-src'), `nybb.${ext}`) })),
    );
    const ref = await prepareUpload(zip, 'nybb_16a.zip', d('prepared'), { maxUncompressedBytes: 1e8 });
    const shp = await convertDataset(ref, { outputFormat: 'shp', baseName: 'nybb_16a', avoidFilename: 'nybb_16a.zip' }, d('renamed'));
    expect(shp.filename).toBe('nybb_16a-shapefile.zip');
    const gpkg = await convertDataset(ref, { outputFormat: 'GPKG', baseName: 'nybb_16a', avoidFilename: 'nybb_16a.zip' }, d('kept'));
    expect(gpkg.filename).toBe('nybb_16a.gpkg');
  });
});
