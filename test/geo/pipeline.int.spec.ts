import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../domain/errors.js';
import { datasetAt, prepareUpload } from '../../geo/datasets/dataset-files.js';
import type { Point, Polygon } from 'gdal-async';
import { gdal } from '../../geo/gdal/gdal.js';
import { operationCatalog } from '../../geo/operations/catalog.js';
import { convertDataset } from '../../geo/datasets/convert.js';
import { inspectDataset } from '../../geo/datasets/inspect.js';
import { applyPipeline, transformDataPreview, transformSpatialPreview, type PipelineSpec } from '../../geo/operations/pipeline.js';
import { checkPipeline } from '../../geo/operations/pipeline-check.js';
import { bwrapPath } from '../../geo/sandbox/sandbox.js';
import { checkSelectSql, checkSqlExpression } from '../../geo/operations/sql-guard.js';
import { addGpkgLayer, envelopeMetres, layerNames, readLayer, refusal, sha256, tempFolder, vectorFromCsv, write } from './support.js';

const area = (wkt: string) => (gdal.Geometry.fromWKT(wkt) as Polygon).getArea();

function envelopeOf(wkt: string) {
  return gdal.Geometry.fromWKT(wkt).getEnvelope();
}

describe('applyPipeline', { timeout: 120_000 }, () => {
  const tmp = tempFolder('pipeline');
  const d = (n: string) => path.join(tmp.dir, n);
  let gpkg: string;
  let before: string;
  let n = 0;
  const work = () => d(`work-${++n}`);
  const run = (spec: PipelineSpec, layer = 'towns') => applyPipeline(datasetAt(gpkg), { layers: [layer], ...spec }, work());

  beforeAll(() => {
    // Swiss towns in LV95 (EPSG:2056) with the columns the catalog's examples name.
    gpkg = vectorFromCsv(
      d('data.gpkg'),
      `${[
        'id,NAME_EN,name,tmp,shape_area,population,area_km2,status,region,count_text,wkt',
        '1,Bern,Bern,x,1.5,134000,51.6,active,BE,12,"POLYGON ((2599000 1199000,2601000 1199000,2601000 1201000,2599000 1201000,2599000 1199000))"',
        '2,Thun,Thun,y,2.5,43000,21.6,active,BE,3.7,"POLYGON ((2613000 1177000,2615000 1177000,2615000 1179000,2613000 1179000,2613000 1177000))"',
        '3,Basel,Basel,z,3.5,173000,23.9,inactive,BS,abc,"POLYGON ((2610000 1266000,2612000 1266000,2612000 1268000,2610000 1268000,2610000 1266000))"',
        '4,Biel,Biel/Bienne,w,4.5,55000,21.2,active,BE,,"POLYGON ((2584000 1220000,2586000 1220000,2586000 1222000,2584000 1222000,2584000 1220000))"',
      ].join('\n')}\n`,
      ['-a_srs', 'EPSG:2056', '-nln', 'towns', '-nlt', 'POLYGON'],
    );
    addGpkgLayer(
      gpkg,
      'examples',
      'id,NAME_EN,tmp,shape_area,population,area_km2,status,region,owner_id,wkt\n1,Bern,x,1.5,134000,51.6,active,BE,1,"POLYGON ((7.4 46.9,7.5 46.9,7.5 47,7.4 47,7.4 46.9))"\n',
      ['-a_srs', 'EPSG:4326', '-nlt', 'POLYGON'],
    );
    // The other layers the catalog's examples name (clip, spatial_join, merge), around the example.
    addGpkgLayer(gpkg, 'study_area', 'name,wkt\nBern area,"POLYGON ((7.35 46.85,7.45 46.85,7.45 46.95,7.35 46.95,7.35 46.85))"\n', [
      '-a_srs',
      'EPSG:4326',
      '-nlt',
      'POLYGON',
    ]);
    addGpkgLayer(gpkg, 'districts', 'district,wkt\nBern-Mittelland,"POLYGON ((7 46.5,8 46.5,8 47.5,7 47.5,7 46.5))"\n', [
      '-nlt',
      'POLYGON',
      '-s_srs',
      'EPSG:4326',
      '-t_srs',
      'EPSG:2056',
    ]);
    addGpkgLayer(gpkg, 'roads_north', 'road,wkt\nA1,"LINESTRING (7.4 47.1,7.6 47.2)"\n', ['-a_srs', 'EPSG:4326', '-nlt', 'LINESTRING']);
    addGpkgLayer(gpkg, 'roads_south', 'road,wkt\nA6,"LINESTRING (7.4 46.8,7.6 46.7)"\n', ['-a_srs', 'EPSG:4326', '-nlt', 'LINESTRING']);
    addGpkgLayer(gpkg, 'owners', 'owner_id,full_name\n1,Anna Müller\n2,José Núñez\n');
    addGpkgLayer(gpkg, 'stops', 'id,kind,wkt\n1,bus,"POINT (7.44 46.95)"\n', ['-a_srs', 'EPSG:4326', '-nlt', 'POINT']);
    addGpkgLayer(
      gpkg,
      'estates',
      'id,wkt\n1,"MULTIPOLYGON (((0 0,10 0,10 10,0 10,0 0)),((20 0,30 0,30 10,20 10,20 0)))"\n2,"POLYGON ((40 0,50 0,50 10,40 10,40 0))"\n',
      ['-a_srs', 'EPSG:2056', '-nlt', 'MULTIPOLYGON'],
    );
    before = sha256(gpkg);
  });
  afterAll(() => {
    // Whatever ran, the input is byte-for-byte the same.
    expect(sha256(gpkg)).toBe(before);
    tmp.remove();
  });

  it('returns the input itself for an empty pipeline', async () => {
    const r = await applyPipeline(datasetAt(gpkg), { operations: [] }, work());
    expect(r.changed).toBe(false);
    expect(r.dataset.path).toBe(gpkg);
  });

  it('runs every catalog operation with its example parameters', async () => {
    // The examples name NAME_EN, then name: select_columns runs after the rename example.
    const rename = operationCatalog.find((o) => o.id === 'rename_column')!.example;
    for (const def of operationCatalog) {
      const operations = def.id === 'select_columns' ? [rename, def.example] : [def.example];
      const r = await run({ operations }, 'examples');
      expect(r.changed, def.id).toBe(true);
      const out = readLayer(r.dataset.path, 'examples');
      expect(out.features.length, def.id).toBeGreaterThan(0);
    }
  });

  it('renames, selects, drops and casts columns (values that do not convert become null)', async () => {
    const r = await run({
      operations: [
        { type: 'rename_column', from: 'NAME_EN', to: 'town' },
        { type: 'cast_column', column: 'count_text', to: 'integer' },
        { type: 'cast_column', column: 'shape_area', to: 'string' },
        { type: 'drop_columns', columns: ['tmp'] },
        { type: 'select_columns', columns: ['id', 'town', 'count_text', 'shape_area'] },
      ],
    });
    const out = readLayer(r.dataset.path, 'towns');
    expect(out.fields.map((f) => [f.name, f.type])).toEqual([
      ['id', 'integer'],
      ['town', 'string'],
      ['count_text', 'integer'],
      ['shape_area', 'string'],
    ]);
    expect(out.features.map((f) => f.props)).toEqual([
      { id: 1, town: 'Bern', count_text: 12, shape_area: '1.5' },
      { id: 2, town: 'Thun', count_text: 3, shape_area: '2.5' },
      { id: 3, town: 'Basel', count_text: null, shape_area: '3.5' },
      { id: 4, town: 'Biel', count_text: null, shape_area: '4.5' },
    ]);
    expect(out.srs).toBe('EPSG:2056');
    expect(gdal.Geometry.getName(out.geomType)).toBe('Polygon');
  });

  it('casts text to real, date and datetime', async () => {
    const r = await run({
      operations: [
        { type: 'compute_column', column: 'when', expression: "CASE id WHEN 1 THEN '2024-03-01' WHEN 2 THEN '2024/03/02 10:30:00' ELSE 'soon' END" },
        { type: 'compute_column', column: 'stamp', expression: "CASE id WHEN 1 THEN '2024-03-01T10:00:00+02:00' ELSE NULL END" },
        { type: 'cast_column', column: 'when', to: 'date' },
        { type: 'cast_column', column: 'stamp', to: 'datetime' },
        { type: 'cast_column', column: 'count_text', to: 'real' },
        { type: 'select_columns', columns: ['id', 'when', 'stamp', 'count_text'] },
      ],
    });
    const out = readLayer(r.dataset.path, 'towns');
    expect(out.fields.map((f) => f.type)).toEqual(['integer', 'date', 'dateTime', 'real']);
    expect(out.features[0]!.props).toMatchObject({
      when: { year: 2024, month: 3, day: 1 },
      stamp: { year: 2024, month: 3, day: 1, hour: 8, timezone: 100 },
      count_text: 12,
    });
    expect(out.features[1]!.props).toMatchObject({ when: { year: 2024, month: 3, day: 2 }, stamp: null, count_text: 3.7 });
    expect(out.features[2]!.props).toMatchObject({ when: null, count_text: null });
  });

  it('computes columns with the type of their values and filters rows', async () => {
    const r = await run({
      operations: [
        { type: 'compute_column', column: 'density', expression: 'population / area_km2' },
        { type: 'compute_column', column: 'big', expression: 'CASE WHEN population > 100000 THEN 1 END' },
        { type: 'compute_column', column: 'label', expression: "name || ' (' || region || ')'" },
        { type: 'filter', where: "status = 'active' AND population > 50000" },
      ],
    });
    const out = readLayer(r.dataset.path, 'towns');
    const types = Object.fromEntries(out.fields.map((f) => [f.name, f.type]));
    expect(types).toMatchObject({ density: 'real', big: 'integer64', label: 'string' });
    expect(out.features.map((f) => f.props.name)).toEqual(['Bern', 'Biel/Bienne']);
    expect(out.features[0]!.props.density).toBeCloseTo(134000 / 51.6, 6);
    expect(out.features[0]!.props.big).toBe(1);
    expect(out.features[1]!.props.big).toBeNull();
    expect(out.features[1]!.props.label).toBe('Biel/Bienne (BE)');
  });

  it('reports a wrong column in an expression as invalid_transformation', async () => {
    const err = await refusal(run({ operations: [{ type: 'filter', where: 'no_such_column > 1' }] }), 'invalid_transformation');
    expect(err.message).toContain('no such column: no_such_column');
    expect(err.message).not.toContain(tmp.dir);
    const err2 = await refusal(run({ operations: [{ type: 'rename_column', from: 'nope', to: 'x' }] }), 'invalid_transformation');
    expect(err2.details.columns).toContain('NAME_EN');
  });

  it('buffers a WGS 84 point by 1000 m: about 2000 m wide and tall, still in EPSG:4326', async () => {
    const r = await run({ operations: [{ type: 'buffer', distance: 1000, units: 'meters', segments: 16 }] }, 'stops');
    const out = readLayer(r.dataset.path, 'stops');
    expect(out.srs).toBe('EPSG:4326');
    const env = envelopeOf(out.features[0]!.wkt!);
    const size = envelopeMetres(env);
    expect(size.width).toBeGreaterThan(1980);
    expect(size.width).toBeLessThan(2020);
    expect(size.height).toBeGreaterThan(1980);
    expect(size.height).toBeLessThan(2020);
    expect((env.minX + env.maxX) / 2).toBeCloseTo(7.44, 5);
    expect((env.minY + env.maxY) / 2).toBeCloseTo(46.95, 5);
    // units: source means degrees on geographic data
    const deg = await run({ operations: [{ type: 'buffer', distance: 0.01, units: 'source' }] }, 'stops');
    const e2 = envelopeOf(readLayer(deg.dataset.path, 'stops').features[0]!.wkt!);
    expect(e2.maxX - e2.minX).toBeCloseTo(0.02, 6);
  });

  it('buffers projected data in metres and kilometres, simplifies in metres', async () => {
    const r = await run({ operations: [{ type: 'buffer', distance: 0.5, units: 'kilometers' }] });
    const env = envelopeOf(readLayer(r.dataset.path, 'towns').features[0]!.wkt!);
    expect(env.maxX - env.minX).toBeCloseTo(3000, 0);
    const s = await run({
      operations: [
        { type: 'buffer', distance: 500, units: 'meters', segments: 32 },
        { type: 'simplify', tolerance: 200, units: 'meters' },
      ],
    });
    const simplified = gdal.Geometry.fromWKT(readLayer(s.dataset.path, 'towns').features[0]!.wkt!);
    const buffered = gdal.Geometry.fromWKT(readLayer(r.dataset.path, 'towns').features[0]!.wkt!);
    expect((simplified as Polygon).rings.get(0).points.count()).toBeLessThan((buffered as Polygon).rings.get(0).points.count());
    const plain = await run({
      operations: [
        { type: 'buffer', distance: 500, units: 'meters', segments: 32 },
        { type: 'simplify', tolerance: 200, units: 'meters', preserve_topology: false },
      ],
    });
    const dp = gdal.Geometry.fromWKT(readLayer(plain.dataset.path, 'towns').features[0]!.wkt!) as Polygon;
    expect(dp.rings.get(0).points.count()).toBeLessThan((buffered as Polygon).rings.get(0).points.count());
  });

  it('reprojects to EPSG:3857 with x = easting', async () => {
    const r = await run({ operations: [{ type: 'centroid' }, { type: 'reproject', target_crs: 'EPSG:4326' }] });
    const out = readLayer(r.dataset.path, 'towns');
    expect(out.srs).toBe('EPSG:4326');
    const p = gdal.Geometry.fromWKT(out.features[0]!.wkt!) as Point;
    // centre of the Bern square (LV95 2600000/1200000) is about 7.4386 E, 46.9511 N
    expect(p.x).toBeCloseTo(7.4386, 3);
    expect(p.y).toBeCloseTo(46.9511, 3);
    const m = await run({ operations: [{ type: 'reproject', target_crs: 'EPSG:3857' }] }, 'stops');
    const q = gdal.Geometry.fromWKT(readLayer(m.dataset.path, 'stops').features[0]!.wkt!) as Point;
    expect(q.x).toBeCloseTo(828217.0, 0); // 7.44° × 111 319.49 m
    expect(readLayer(m.dataset.path, 'stops').srs).toBe('EPSG:3857');
  });

  it('explodes multiparts then keeps working on the parts (two stages)', async () => {
    const r = await run(
      { operations: [{ type: 'explode_multipart' }, { type: 'point_on_surface' }, { type: 'compute_column', column: 'x', expression: 'ST_X(geometry)' }] },
      'estates',
    );
    const out = readLayer(r.dataset.path, 'estates');
    expect(out.features).toHaveLength(3);
    expect(out.features.map((f) => f.type)).toEqual(['POINT', 'POINT', 'POINT']);
    expect(out.features.map((f) => f.props.id)).toEqual([1, 1, 2]);
    expect(out.features.map((f) => Math.round(f.props.x as number))).toEqual([5, 25, 45]);
  });

  it('promotes to multi, forces 2D, makes valid, dissolves and clips', async () => {
    const promoted = readLayer((await run({ operations: [{ type: 'promote_to_multi' }, { type: 'force_2d' }] })).dataset.path, 'towns');
    expect(gdal.Geometry.getName(promoted.geomType)).toBe('Multi Polygon');
    expect(promoted.features.every((f) => f.type === 'MULTIPOLYGON')).toBe(true);

    const dissolved = readLayer((await run({ operations: [{ type: 'dissolve', by: ['region'] }] })).dataset.path, 'towns');
    expect(dissolved.fields.map((f) => f.name)).toEqual(['region']);
    expect(dissolved.features.map((f) => f.props.region).sort()).toEqual(['BE', 'BS']);
    const be = dissolved.features.find((f) => f.props.region === 'BE')!;
    expect(area(be.wkt!)).toBeCloseTo(3 * 4_000_000, -3);

    const all = readLayer((await run({ operations: [{ type: 'dissolve', by: [] }] })).dataset.path, 'towns');
    expect(all.features).toHaveLength(1);

    // A box in WGS 84 around Bern only: Bern kept (cut), the others dropped.
    const clipped = readLayer((await run({ operations: [{ type: 'clip_bbox', bbox: [7.43, 46.94, 7.44, 46.96], crs: 'EPSG:4326' }] })).dataset.path, 'towns');
    expect(clipped.features.map((f) => f.props.name)).toEqual(['Bern']);
    expect(area(clipped.features[0]!.wkt!)).toBeLessThan(4_000_000);

    const valid = readLayer((await run({ operations: [{ type: 'make_valid' }] })).dataset.path, 'towns');
    expect(valid.features).toHaveLength(4);
  });

  it('refuses geometry operations on a table without geometry, allows attribute ones', async () => {
    const err = await refusal(run({ operations: [{ type: 'buffer', distance: 10 }] }, 'owners'), 'invalid_transformation');
    expect(err.message).toMatch(/needs geometries/);
    const ok = await run({ operations: [{ type: 'rename_column', from: 'full_name', to: 'owner' }] }, 'owners');
    expect(readLayer(ok.dataset.path, 'owners').features.map((f) => f.props.owner)).toEqual(['Anna Müller', 'José Núñez']);
  });

  it('requires layers on a multi-layer dataset and copies the other layers untouched', async () => {
    const err = await refusal(applyPipeline(datasetAt(gpkg), { operations: [{ type: 'centroid' }] }, work()), 'invalid_parameter');
    expect(err.details.layers).toEqual(expect.arrayContaining(['towns', 'owners', 'stops', 'estates']));
    const r = await run({ operations: [{ type: 'centroid' }] });
    expect(layerNames(r.dataset.path).sort()).toEqual([
      'districts',
      'estates',
      'examples',
      'owners',
      'roads_north',
      'roads_south',
      'stops',
      'study_area',
      'towns',
    ]);
    expect(readLayer(r.dataset.path, 'owners').features).toHaveLength(2);
    expect(readLayer(r.dataset.path, 'estates').features[0]!.type).toBe('MULTIPOLYGON');
    expect(readLayer(r.dataset.path, 'towns').features[0]!.type).toBe('POINT');
  });

  it('runs a SELECT against source with SpatiaLite functions, on the chosen layer', async () => {
    const r = await run({
      sql: "SELECT name, ST_Area(geometry) / 1e6 AS km2, ST_Centroid(geometry) AS geometry FROM source WHERE region = 'BE' -- comment\n;",
    });
    const out = readLayer(r.dataset.path, 'towns');
    expect(out.features.map((f) => [f.props.name, f.props.km2, f.type])).toEqual([
      ['Bern', 4, 'POINT'],
      ['Thun', 4, 'POINT'],
      ['Biel/Bienne', 4, 'POINT'],
    ]);
    expect(out.srs).toBe('EPSG:2056');
    const w = await run({ sql: 'WITH big AS (SELECT * FROM source WHERE population > 100000) SELECT name, geometry FROM big ORDER BY name' });
    expect(readLayer(w.dataset.path, 'towns').features.map((f) => f.props.name)).toEqual(['Basel', 'Bern']);
    const strings = await run({ sql: "SELECT 'ATTACH; PRAGMA' AS note, name FROM source LIMIT 1" }, 'owners').catch((e: unknown) => e);
    expect(strings).toBeInstanceOf(DomainError); // owners has no "name" column: the SQL ran and SQLite said so
    expect((strings as DomainError).message).toContain('no such column: name');
  });

  it('works on files GDAL exposes through virtual tables (CSV with lon/lat, GeoJSON)', async () => {
    const ref = await prepareUpload(write(d('towns-upload'), 'name,lat,lon,pop\nBern,46.95,7.44,134000\nThun,46.75,7.63,43000\n'), 'towns.csv', d('ws-csv'), {
      maxUncompressedBytes: 1e6,
    });
    const q = await applyPipeline(ref, { sql: 'SELECT name, pop * 2 AS p2, geometry FROM source WHERE pop > 50000' }, work());
    const out = readLayer(q.dataset.path, 'towns');
    expect(out.features.map((f) => [f.props.name, f.props.p2, f.wkt])).toEqual([['Bern', 268000, 'POINT (7.44 46.95)']]);
    expect(out.srs).toBe('EPSG:4326'); // the CSV's assumed WGS 84 is written down

    const geojson = write(
      d('x.geojson'),
      JSON.stringify({
        type: 'FeatureCollection',
        features: [{ type: 'Feature', properties: { n: 'a', d: '2020-01-01' }, geometry: { type: 'Point', coordinates: [7.44, 46.95] } }],
      }),
    );
    const r = await applyPipeline(
      datasetAt(geojson),
      {
        operations: [
          { type: 'reproject', target_crs: 'EPSG:2056' },
          { type: 'buffer', distance: 10, units: 'meters' },
        ],
      },
      work(),
    );
    const g = readLayer(r.dataset.path, 'x');
    expect(g.srs).toBe('EPSG:2056');
    expect(g.fields.map((f) => [f.name, f.type])).toEqual([
      ['n', 'string'],
      ['d', 'date'],
    ]);
    const env = envelopeOf(g.features[0]!.wkt!);
    expect(env.maxX - env.minX).toBeCloseTo(20, 1);
  });

  it('refuses SQL that is not a single read-only SELECT', async () => {
    const refused = [
      "ATTACH DATABASE '/etc/passwd' AS x",
      'PRAGMA table_info(source)',
      'SELECT 1; SELECT 2',
      'SELECT 1; DROP TABLE towns',
      "SELECT load_extension('/tmp/evil.so')",
      "SELECT readfile('/etc/passwd')",
      "SELECT * FROM source WHERE name = '/vsicurl/http://example.com/x'",
      "SELECT ogr_datasource_load_layers('/etc')",
      'SELECT "load_extension"(\'x\')',
      "SELECT 1 /* hidden */; ATTACH DATABASE 'x' AS y",
      'WITH x AS (SELECT 1) DELETE FROM towns',
      'DELETE FROM towns',
      "SELECT ImportSHP('/etc/x', 'y', 'UTF-8')",
      "SELECT ExportGeoJSON2('towns', 'geometry', '/tmp/x.geojson')",
      'SELECT * FROM pragma_database_list',
      'SELECT * FROM pragma_database_list()',
      'SELECT ?',
      "SELECT ST_Transform(geometry, 0, NULL, 'EPSG:2056', '+proj=longlat +nadgrids=/etc/passwd') FROM source",
      '-- only a comment',
    ];
    for (const sql of refused) {
      const err = await refusal(run({ sql }), 'invalid_transformation').catch((e: unknown) => {
        throw new Error(`not refused: ${sql}: ${String(e)}`);
      });
      expect(err.message, sql).not.toContain(tmp.dir);
    }
    expect(() => checkSelectSql('   ')).toThrow(DomainError);
    // strings and comments are not mistaken for statements
    expect(checkSelectSql("SELECT 'ATTACH; PRAGMA' AS note -- DROP\n FROM source").sql).toBe("SELECT 'ATTACH; PRAGMA' AS note FROM source");
    expect(checkSqlExpression("name = 'x;y'")).toBe("(name = 'x;y')");
    expect(() => checkSqlExpression('1) FROM source; DROP TABLE x --')).toThrow(DomainError);
    expect(() => checkSqlExpression('a, b')).toThrow(DomainError);
  });

  it('runs a Python step after the operations', async () => {
    if (!bwrapPath()) return console.warn('skipped: bubblewrap (bwrap) is missing');
    const script = [
      'import sys, geopandas as gpd',
      'df = gpd.read_file(sys.argv[1], layer="towns")',
      'df["from_python"] = df["name"].str.upper()',
      'df.to_file(sys.argv[2], layer="towns", driver="GPKG")',
      'print("ok", len(df))',
    ].join('\n');
    const r = await run({ operations: [{ type: 'filter', where: "region = 'BE'" }], python: { script, filename: 'upper.py' } });
    expect(r.python?.stdout).toContain('ok 3');
    const out = readLayer(r.dataset.path, 'towns');
    expect(out.features.map((f) => f.props.from_python)).toEqual(['BERN', 'THUN', 'BIEL/BIENNE']);
  });

  it('keeps the layer name when a Python step writes its one layer without naming it', async () => {
    if (!bwrapPath()) return console.warn('skipped: bubblewrap (bwrap) is missing');
    const single = vectorFromCsv(d('stops.gpkg'), 'id,kind,wkt\n1,bus,"POINT (7.44 46.95)"\n2,tram,"POINT (7.45 46.96)"\n', [
      '-a_srs',
      'EPSG:4326',
      '-nln',
      'stops',
      '-nlt',
      'POINT',
    ]);
    // geopandas names the layer after the file ("output") when the script does not say.
    const script =
      'import sys, geopandas as gpd\ndf = gpd.read_file(sys.argv[1])\ndf["kind"] = df["kind"].str.upper()\ndf.to_file(sys.argv[2], driver="GPKG")\n';
    const spec = { python: { script, filename: 'upper.py' } };
    const r = await applyPipeline(datasetAt(single), spec, work());
    expect(r.layers).toEqual(['stops']);
    expect(layerNames(r.dataset.path)).toEqual(['stops']);
    const preview = await transformDataPreview(datasetAt(single), spec, work(), 'stops', 10);
    expect(preview.rows.map((row) => row.kind)).toEqual(['BUS', 'TRAM']);
    const converted = await convertDataset(r.dataset, { outputFormat: 'GPKG' }, work());
    expect(converted.layers).toEqual(['stops']);
  });

  it('answers a bad pipeline the same way whether it is stored or run (one check)', async () => {
    const facts = { kind: 'vector' as const, layers: (await inspectDataset(datasetAt(gpkg))).layers };
    const cases: [PipelineSpec, string][] = [
      [{ layers: ['nope'], operations: [{ type: 'centroid' }] }, 'invalid_parameter'],
      [{ operations: [{ type: 'centroid' }] }, 'invalid_parameter'],
      [{ layers: ['towns'], operations: [{ type: 'centroid' }], sql: 'SELECT * FROM source' }, 'validation_error'],
      [{ layers: ['towns'], operations: [{ type: 'buffer', distance: 'far' }] }, 'validation_error'],
      [
        {
          layers: ['owners'],
          operations: [
            { type: 'rename_column', from: 'full_name', to: 'x' },
            { type: 'buffer', distance: 1 },
          ],
        },
        'invalid_transformation',
      ],
      [{ layers: ['towns'], sql: 'ATTACH DATABASE x AS y' }, 'invalid_transformation'],
    ];
    for (const [spec, code] of cases) {
      let stored: DomainError | undefined;
      try {
        checkPipeline(spec, facts);
      } catch (error) {
        stored = error as DomainError;
      }
      const ran = await refusal(applyPipeline(datasetAt(gpkg), spec, work()), code);
      expect(stored, JSON.stringify(spec)).toBeInstanceOf(DomainError);
      expect({ code: stored!.code, message: stored!.message }, JSON.stringify(spec)).toEqual({ code: ran.code, message: ran.message });
    }
  });

  it('previews a transformed layer from a sample of the input', async () => {
    const p = await transformDataPreview(datasetAt(gpkg), { layers: ['towns'], operations: [{ type: 'centroid' }] }, work(), 'towns', 2, { sampleFeatures: 3 });
    expect(p).toMatchObject({ layer: 'towns', geometry_type: 'POINT', preview_row_count: 2, truncated: true, row_count: null });
    expect(p.rows[0]).toMatchObject({ name: 'Bern', geometry: 'POINT' });
    const s = await transformSpatialPreview(
      datasetAt(gpkg),
      { layers: ['towns'], operations: [{ type: 'buffer', distance: 10, units: 'meters' }] },
      work(),
      'towns',
    );
    expect(s).toMatchObject({ returned_count: 4, truncated: false, source_crs: 'EPSG:2056' });
    expect((s.geojson.features[0] as { geometry: { type: string } }).geometry.type).toBe('Polygon');
  });
});
