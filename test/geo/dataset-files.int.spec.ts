import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvOpenOptions, datasetAtUpload, prepareUpload, safeFilename, withoutSecondName } from '../../geo/datasets/dataset-files.js';
import { openDataset } from '../../geo/gdal/gdal.js';
import { dataPreview, inspectDataset } from '../../geo/isolation/index.js';
import { readZipDirectory, writeZip } from '../../geo/datasets/zip.js';
import { pyZip, refusal, run, tempFolder, vectorFromCsv, write } from './support.js';

const MB = 1024 * 1024;
const limits = { maxUncompressedBytes: 10 * MB };

describe('prepareUpload', { timeout: 60_000 }, () => {
  const tmp = tempFolder('files');
  const src = path.join(tmp.dir, 'src');
  let shpDir: string;

  beforeAll(() => {
    shpDir = path.join(src, 'shp');
    vectorFromCsv(path.join(shpDir, 'roads.shp'), 'id,name,wkt\n1,Hauptstraße,"LINESTRING (2600000 1200000,2600100 1200100)"\n', [
      '-a_srs',
      'EPSG:2056',
      '-lco',
      'ENCODING=UTF-8',
    ]);
    vectorFromCsv(path.join(shpDir, 'stops.shp'), 'id,wkt\n1,"POINT (2600000 1200000)"\n', ['-a_srs', 'EPSG:2056']);
  });
  afterAll(() => tmp.remove());

  const shapefileParts = (stem: string) =>
    readdirSync(shpDir)
      .filter((f) => f.startsWith(`${stem}.`))
      .map((f) => ({ path: path.join(shpDir, f), name: f }));

  it('keeps one name for an upload the dataset holds as it came, and both for a ZIP', async () => {
    const upload = path.join(src, 'upload-linked.bin');
    writeFileSync(upload, '{"type":"FeatureCollection","features":[]}');
    const ref = await prepareUpload(upload, 'empty.geojson', path.join(tmp.dir, 'linked'), limits);
    const kept = await withoutSecondName(upload, ref);
    expect(kept).toBe(ref.path);
    expect(existsSync(upload)).toBe(false);
    expect(readFileSync(kept, 'utf8')).toContain('FeatureCollection');
    expect(await withoutSecondName(kept, ref)).toBe(kept); // the same name twice: nothing removed
    expect(existsSync(kept)).toBe(true);

    const zip = path.join(src, 'upload-zip.bin');
    await writeZip(zip, shapefileParts('stops'));
    const unzipped = await prepareUpload(zip, 'stops.zip', path.join(tmp.dir, 'zipped'), limits);
    expect(await withoutSecondName(zip, unzipped)).toBe(zip);
    expect(existsSync(zip)).toBe(true);
    expect(await datasetAtUpload(zip, unzipped)).toBe(unzipped);

    // A Workspace keeps its upload's name (stored already) and reads the dataset from it.
    const original = path.join(tmp.dir, 'ws-original', 'places.geojson');
    write(original, '{"type":"FeatureCollection","features":[]}');
    const prepared = await prepareUpload(original, 'places.geojson', path.join(tmp.dir, 'ws-dataset'), limits);
    const at = await datasetAtUpload(original, prepared);
    expect(at).toEqual({ ...prepared, path: original });
    expect(existsSync(prepared.path)).toBe(false);
    expect((await inspectDataset(at)).driver).toBe('GeoJSON');
    // Another name (a connector's download.bin): the dataset keeps its own name and driver choice.
    const bin = path.join(tmp.dir, 'imported', 'download.bin');
    write(bin, '{"type":"FeatureCollection","features":[]}');
    const named = await prepareUpload(bin, 'places.geojson', path.join(tmp.dir, 'imported-dataset'), limits);
    expect(await datasetAtUpload(bin, named)).toBe(named);
  });

  it('extracts a shapefile ZIP (written by our own zip writer) and opens the .shp', async () => {
    const zip = path.join(src, 'upload-1.bin');
    await writeZip(zip, shapefileParts('roads'));
    const ref = await prepareUpload(zip, 'Roads export.zip', path.join(tmp.dir, 'ws1'), limits);
    expect(path.basename(ref.path)).toBe('roads.shp');
    expect(ref.openOptions).toEqual([]);
    expect(ref.warnings).toEqual([]);
    const ds = await openDataset(ref);
    try {
      expect(ds.driver.description).toBe('ESRI Shapefile');
      const f = ds.layers.get(0).features.first();
      expect(f.fields.get('name')).toBe('Hauptstraße');
    } finally {
      ds.close();
    }
    // `unzip` agrees the archive is valid (an independent reader).
    expect(run('unzip', ['-t', zip])).toMatch(/No errors detected/);
  });

  it('opens several shapefiles of one folder together, one layer each', async () => {
    const zip = path.join(src, 'upload-2.bin');
    pyZip(
      zip,
      [...shapefileParts('roads'), ...shapefileParts('stops')].map((p) => ({ name: `data/${p.name}`, file: p.path })),
    );
    const ref = await prepareUpload(zip, 'two.zip', path.join(tmp.dir, 'ws2'), limits);
    expect(path.basename(ref.path)).toBe('data');
    const ds = await openDataset(ref);
    try {
      const names: string[] = [];
      ds.layers.forEach((l) => {
        names.push(l.name);
      });
      expect(names.sort()).toEqual(['roads', 'stops']);
    } finally {
      ds.close();
    }
  });

  it('warns about a shapefile without .prj and about ignored datasets', async () => {
    const zip = path.join(src, 'upload-3.bin');
    const parts = shapefileParts('stops').filter((p) => !p.name.endsWith('.prj'));
    pyZip(zip, [
      ...parts.map((p) => ({ name: p.name, file: p.path })),
      { name: 'extra/other.geojson', text: '{"type":"FeatureCollection","features":[]}' },
      { name: '__MACOSX/._stops.shp', text: 'junk' },
    ]);
    const ref = await prepareUpload(zip, 'stops.zip', path.join(tmp.dir, 'ws3'), limits);
    expect(path.basename(ref.path)).toBe('stops.shp');
    expect(ref.warnings.join('\n')).toMatch(/no \.prj/);
    expect(ref.warnings.join('\n')).toMatch(/ignored: extra\/other\.geojson/);
  });

  it('prefers a GeoPackage inside a ZIP', async () => {
    const gpkg = vectorFromCsv(path.join(src, 'inner.gpkg'), 'id,wkt\n1,"POINT (1 2)"\n', ['-a_srs', 'EPSG:4326']);
    const zip = path.join(src, 'upload-4.bin');
    pyZip(zip, [
      { name: 'readme.txt', text: 'hello' },
      { name: 'pkg/inner.gpkg', file: gpkg },
    ]);
    const ref = await prepareUpload(zip, 'pkg.zip', path.join(tmp.dir, 'ws4'), limits);
    expect(ref.path.endsWith(path.join('pkg', 'inner.gpkg'))).toBe(true);
  });

  it('refuses entries that climb out, absolute names and symlinks, writing nothing outside', async () => {
    const ws = path.join(tmp.dir, 'ws5');
    const cases: { name: string; entry: { name: string; text?: string; symlinkTo?: string } }[] = [
      { name: 'dotdot', entry: { name: '../../escaped.txt', text: 'x' } },
      { name: 'absolute', entry: { name: '/tmp/escaped-abs.txt', text: 'x' } },
      { name: 'backslash', entry: { name: '..\\escaped-win.txt', text: 'x' } },
      { name: 'symlink', entry: { name: 'link.shp', symlinkTo: '/etc/passwd' } },
    ];
    for (const c of cases) {
      const zip = path.join(src, `evil-${c.name}.zip`);
      pyZip(zip, [{ name: 'ok.geojson', text: '{"type":"FeatureCollection","features":[]}' }, c.entry]);
      const err = await refusal(prepareUpload(zip, 'evil.zip', path.join(ws, c.name), limits));
      expect(err.code).toBe('invalid_source');
      expect(err.message).not.toContain(tmp.dir);
    }
    expect(existsSync(path.join(tmp.dir, 'escaped.txt'))).toBe(false);
    expect(existsSync(path.join(ws, 'escaped.txt'))).toBe(false);
    expect(existsSync('/tmp/escaped-abs.txt')).toBe(false);
  });

  it('refuses a zip bomb by its declared size and by the bytes it really inflates to', async () => {
    const zeros = path.join(src, 'zeros.bin');
    writeFileSync(zeros, Buffer.alloc(12 * MB));
    const bomb = path.join(src, 'bomb.zip');
    pyZip(bomb, [{ name: 'big.csv', file: zeros }]);
    const err = await refusal(prepareUpload(bomb, 'bomb.zip', path.join(tmp.dir, 'ws6'), limits));
    expect(err.code).toBe('upload_too_large');
    expect(err.details.max_bytes).toBe(10 * MB);

    // Same archive, but the central directory lies: it claims 100 bytes.
    const liar = path.join(src, 'liar.zip');
    const bytes = readFileSync(bomb);
    const cd = bytes.lastIndexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    bytes.writeUInt32LE(100, cd + 24);
    writeFileSync(liar, bytes);
    expect((await readZipDirectory(liar))[0]!.uncompressedSize).toBe(100);
    const err2 = await refusal(prepareUpload(liar, 'liar.zip', path.join(tmp.dir, 'ws7'), limits));
    expect(err2.code).toBe('upload_too_large');
  });

  it('refuses a ZIP without any dataset, listing what it found', async () => {
    const zip = path.join(src, 'nothing.zip');
    pyZip(zip, [{ name: 'notes.txt', text: 'hi' }]);
    const err = await refusal(prepareUpload(zip, 'nothing.zip', path.join(tmp.dir, 'ws8'), limits));
    expect(err.code).toBe('invalid_source');
    expect(err.details.files).toEqual(['notes.txt']);
  });

  it('gives CSV files the open options that read WKT or lon/lat columns, and assumes WGS 84', async () => {
    const csv = write(path.join(src, 'upload-9.bin'), 'name,lat,lon\nBern,46.95,7.44\n');
    const ref = await prepareUpload(csv, 'places.csv', path.join(tmp.dir, 'ws9'), limits);
    expect(ref.openOptions).toEqual(csvOpenOptions);
    expect(ref.assumedCrs).toBe('EPSG:4326');
    const ds = await openDataset(ref);
    try {
      const f = ds.layers.get(0).features.first();
      expect(f.getGeometry()?.toWKT()).toBe('POINT (7.44 46.95)');
      expect(f.fields.getNames()).toEqual(['name']);
    } finally {
      ds.close();
    }
  });

  it('reads a one-column CSV (no separator for GDAL to find): values, types and the layer name kept, still CSV', async () => {
    const csv = write(path.join(src, 'upload-one.bin'), 'id\n1\n2\n');
    const ref = await prepareUpload(csv, 'ids.csv', path.join(tmp.dir, 'ws-one'), limits);
    const info = await inspectDataset(ref);
    expect(info).toMatchObject({ driver: 'CSV', dataset_type: 'vector' });
    expect(info.layers).toEqual([expect.objectContaining({ name: 'ids', has_geometry: false, feature_count: 2, fields: [{ name: 'id', type: 'Integer' }] })]);
    expect((await dataPreview(ref)).rows).toEqual([{ id: 1 }, { id: 2 }]);

    // CRLF line ends, a quoted value holding the separator and a line break, non-ASCII text, no final newline.
    const text = write(path.join(src, 'upload-two.bin'), 'name\r\n"Zürich, HB"\r\n"two\r\nlines"\r\nGenève');
    const named = await prepareUpload(text, 'names.csv', path.join(tmp.dir, 'ws-two'), limits);
    // (GDAL's CSV reader gives a line break inside a value as \n.)
    expect((await dataPreview(named)).rows).toEqual([{ name: 'Zürich, HB' }, { name: 'two\nlines' }, { name: 'Genève' }]);

    // A one-column CSV of WKT is a layer of geometries in WGS 84, as any CSV with WKT.
    const wkt = write(path.join(src, 'upload-wkt.bin'), 'wkt\n"POINT (7.44 46.95)"\n');
    const shapes = await prepareUpload(wkt, 'shapes.csv', path.join(tmp.dir, 'ws-wkt'), limits);
    expect((await inspectDataset(shapes)).layers[0]).toMatchObject({ has_geometry: true, crs: 'EPSG:4326', fields: [] });
  });

  it('opens KMZ directly and keeps the original file name (GDAL names layers after it)', async () => {
    const kml = write(
      path.join(src, 'doc.kml'),
      '<?xml version="1.0" encoding="UTF-8"?><kml xmlns="http://www.opengis.net/kml/2.2"><Document><Placemark><name>A</name><Point><coordinates>7.4,46.9</coordinates></Point></Placemark></Document></kml>',
    );
    const kmz = path.join(src, 'upload-10.bin');
    await writeZip(kmz, [{ path: kml, name: 'doc.kml' }]);
    const ref = await prepareUpload(kmz, 'C:\\Users\\me\\Places.kmz', path.join(tmp.dir, 'ws10'), limits);
    expect(path.basename(ref.path)).toBe('Places.kmz');
    expect((await inspectDataset(ref)).layers[0]?.feature_count).toBe(1);
  });

  it('refuses a file GDAL cannot open with invalid_source and no server path', async () => {
    const junk = write(path.join(src, 'upload-11.bin'), 'this is not a dataset');
    const ref = await prepareUpload(junk, 'junk.geojson', path.join(tmp.dir, 'ws11'), limits);
    const err = await refusal(inspectDataset(ref));
    expect(err.code).toBe('invalid_source');
    expect(JSON.stringify(err.details) + err.message).not.toContain(tmp.dir);
  });

  it('refuses a lone shapefile part: shapefiles come as one ZIP', async () => {
    const shp = path.join(shpDir, 'roads.shp');
    const err = await refusal(prepareUpload(shp, 'roads.shp', path.join(tmp.dir, 'ws12'), limits));
    expect(err.code).toBe('invalid_source');
    expect(err.message).toMatch(/one ZIP/);
  });

  it('strips directories and control characters from upload names', () => {
    expect(safeFilename('../../etc/passwd')).toBe('passwd');
    expect(safeFilename('C:\\a\\b\\Zürich Straßen.gpkg')).toBe('Zürich Straßen.gpkg');
    expect(safeFilename('..hidden\u0000.csv')).toBe('hidden_.csv');
    expect(safeFilename('')).toBe('upload');
  });
});
