import { mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertDataset } from '../../geo/datasets/convert.js';
import { datasetAt, prepareUpload } from '../../geo/datasets/dataset-files.js';
import { inspectDataset } from '../../geo/datasets/inspect.js';
import { spatialPreview } from '../../geo/datasets/preview.js';
import { splitReadOptions, checkReadColumns } from '../../geo/datasets/read-options.js';
import { parseCrsInput } from '../../geo/crs.js';
import { applyPipeline } from '../../geo/operations/pipeline.js';
import { pyZip, readLayer, refusal, run, tempFolder, vectorFromCsv, write } from './support.js';

/*
 * Control of the coordinate system (issue 34, finding 3): assign_crs, source_crs and X/Y
 * columns when a dataset is opened, what a reprojection says about the operation PROJ used and
 * the target's area of use, and which CRS strings are accepted at all.
 */
describe('CRS control', { timeout: 180_000 }, () => {
  const tmp = tempFolder('crs');
  const d = (n: string) => path.join(tmp.dir, n);
  const NE = path.resolve('test/fixtures/natural-earth/natural-earth-110m.gpkg');
  let noPrj: string;

  beforeAll(() => {
    // Two boroughs in EPSG:2263 (US feet), zipped as a shapefile without its .prj.
    const src = vectorFromCsv(
      d('boroughs.gpkg'),
      'name,wkt\nManhattan,"POLYGON ((980000 190000,1000000 190000,1000000 220000,980000 220000,980000 190000))"\nBrooklyn,"POLYGON ((980000 150000,1020000 150000,1020000 190000,980000 190000,980000 150000))"\n',
      ['-a_srs', 'EPSG:2263', '-nln', 'boroughs', '-nlt', 'POLYGON'],
    );
    mkdirSync(d('shp'));
    run('ogr2ogr', ['-f', 'ESRI Shapefile', d('shp'), src, '-nln', 'boroughs']);
    rmSync(path.join(d('shp'), 'boroughs.prj'));
    noPrj = pyZip(
      d('boroughs.zip'),
      ['shp', 'shx', 'dbf'].map((ext) => ({ name: `boroughs.${ext}`, file: path.join(d('shp'), `boroughs.${ext}`) })),
    );
  });
  afterAll(() => tmp.remove());

  it('assigns a CRS to a shapefile without .prj, then reprojects it', async () => {
    const ref = await prepareUpload(noPrj, 'boroughs.zip', d('prep-noprj'), { maxUncompressedBytes: 1e8 });
    const info = await inspectDataset(ref);
    expect(info.layers[0]!.crs).toBeNull();
    // Without a CRS, a metric operation says how to give one.
    const refused = await refusal(applyPipeline(ref, { operations: [{ type: 'buffer', distance: 10 }] }, d('w0')), 'invalid_transformation');
    expect(refused.message).toContain('"type": "assign_crs"');
    const result = await applyPipeline(
      ref,
      {
        operations: [
          { type: 'assign_crs', crs: 'EPSG:2263' },
          { type: 'reproject', target_crs: 'EPSG:4326' },
        ],
      },
      d('w1'),
    );
    const layer = readLayer(result.dataset.path, 'boroughs');
    expect(layer.srs).toBe('EPSG:4326');
    // Manhattan's box lies in New York: about 74° W, 40.7° N.
    const env = (await import('../../geo/gdal/gdal.js')).gdal.Geometry.fromWKT(layer.features[0]!.wkt!).getEnvelope();
    expect(env.minX).toBeGreaterThan(-74.2);
    expect(env.maxX).toBeLessThan(-73.8);
    expect(env.minY).toBeGreaterThan(40.5);
    expect(env.maxY).toBeLessThan(40.9);
    // The reprojection reports the operation PROJ used.
    expect(result.warnings).toEqual([
      expect.objectContaining({
        code: 'crs_operation',
        layer: 'boroughs',
        details: expect.objectContaining({ chosen_by: 'proj', pipeline: expect.stringMatching(/^\+proj=pipeline .*\+proj=lcc/) }),
      }),
    ]);
  });

  it('takes source_crs on upload for a .prj-less shapefile: inspection, preview and convert use it', async () => {
    const { options } = splitReadOptions({ source_crs: 'EPSG:2263' }, 'body');
    const ref = await prepareUpload(noPrj, 'boroughs.zip', d('prep-crs'), { maxUncompressedBytes: 1e8, read: options });
    const info = await inspectDataset(ref);
    expect(info.layers[0]!.crs).toBe('EPSG:2263');
    expect(info.layers[0]).toMatchObject({
      crs_info: { code: 'EPSG:2263', name: 'NAD83 / New York Long Island (ftUS)', unit: 'US survey foot', geographic: false },
    });
    const preview = await spatialPreview(ref);
    const first = (preview.geojson as { features: { geometry: { coordinates: number[][][] } }[] }).features[0]!.geometry.coordinates[0]![0]!;
    expect(first[0]).toBeCloseTo(-74.0, 0);
    expect(first[1]).toBeCloseTo(40.6, 0);
    const out = await convertDataset(ref, { outputFormat: 'GPKG', targetCrs: 'EPSG:32618' }, d('conv-crs'));
    expect(readLayer(path.join(d('conv-crs'), out.filename)).srs).toBe('EPSG:32618');
    // The convert result says which operation PROJ used, or uses the pipeline given.
    expect(out.warnings).toEqual([
      expect.objectContaining({
        code: 'crs_operation',
        layer: 'boroughs',
        details: expect.objectContaining({ chosen_by: 'proj', pipeline: expect.stringContaining('+proj=utm') }),
      }),
    ]);
    const pipeline =
      '+proj=pipeline +step +proj=unitconvert +xy_in=us-ft +xy_out=m +step +inv +proj=lcc +lat_0=40.1666666666667 +lon_0=-74 +lat_1=41.0333333333333 +lat_2=40.6666666666667 +x_0=300000 +y_0=0 +ellps=GRS80 +step +proj=utm +zone=18 +ellps=GRS80';
    const given = await convertDataset(ref, { outputFormat: 'GPKG', targetCrs: 'EPSG:32618', transformation: pipeline }, d('conv-ct'));
    expect(given.warnings).toEqual([expect.objectContaining({ code: 'crs_operation', details: expect.objectContaining({ chosen_by: 'request', pipeline }) })]);
    const a = readLayer(path.join(d('conv-crs'), out.filename)).features[0]!.wkt!;
    const b = readLayer(path.join(d('conv-ct'), given.filename)).features[0]!.wkt!;
    const start = (wkt: string) =>
      wkt
        .match(/-?\d+(\.\d+)?/g)!
        .slice(0, 2)
        .map(Number);
    expect(Math.hypot(start(a)[0]! - start(b)[0]!, start(a)[1]! - start(b)[1]!)).toBeLessThan(5);
  });

  it('reads a CSV whose X/Y columns are in EPSG:2263 (US feet) when told the columns and the CRS', async () => {
    const csv = write(d('stations.csv'), 'station,easting,northing\nBattery Park,980000,195000\nCentral Park,994000,225000\n');
    const { options } = splitReadOptions({ x_column: 'easting', y_column: 'northing', source_crs: 'EPSG:2263' }, 'body');
    const ref = await prepareUpload(csv, 'stations.csv', d('prep-csv'), { maxUncompressedBytes: 1e8, read: options });
    const info = await inspectDataset(ref);
    checkReadColumns(options, info.layers);
    expect(info.layers[0]).toMatchObject({ has_geometry: true, crs: 'EPSG:2263', geometry_type: 'POINT' });
    const preview = await spatialPreview(ref);
    const pts = (preview.geojson as { features: { geometry: { coordinates: number[] } }[] }).features.map((f) => f.geometry.coordinates);
    // Battery Park is at about 74.01° W, 40.70° N.
    expect(pts[0]![0]).toBeCloseTo(-74.02, 1);
    expect(pts[0]![1]).toBeCloseTo(40.7, 1);
    const out = await convertDataset(ref, { outputFormat: 'GeoJSON' }, d('conv-csv'));
    expect(readLayer(path.join(d('conv-csv'), out.filename)).features[1]!.wkt).toMatch(/^POINT \(-73\.9\d+ 40\.7\d+\)$/);
    // Columns that do not exist leave a plain table: said with the columns there are.
    const { options: wrong } = splitReadOptions({ x_column: 'x', y_column: 'y' }, 'body');
    const plain = await prepareUpload(csv, 'stations.csv', d('prep-csv-wrong'), { maxUncompressedBytes: 1e8, read: wrong });
    const err = await refusal(
      inspectDataset(plain).then((i) => checkReadColumns(wrong, i.layers)),
      'invalid_parameter',
    );
    expect(err.message).toContain('its columns are: station, easting, northing');
  });

  it('warns when features fall outside the target CRS area of use (world cities to Swiss LV95)', async () => {
    const result = await applyPipeline(datasetAt(NE), { layers: ['cities'], operations: [{ type: 'reproject', target_crs: 'EPSG:2056' }] }, d('w2'));
    const outside = result.warnings.find((w) => w.code === 'crs_outside_area');
    expect(outside).toMatchObject({
      layer: 'cities',
      details: { target_crs: 'EPSG:2056', area_of_use: expect.objectContaining({ name: 'Liechtenstein; Switzerland.' }) },
    });
    // Every city but Bern and Vaduz lies outside Switzerland and Liechtenstein.
    const inside = readLayer(NE, 'cities').features.filter((f) => {
      const [x, y] = f.wkt!.match(/-?\d+(\.\d+)?/g)!.map(Number);
      return x! >= 5.96 && x! <= 10.49 && y! >= 45.82 && y! <= 47.81;
    }).length;
    expect(outside!.details!.features).toBe(243 - inside);
    expect(inside).toBeGreaterThan(0);
    const swiss = await applyPipeline(
      datasetAt(NE),
      {
        layers: ['cities'],
        operations: [
          { type: 'filter', where: "name = 'Bern'" },
          { type: 'reproject', target_crs: 'EPSG:2056' },
        ],
      },
      d('w3'),
    );
    expect(swiss.warnings.map((w) => w.code)).toEqual(['crs_operation']);
  });

  it('uses a transformation pipeline given by the user, and reports it as chosen', async () => {
    // Without the datum shift: the Bessel ellipsoid only, about 100 m off the EPSG transformation.
    const pipeline =
      '+proj=pipeline +step +proj=unitconvert +xy_in=deg +xy_out=rad +step +proj=somerc +lat_0=46.9524055555556 +lon_0=7.43958333333333 +k_0=1 +x_0=2600000 +y_0=1200000 +ellps=bessel';
    const spec = (extra: Record<string, unknown>) => ({
      layers: ['cities'],
      operations: [
        { type: 'filter', where: "name = 'Bern'" },
        { type: 'reproject', target_crs: 'EPSG:2056', ...extra },
      ],
    });
    const chosen = await applyPipeline(datasetAt(NE), spec({ transformation: pipeline }), d('w4'));
    const best = await applyPipeline(datasetAt(NE), spec({}), d('w5'));
    expect(chosen.warnings[0]).toMatchObject({ code: 'crs_operation', details: { chosen_by: 'request', pipeline } });
    const at = (file: string) =>
      readLayer(file, 'cities')
        .features[0]!.wkt!.match(/-?\d+(\.\d+)?/g)!
        .map(Number);
    const [x1, y1] = at(chosen.dataset.path);
    const [x2, y2] = at(best.dataset.path);
    expect(Math.hypot(x1! - x2!, y1! - y2!)).toBeGreaterThan(50);
    await refusal(
      applyPipeline(datasetAt(NE), spec({ transformation: '+proj=pipeline +step +proj=hgridshift +grids=/etc/passwd' }), d('w6')),
      'invalid_transformation',
    );
  });

  it('accepts codes, WKT, PROJJSON and PROJ strings, and refuses paths and URLs before GDAL sees them', () => {
    for (const ok of ['EPSG:2056', 'urn:ogc:def:crs:EPSG::4326', '+proj=longlat +datum=WGS84 +no_defs', 'ESRI:102100'])
      expect(() => parseCrsInput(ok, 'crs')).not.toThrow();
    const wkt = parseCrsInput('EPSG:2263', 'crs').toWKT();
    expect(() => parseCrsInput(wkt, 'crs')).not.toThrow();
    for (const bad of [
      '/etc/passwd',
      'http://127.0.0.1/crs.wkt',
      '/vsicurl/http://x/y',
      'file:///etc/passwd',
      '+proj=longlat +nadgrids=/etc/passwd',
      'EPSG:99999999',
    ]) {
      expect(() => parseCrsInput(bad, 'source_crs'), bad).toThrow(/source_crs/);
    }
  });
});
