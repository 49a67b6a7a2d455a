import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertDataset } from '../../geo/datasets/convert.js';
import { datasetAt } from '../../geo/datasets/dataset-files.js';
import { FEATURES_READ_LIMIT } from '../../geo/datasets/lon-lat-extent.js';
import { readLayer, tempFolder, vectorFromCsv } from './support.js';

/*
 * What a Workspace convert or a Job's output says about coordinates (issue 34, findings 3 and 4):
 * features outside the target CRS's area of use with target_crs, as the reproject operation
 * does, and geometries RFC 7946 GeoJSON cuts at the antimeridian.
 */
describe('convert warnings on coordinates', { timeout: 180_000 }, () => {
  const tmp = tempFolder('convert-crs');
  const d = (n: string) => path.join(tmp.dir, n);
  let cities: string;
  let swiss: string;
  let pacific: string;

  beforeAll(() => {
    cities = vectorFromCsv(
      d('cities.gpkg'),
      [
        'name,wkt',
        'Zurich,POINT (8.54 47.37)',
        'Bern,POINT (7.45 46.95)',
        'Tokyo,POINT (139.69 35.69)',
        'Wellington,POINT (174.78 -41.29)',
        'Lima,POINT (-77.04 -12.05)',
      ].join('\n'),
      ['-a_srs', 'EPSG:4326', '-nln', 'cities', '-nlt', 'POINT'],
    );
    swiss = vectorFromCsv(d('swiss.gpkg'), ['name,wkt', 'Zurich,POINT (8.54 47.37)', 'Bern,POINT (7.45 46.95)', 'Lugano,POINT (8.95 46.0)'].join('\n'), [
      '-a_srs',
      'EPSG:4326',
      '-nln',
      'cities',
      '-nlt',
      'POINT',
    ]);
    // Fiji-like islands across 180°: one ring going past 180° in longitude, one line jumping
    // from 179° to −179°; a third feature well away from it, which stays whole.
    pacific = vectorFromCsv(
      d('pacific.gpkg'),
      [
        'name,wkt',
        'vanua,"POLYGON ((178 -17,182 -17,182 -16,178 -16,178 -17))"',
        'ferry,"LINESTRING (178.5 -17.5,179.5 -17.2,-179.6 -16.9,-178.8 -16.5)"',
        'suva,"POLYGON ((178.3 -18.2,178.5 -18.2,178.5 -18.0,178.3 -18.0,178.3 -18.2))"',
      ].join('\n'),
      ['-a_srs', 'EPSG:4326', '-nln', 'pacific'],
    );
  });
  afterAll(() => tmp.remove());

  it('warns with the count when features lie outside the target CRS area of use (world cities to Swiss LV95)', async () => {
    const result = await convertDataset(datasetAt(cities), { outputFormat: 'GPKG', targetCrs: 'EPSG:2056' }, d('out-world'));
    const outside = result.warnings.filter((w) => w.code === 'crs_outside_area');
    expect(outside).toHaveLength(1);
    expect(outside[0]).toMatchObject({
      layer: 'cities',
      details: { features: 3, target_crs: 'EPSG:2056', area_of_use: expect.objectContaining({ name: 'Liechtenstein; Switzerland.' }) },
    });
    expect(outside[0]!.message).toContain('3 features lie partly or wholly outside its area of use (Liechtenstein; Switzerland)');
    // The operation PROJ used is reported beside it, and the points were written all the same.
    expect(result.warnings.find((w) => w.code === 'crs_operation')).toMatchObject({ layer: 'cities', details: { chosen_by: 'proj' } });
    expect(readLayer(path.join(d('out-world'), result.filename)).features).toHaveLength(5);
  });

  it('says nothing of the area of use when every feature lies inside it', async () => {
    const result = await convertDataset(datasetAt(swiss), { outputFormat: 'GPKG', targetCrs: 'EPSG:2056' }, d('out-swiss'));
    expect(result.warnings.map((w) => w.code)).not.toContain('crs_outside_area');
    expect(result.warnings.map((w) => w.code)).toContain('crs_operation');
  });

  it('counts the features outside the area of a projected source too (Zurich and Tokyo in EPSG:3857)', async () => {
    const mercator = vectorFromCsv(
      d('cities-3857.gpkg'),
      // Zurich and Tokyo in Web Mercator metres.
      ['name,wkt', 'Zurich,POINT (950679 6003408)', 'Tokyo,POINT (15550409 4257981)'].join('\n'),
      ['-a_srs', 'EPSG:3857', '-nln', 'cities', '-nlt', 'POINT'],
    );
    const result = await convertDataset(datasetAt(mercator), { outputFormat: 'GPKG', targetCrs: 'EPSG:2056' }, d('out-3857'));
    expect(result.warnings.find((w) => w.code === 'crs_outside_area')).toMatchObject({ layer: 'cities', details: { features: 1 } });
  });

  it('above FEATURES_READ_LIMIT a projected layer is not read feature by feature: the warning says its extent reaches outside', async () => {
    // One more point than the limit, in Web Mercator, from Zurich eastwards to Tokyo's longitude.
    const rows = Array.from({ length: FEATURES_READ_LIMIT + 1 }, (_, i) => `p${i},POINT (${950_679 + i * 146} 6003408)`);
    const many = vectorFromCsv(d('many-3857.gpkg'), ['name,wkt', ...rows].join('\n'), ['-a_srs', 'EPSG:3857', '-nln', 'many', '-nlt', 'POINT']);
    const result = await convertDataset(datasetAt(many), { outputFormat: 'GPKG', targetCrs: 'EPSG:2056' }, d('out-many'));
    const outside = result.warnings.find((w) => w.code === 'crs_outside_area');
    expect(outside).toMatchObject({ layer: 'many', details: { features: null, target_crs: 'EPSG:2056' } });
    expect(outside!.message).toContain('its extent reaches outside the area of use (Liechtenstein; Switzerland; features not counted');
  });

  it('a transformation given reprojects as PROJ would with the same pipeline, whatever axis order the CRSs have', async () => {
    const auto = await convertDataset(datasetAt(swiss), { outputFormat: 'GPKG', targetCrs: 'EPSG:2056' }, d('ax-auto'));
    const pipeline = String(auto.warnings.find((w) => w.code === 'crs_operation')!.details!.pipeline);
    const given = await convertDataset(datasetAt(swiss), { outputFormat: 'GPKG', targetCrs: 'EPSG:2056', transformation: pipeline }, d('ax-given'));
    expect(given.warnings.find((w) => w.code === 'crs_operation')).toMatchObject({ details: { chosen_by: 'request', pipeline } });
    const coords = (file: string) => readLayer(file).features.map((f) => f.wkt!.match(/-?\d+(\.\d+)?/g)!.map(Number));
    const a = coords(path.join(d('ax-auto'), auto.filename));
    const b = coords(path.join(d('ax-given'), given.filename));
    // Zurich near E 2 683 000, N 1 247 000 in LV95, both ways.
    expect(a[0]![0]).toBeCloseTo(2_683_186, -1);
    for (const [i, p] of b.entries()) {
      expect(p[0]).toBeCloseTo(a[i]![0]!, 3);
      expect(p[1]).toBeCloseTo(a[i]![1]!, 3);
    }
    // And back to EPSG:4326 (latitude first for GDAL) with PROJ's pipeline for that way.
    const lv95 = path.join(d('ax-auto'), auto.filename);
    const backAuto = await convertDataset(datasetAt(lv95), { outputFormat: 'GPKG', targetCrs: 'EPSG:4326' }, d('ax-back-auto'));
    const backPipeline = String(backAuto.warnings.find((w) => w.code === 'crs_operation')!.details!.pipeline);
    const back = await convertDataset(datasetAt(lv95), { outputFormat: 'GPKG', targetCrs: 'EPSG:4326', transformation: backPipeline }, d('ax-back'));
    const [zurich] = coords(path.join(d('ax-back'), back.filename));
    expect(zurich![0]).toBeCloseTo(8.54, 6);
    expect(zurich![1]).toBeCloseTo(47.37, 6);
  });

  it('reports the geometries RFC 7946 GeoJSON cuts at the antimeridian, and they really are cut', async () => {
    const result = await convertDataset(datasetAt(pacific), { outputFormat: 'GeoJSON' }, d('out-pacific'));
    const split = result.warnings.filter((w) => w.code === 'geometry_split');
    expect(split).toHaveLength(1);
    expect(split[0]).toMatchObject({ layer: 'pacific', details: { features: 2 } });
    expect(split[0]!.message).toContain('2 features of layer pacific crossing 180° are written in parts');
    const written = readLayer(path.join(d('out-pacific'), result.filename)).features;
    expect(written.map((f) => f.wkt!.split(' ')[0])).toEqual(['MULTIPOLYGON', 'MULTILINESTRING', 'POLYGON']);
    // Every longitude written lies within ±180°.
    for (const f of written)
      for (const x of f.wkt!.match(/-?\d+(\.\d+)? -?\d+(\.\d+)?/g)!.map((p) => Number(p.split(' ')[0]))) expect(Math.abs(x)).toBeLessThanOrEqual(180);
  });

  it('reports the Natural Earth country GDAL cuts at 180° (Russia: Chukotka touches it)', async () => {
    const ne = path.resolve('test/fixtures/natural-earth/natural-earth-110m.gpkg');
    const result = await convertDataset(datasetAt(ne), { outputFormat: 'GeoJSON', layers: ['countries'] }, d('out-ne'));
    const split = result.warnings.find((w) => w.code === 'geometry_split');
    expect(split).toMatchObject({ layer: 'countries', details: { features: 1 } });
    const russia = readLayer(ne, 'countries').features.find((f) => Object.values(f.props).includes('Russia'))!;
    expect(split!.details!.example_fids).toEqual([russia.fid]);
  });

  it('does not report a split for data away from 180°, nor for formats that keep geometries whole', async () => {
    const away = await convertDataset(datasetAt(swiss), { outputFormat: 'GeoJSON' }, d('out-away'));
    expect(away.warnings.map((w) => w.code)).not.toContain('geometry_split');
    const gpkg = await convertDataset(datasetAt(pacific), { outputFormat: 'FlatGeobuf' }, d('out-fgb'));
    expect(gpkg.warnings.map((w) => w.code)).not.toContain('geometry_split');
  });
});
