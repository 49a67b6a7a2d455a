import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { datasetAt, prepareUpload } from '../../geo/datasets/dataset-files.js';
import { applyPipeline, type PipelineSpec } from '../../geo/operations/pipeline.js';
import { skipWithoutDatabase } from '../support/database.js';
import { createPostgisDatabase, loadLayer, type PostgisDatabase } from '../support/postgis.js';
import { addGpkgLayer, readLayer, refusal, run, tempFolder, write } from './support.js';

/*
 * The operations FME users reach for (issue 34, finding 5), each on Natural Earth data against a
 * reference PostGIS computes from the same data: clip, spatial_join, attribute_join, merge,
 * calculate_geometry, densify, deduplicate, sort.
 */
describe.skipIf(skipWithoutDatabase)('clip, joins, merge, measures, densify, deduplicate, sort against PostGIS', { timeout: 300_000 }, () => {
  const tmp = tempFolder('new-ops');
  const d = (n: string) => path.join(tmp.dir, n);
  let db: PostgisDatabase;
  let gpkg: string;
  let n = 0;
  const pipe = (layer: string, operations: unknown[], extra: Partial<PipelineSpec> = {}, options = {}) =>
    applyPipeline(datasetAt(gpkg), { layers: [layer], operations, ...extra }, d(`work-${++n}`), options);
  const load = (file: string, layer: string, table: string) => loadLayer(db, file, layer, table);

  beforeAll(async () => {
    db = await createPostgisDatabase();
    gpkg = d('world.gpkg');
    run('ogr2ogr', ['-f', 'GPKG', gpkg, path.resolve('test/fixtures/natural-earth/natural-earth-110m.gpkg')]);
    // A study area over the Alps, and a table of capitals keyed by ISO code (one country twice).
    addGpkgLayer(gpkg, 'alps', 'zone,wkt\nalps,"POLYGON ((5 44,16 44,16 48.5,5 48.5,5 44))"\n', ['-a_srs', 'EPSG:4326', '-nlt', 'POLYGON']);
    addGpkgLayer(gpkg, 'capitals', 'iso,capital\nCHE,Bern\nAUT,Wien\nFRA,Paris\nITA,Roma\nITA,Rome\nDEU,Berlin\n');
    // The countries' outlines as lines, for lengths.
    run('ogr2ogr', [
      '-update',
      '-nln',
      'outlines',
      '-nlt',
      'MULTILINESTRING',
      gpkg,
      path.resolve('test/fixtures/natural-earth/natural-earth-110m.gpkg'),
      'countries',
    ]);
    for (const layer of ['countries', 'cities', 'alps', 'capitals', 'outlines']) load(gpkg, layer, layer);
  });
  afterAll(async () => {
    await db?.drop();
    tmp.remove();
  });

  it('clip: the countries cut to the study area, areas as PostGIS ST_Intersection gives them', async () => {
    const result = await pipe('countries', [{ type: 'clip', clip_layer: 'alps' }]);
    load(result.dataset.path, 'countries', 'clipped');
    const rows = await db.sql<{ name: string; ours: number; ref: number }>(
      `SELECT c.name, ST_Area(o.geom) AS ours, ST_Area(ST_Intersection(c.geom, a.geom)) AS ref
       FROM countries c CROSS JOIN alps a LEFT JOIN clipped o ON o.name = c.name
       WHERE ST_Intersects(c.geom, a.geom) AND NOT ST_IsEmpty(ST_CollectionExtract(ST_Intersection(c.geom, a.geom), 3))`,
    );
    const written = (await db.sql<{ n: number }>('SELECT count(*)::int AS n FROM clipped'))[0]!.n;
    expect(rows.length).toBeGreaterThan(5);
    expect(written).toBe(rows.length);
    for (const r of rows) expect(r.ours / r.ref, r.name).toBeCloseTo(1, 9);
    const valid = (await db.sql<{ valid: number }>('SELECT count(*) FILTER (WHERE ST_IsValid(geom))::int AS valid FROM clipped'))[0]!.valid;
    expect(valid).toBe(written);
  });

  it('spatial_join within: each city gets the country it lies in, as PostGIS ST_Within says', async () => {
    const result = await pipe('cities', [{ type: 'spatial_join', join_layer: 'countries', predicate: 'within', columns: ['name', 'iso_a3'] }]);
    const ours = new Map(readLayer(result.dataset.path, 'cities').features.map((f) => [String(f.props.name), f.props.join_name ?? null]));
    const ref = await db.sql<{ city: string; country: string | null }>(
      `SELECT ci.name AS city, (SELECT co.name FROM countries co WHERE ST_Within(ci.geom, co.geom) ORDER BY co.fid LIMIT 1) AS country FROM cities ci`,
    );
    expect(ours.size).toBe(243);
    expect(ref.filter((r) => r.country !== null).length).toBeGreaterThan(150);
    for (const r of ref) expect(ours.get(r.city), r.city).toBe(r.country);
  });

  it('spatial_join nearest: the nearest country and its distance on the ellipsoid, as PostGIS geography says', async () => {
    const result = await pipe('cities', [
      { type: 'filter', where: "name IN ('Reykjavík', 'Suva', 'Singapore', 'Nuku''alofa', 'Valletta', 'Victoria', 'Bern')" },
      { type: 'spatial_join', join_layer: 'countries', predicate: 'nearest', columns: ['name'], distance_column: 'km', units: 'kilometers' },
    ]);
    const ours = readLayer(result.dataset.path, 'cities').features;
    expect(ours.length).toBeGreaterThanOrEqual(5);
    for (const f of ours) {
      const [ref] = await db.sql<{ country: string; km: number }>(
        `SELECT co.name AS country, ST_Distance(ci.geom::geography, co.geom::geography) / 1000 AS km
         FROM cities ci, countries co WHERE ci.name = $1 ORDER BY ST_Distance(ci.geom::geography, co.geom::geography), co.fid LIMIT 1`,
        [f.props.name],
      );
      expect(f.props.join_name, String(f.props.name)).toBe(ref!.country);
      expect(Math.abs(Number(f.props.km) - ref!.km), String(f.props.name)).toBeLessThan(Math.max(0.5, ref!.km * 0.005));
    }
  });

  it('spatial_join intersects, every match: each country with every country it touches, as a PostGIS ST_Intersects join gives them', async () => {
    const result = await pipe('countries', [{ type: 'spatial_join', join_layer: 'countries', predicate: 'intersects', columns: ['name'], one_to_many: 'all' }]);
    const ours = readLayer(result.dataset.path, 'countries').features.map((f) => [f.props.name, f.props.join_name ?? null]);
    const ref = await db.sql<{ name: string; other: string | null }>(
      'SELECT a.name, b.name AS other FROM countries a LEFT JOIN countries b ON ST_Intersects(a.geom, b.geom) ORDER BY a.fid, b.fid',
    );
    // Every country meets itself, and most meet a neighbour: many more rows than countries.
    expect(ref.length).toBeGreaterThan(177 + 300);
    expect(ours).toEqual(ref.map((r) => [r.name, r.other]));
    // The first match only, unmatched cities dropped: the first country (in layer order) each city touches.
    const first = await pipe('cities', [{ type: 'spatial_join', join_layer: 'countries', predicate: 'intersects', columns: ['name'], keep_unmatched: false }]);
    const firstRef = await db.sql<{ city: string; country: string }>(
      `SELECT ci.name AS city, (SELECT co.name FROM countries co WHERE ST_Intersects(ci.geom, co.geom) ORDER BY co.fid LIMIT 1) AS country
       FROM cities ci WHERE EXISTS (SELECT 1 FROM countries co WHERE ST_Intersects(ci.geom, co.geom)) ORDER BY ci.fid`,
    );
    expect(firstRef.length).toBeGreaterThan(150);
    expect(readLayer(first.dataset.path, 'cities').features.map((f) => [f.props.name, f.props.join_name])).toEqual(firstRef.map((r) => [r.city, r.country]));
  });

  it('spatial_join contains: each country with the cities it contains, every match or the first, as PostGIS ST_Contains gives them', async () => {
    const all = await pipe('countries', [{ type: 'spatial_join', join_layer: 'cities', predicate: 'contains', columns: ['name'], one_to_many: 'all' }]);
    const ref = await db.sql<{ country: string; city: string | null }>(
      'SELECT co.name AS country, ci.name AS city FROM countries co LEFT JOIN cities ci ON ST_Contains(co.geom, ci.geom) ORDER BY co.fid, ci.fid',
    );
    // Some countries hold several of the cities, some none (kept, with nulls).
    const perCountry = new Map<string, number>();
    for (const r of ref) if (r.city) perCountry.set(r.country, (perCountry.get(r.country) ?? 0) + 1);
    expect(Math.max(...perCountry.values())).toBeGreaterThan(1);
    expect(ref.some((r) => r.city === null)).toBe(true);
    expect(readLayer(all.dataset.path, 'countries').features.map((f) => [f.props.name, f.props.join_name ?? null])).toEqual(
      ref.map((r) => [r.country, r.city]),
    );
    const first = await pipe('countries', [{ type: 'spatial_join', join_layer: 'cities', predicate: 'contains', columns: ['name'] }]);
    const firstRef = await db.sql<{ country: string; city: string | null }>(
      'SELECT co.name AS country, (SELECT ci.name FROM cities ci WHERE ST_Contains(co.geom, ci.geom) ORDER BY ci.fid LIMIT 1) AS city FROM countries co ORDER BY co.fid',
    );
    expect(readLayer(first.dataset.path, 'countries').features.map((f) => [f.props.name, f.props.join_name ?? null])).toEqual(
      firstRef.map((r) => [r.country, r.city]),
    );
  });

  it('attribute_join: by key from a table layer and from a CSV in another Workspace, first match or every match', async () => {
    const first = await pipe('countries', [{ type: 'attribute_join', join_layer: 'capitals', key: 'iso_a3', join_key: 'iso' }]);
    const all = await pipe('countries', [
      { type: 'attribute_join', join_layer: 'capitals', key: 'iso_a3', join_key: 'iso', one_to_many: 'all', keep_unmatched: false },
    ]);
    const ref = await db.sql<{ name: string; capital: string }>(
      'SELECT c.name, k.capital FROM countries c JOIN capitals k ON k.iso = c.iso_a3 ORDER BY c.fid, k.fid',
    );
    const firstRows = readLayer(first.dataset.path, 'countries').features;
    expect(firstRows).toHaveLength(177);
    expect(firstRows.filter((f) => f.props.capital !== null).map((f) => [f.props.name, f.props.capital])).toEqual(
      [...new Map(ref.map((r) => [r.name, r.capital] as const)).entries()]
        .filter(([name]) => ref.find((r) => r.name === name))
        .map(([name]) => [name, ref.find((r) => r.name === name)!.capital]),
    );
    expect(readLayer(all.dataset.path, 'countries').features.map((f) => [f.props.name, f.props.capital])).toEqual(ref.map((r) => [r.name, r.capital]));
    // The same table as a CSV uploaded to another Workspace (its codes are text, the key too).
    const csv = write(d('capitals.csv'), 'iso,capital\nCHE,Bern\nAUT,Wien\n');
    const other = await prepareUpload(csv, 'capitals.csv', d('other-ws'), { maxUncompressedBytes: 1e8 });
    const viaCsv = await pipe(
      'countries',
      [{ type: 'attribute_join', join_layer: 'capitals', key: 'iso_a3', join_key: 'iso', workspace_id: 'ws_other', keep_unmatched: false }],
      {},
      {
        datasets: async (id: string) => {
          if (id !== 'ws_other') throw new Error('unexpected Workspace');
          return other;
        },
      },
    );
    expect(readLayer(viaCsv.dataset.path, 'countries').features.map((f) => [f.props.name, f.props.capital])).toEqual(
      [
        ['Austria', 'Wien'],
        ['Switzerland', 'Bern'],
      ].sort((a, b) => firstRows.findIndex((f) => f.props.name === a[0]) - firstRows.findIndex((f) => f.props.name === b[0])),
    );
    // Outside a Workspace, another Workspace cannot be named.
    await refusal(pipe('countries', [{ type: 'attribute_join', join_layer: 'capitals', key: 'iso_a3', workspace_id: 'ws_other' }]), 'invalid_transformation');
  });

  it('merge: countries and the study area in one layer, columns aligned by name, as PostGIS UNION ALL gives them', async () => {
    const result = await pipe('countries', [{ type: 'merge', merge_layers: ['alps'], source_column: 'layer_name' }]);
    const layer = readLayer(result.dataset.path, 'countries');
    expect(layer.fields.map((f) => f.name)).toEqual(['pop_est', 'continent', 'name', 'iso_a3', 'gdp_md_est', 'zone', 'layer_name']);
    const ref = await db.sql<{ name: string | null; zone: string | null; layer_name: string }>(
      `SELECT name, NULL AS zone, 'countries' AS layer_name FROM countries UNION ALL SELECT NULL, zone, 'alps' FROM alps`,
    );
    expect(layer.features.map((f) => ({ name: f.props.name ?? null, zone: f.props.zone ?? null, layer_name: f.props.layer_name }))).toEqual(ref);
  });

  it('calculate_geometry: geodesic area and perimeter on longitude/latitude equal PostGIS geography; planar in a projected CRS', async () => {
    const result = await pipe('countries', [
      { type: 'calculate_geometry', column: 'area_km2', measure: 'area', units: 'square_kilometers' },
      { type: 'calculate_geometry', column: 'perimeter_mi', measure: 'perimeter', units: 'miles' },
    ]);
    const ours = new Map(readLayer(result.dataset.path, 'countries').features.map((f) => [f.props.name, f.props]));
    const ref = await db.sql<{ name: string; km2: number; mi: number }>(
      'SELECT name, ST_Area(geom::geography) / 1e6 AS km2, ST_Perimeter(geom::geography) / 1609.344 AS mi FROM countries',
    );
    for (const r of ref) {
      expect(Number(ours.get(r.name)!.area_km2) / r.km2, r.name).toBeCloseTo(1, 6);
      expect(Number(ours.get(r.name)!.perimeter_mi) / r.mi, r.name).toBeCloseTo(1, 6);
    }
    const swiss = await pipe('countries', [
      { type: 'filter', where: "name = 'Switzerland'" },
      { type: 'reproject', target_crs: 'EPSG:2056' },
      { type: 'calculate_geometry', column: 'ha', measure: 'area', units: 'hectares' },
    ]);
    const [planar] = await db.sql<{ ha: number }>("SELECT ST_Area(ST_Transform(geom, 2056)) / 1e4 AS ha FROM countries WHERE name = 'Switzerland'");
    expect(Number(readLayer(swiss.dataset.path, 'countries').features[0]!.props.ha) / planar!.ha).toBeCloseTo(1, 4);
  });

  it('calculate_geometry length: geodesic on longitude/latitude within 0.1 % of PostGIS geography; in US feet on EPSG:2263 from the CRS unit', async () => {
    const result = await pipe('outlines', [{ type: 'calculate_geometry', column: 'len_km', measure: 'length', units: 'kilometers' }]);
    const ours = new Map(readLayer(result.dataset.path, 'outlines').features.map((f) => [f.props.name, Number(f.props.len_km)]));
    const ref = await db.sql<{ name: string; km: number }>('SELECT name, ST_Length(geom::geography) / 1000 AS km FROM outlines');
    expect(ref).toHaveLength(177);
    for (const r of ref) expect(Math.abs(ours.get(r.name)! / r.km - 1), r.name).toBeLessThan(0.001);
    // EPSG:2263 is in US survey feet (1200/3937 m): lengths in metres and in (international) feet.
    const usa = await pipe('outlines', [
      { type: 'filter', where: "name = 'United States of America'" },
      { type: 'reproject', target_crs: 'EPSG:2263' },
      { type: 'calculate_geometry', column: 'len_ft', measure: 'length', units: 'feet' },
      { type: 'calculate_geometry', column: 'len_m', measure: 'length' },
      { type: 'calculate_geometry', column: 'len_src', measure: 'length', units: 'source' },
    ]);
    const [planar] = await db.sql<{ us_ft: number }>(
      "SELECT ST_Length(ST_Transform(geom, 2263)) AS us_ft FROM outlines WHERE name = 'United States of America'",
    );
    const props = readLayer(usa.dataset.path, 'outlines').features[0]!.props;
    expect(Number(props.len_src) / planar!.us_ft).toBeCloseTo(1, 6);
    expect(Number(props.len_m) / ((planar!.us_ft * 1200) / 3937)).toBeCloseTo(1, 6);
    expect(Number(props.len_ft) / ((planar!.us_ft * 1200) / 3937 / 0.3048)).toBeCloseTo(1, 6);
  });

  it('densify: no segment longer than 100 km on the ellipsoid, about as many vertices as PostGIS ST_Segmentize(geography) adds', async () => {
    const result = await pipe('countries', [
      { type: 'filter', where: "name IN ('Canada', 'Australia', 'Brazil', 'Fiji')" },
      { type: 'densify', max_segment: 100, units: 'kilometers' },
    ]);
    load(result.dataset.path, 'countries', 'densified');
    const rows = await db.sql<{ name: string; longest_km: number; ours: number; ref: number; before: number; valid: boolean }>(
      `SELECT d.name, (SELECT max(ST_Length(s.geom::geography)) FROM ST_DumpSegments(d.geom) s) / 1000 AS longest_km,
              ST_NPoints(d.geom) AS ours, ST_NPoints(ST_Segmentize(c.geom::geography, 100000)::geometry) AS ref, ST_NPoints(c.geom) AS before, ST_IsValid(d.geom) AS valid
       FROM densified d JOIN countries c USING (name)`,
    );
    expect(rows).toHaveLength(4);
    for (const r of rows) {
      expect(r.longest_km, r.name).toBeLessThanOrEqual(100.01);
      expect(r.valid, r.name).toBe(true);
      if (r.ref > r.before) expect(Math.abs(r.ours / r.ref - 1), r.name).toBeLessThan(0.05);
    }
    expect(rows.some((r) => r.ours > r.before)).toBe(true);
  });

  it('deduplicate and sort: the rows PostGIS DISTINCT ON and ORDER BY … NULLS LAST give, in that order', async () => {
    const dedup = await pipe('countries', [
      { type: 'deduplicate', columns: ['continent'], compare_geometry: false },
      { type: 'sort', by: [{ column: 'continent', descending: true }] },
    ]);
    const ref = await db.sql<{ continent: string; name: string }>(
      'SELECT continent, name FROM (SELECT DISTINCT ON (continent) continent, name, fid FROM countries ORDER BY continent, fid) x ORDER BY continent DESC',
    );
    expect(readLayer(dedup.dataset.path, 'countries').features.map((f) => ({ continent: f.props.continent, name: f.props.name }))).toEqual(ref);
    const sorted = await pipe('cities', [{ type: 'sort', by: [{ column: 'name' }] }]);
    const names = await db.sql<{ name: string }>('SELECT name FROM cities ORDER BY name COLLATE "C", fid');
    expect(readLayer(sorted.dataset.path, 'cities').features.map((f) => f.props.name)).toEqual(names.map((r) => r.name));
    // Whole duplicates: every row twice (a merge of the layer with itself), then deduplicated.
    const twice = await pipe('cities', [{ type: 'merge', merge_layers: ['cities'] }, { type: 'deduplicate' }]);
    expect(readLayer(twice.dataset.path, 'cities').features).toHaveLength(243);
  });
});
