import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertDataset } from '../../geo/isolation/index.js';
import { datasetAt } from '../../geo/datasets/dataset-files.js';
import { applyPipeline } from '../../geo/operations/pipeline.js';
import { skipWithoutDatabase } from '../support/database.js';
import { createPostgisDatabase, loadLayer, type PostgisDatabase } from '../support/postgis.js';
import { addGpkgLayer, readLayer, run, tempFolder, vectorFromCsv } from './support.js';

/*
 * Every operation whose output can be invalid ends valid (issue 34): reproject, dissolve, clip
 * and a Workspace convert with target_crs, on data that makes PostGIS's plain result invalid or
 * mixed, judged by PostGIS ST_IsValid on what was written.
 */
describe.skipIf(skipWithoutDatabase)('reproject, dissolve, clip and convert with target_crs end valid, as PostGIS judges them', { timeout: 300_000 }, () => {
  const tmp = tempFolder('ops-validity');
  const d = (n: string) => path.join(tmp.dir, n);
  let db: PostgisDatabase;
  let gpkg: string;
  let n = 0;
  const pipe = (layer: string, operations: unknown[]) => applyPipeline(datasetAt(gpkg), { layers: [layer], operations }, d(`work-${++n}`));
  const load = (file: string, layer: string, table: string) => loadLayer(db, file, layer, table);
  const invalidIn = async (table: string, label = 'name') =>
    (await db.sql<{ label: string }>(`SELECT ${label} AS label FROM ${table} WHERE NOT ST_IsValid(geom) ORDER BY fid`)).map((r) => r.label);
  const typesIn = async (table: string) =>
    (await db.sql<{ t: string }>(`SELECT DISTINCT GeometryType(geom) AS t FROM ${table} WHERE geom IS NOT NULL ORDER BY 1`)).map((r) => r.t);

  beforeAll(async () => {
    db = await createPostgisDatabase();
    gpkg = d('world.gpkg');
    run('ogr2ogr', ['-f', 'GPKG', gpkg, path.resolve('test/fixtures/natural-earth/natural-earth-110m.gpkg')]);
    // Parcels in a projected CRS: two overlapping squares and a bow-tie (self-intersecting) in
    // group a, a bow-tie alone in group b; a square whose clip touches its west edge along a line.
    addGpkgLayer(
      gpkg,
      'parcels',
      [
        'name,grp,wkt',
        'square1,a,"MULTIPOLYGON (((0 0,2000 0,2000 2000,0 2000,0 0)))"',
        'square2,a,"MULTIPOLYGON (((1000 1000,3000 1000,3000 3000,1000 3000,1000 1000)))"',
        'bowtie1,a,"MULTIPOLYGON (((4000 0,6000 2000,6000 0,4000 2000,4000 0)))"',
        'bowtie2,b,"MULTIPOLYGON (((10000 0,12000 2000,12000 0,10000 2000,10000 0)))"',
        'square3,c,"MULTIPOLYGON (((20000 0,30000 0,30000 10000,20000 10000,20000 0)))"',
      ].join('\n'),
      ['-a_srs', 'EPSG:3857', '-nlt', 'MULTIPOLYGON'],
    );
    // The clip area: one polygon over square3's east half and the bow-ties, one touching square3's west edge only.
    addGpkgLayer(
      gpkg,
      'area',
      [
        'zone,wkt',
        'east,"POLYGON ((25000 -1000,35000 -1000,35000 11000,25000 11000,25000 -1000))"',
        'west,"POLYGON ((15000 0,20000 0,20000 10000,15000 10000,15000 0))"',
        'bowties,"POLYGON ((3500 -1000,13000 -1000,13000 1000,3500 1000,3500 -1000))"',
      ].join('\n'),
      ['-a_srs', 'EPSG:3857', '-nlt', 'POLYGON'],
    );
    for (const layer of ['countries', 'parcels', 'area']) load(gpkg, layer, layer);
  });
  afterAll(async () => {
    await db?.drop();
    tmp.remove();
  });

  it('reproject: world countries to polar stereographic (EPSG:3995, 3031) are all valid, Russia whole, areas as PostGIS repairs them', async () => {
    // PostGIS's own transform folds Russia over itself along the antimeridian: the case is real.
    // Arctic and Antarctic polar stereographic: PostGIS's own transform folds Russia over itself
    // along the antimeridian in both, and Antarctica round the pole in the Arctic one.
    for (const srid of [3995, 3031]) {
      const plain = await db.sql<{ name: string }>(`SELECT name FROM countries WHERE NOT ST_IsValid(ST_Transform(geom, ${srid})) ORDER BY fid`);
      expect(plain.map((r) => r.name)).toContain('Russia');
      const result = await pipe('countries', [{ type: 'reproject', target_crs: `EPSG:${srid}` }]);
      expect(result.warnings.filter((w) => w.code === 'geometry_invalid')).toEqual([]);
      load(result.dataset.path, 'countries', 'polar');
      expect(await invalidIn('polar'), `EPSG:${srid}`).toEqual([]);
      // The layer declares MultiPolygon; the repaired ones stay multipolygons.
      expect(await typesIn('polar')).toEqual(['MULTIPOLYGON']);
      const rows = await db.sql<{ name: string; ours: number; ref: number }>(
        `SELECT c.name, ST_Area(p.geom) AS ours, ST_Area(ST_MakeValid(ST_Transform(c.geom, ${srid}))) AS ref
         FROM countries c LEFT JOIN polar p ON p.name = c.name`,
      );
      expect(rows).toHaveLength(177);
      for (const r of rows) expect(r.ours / r.ref, `${r.name} in EPSG:${srid}`).toBeCloseTo(1, 6);
    }
  });

  it('dissolve: overlapping squares and a bow-tie merge into one valid multipolygon per group, areas as PostGIS ST_Union(ST_MakeValid) gives', async () => {
    // GEOS refuses to union a bow-tie: without repair the groups would come out empty.
    const result = await pipe('parcels', [
      { type: 'filter', where: "grp IN ('a', 'b')" },
      { type: 'dissolve', by: ['grp'] },
    ]);
    load(result.dataset.path, 'parcels', 'dissolved');
    expect(await invalidIn('dissolved', 'grp')).toEqual([]);
    expect(await typesIn('dissolved')).toEqual(['MULTIPOLYGON']);
    const rows = await db.sql<{ grp: string; ours: number | null; ref: number }>(
      `SELECT r.grp, ST_Area(o.geom) AS ours, r.area AS ref
       FROM (SELECT grp, ST_Area(ST_Union(ST_MakeValid(geom))) AS area FROM parcels WHERE grp IN ('a', 'b') GROUP BY grp) r
       LEFT JOIN dissolved o USING (grp) ORDER BY r.grp`,
    );
    // a: 2 squares of 4 km² overlapping by 1 km², and the bow-tie's two triangles of 1 km² each.
    expect(rows.map((r) => r.grp)).toEqual(['a', 'b']);
    expect(rows[0]!.ref).toBeCloseTo(9_000_000, 0);
    for (const r of rows) expect(r.ours, r.grp).toBeCloseTo(r.ref, 3);
  });

  it('clip: a cut that gives PostGIS a polygon plus a line keeps the polygon (a multipolygon layer stays one), and a bow-tie is clipped, not lost', async () => {
    const [mixed] = await db.sql<{ t: string }>(
      "SELECT GeometryType(ST_Intersection(p.geom, (SELECT ST_Union(geom) FROM area))) AS t FROM parcels p WHERE name = 'square3'",
    );
    expect(mixed!.t).toBe('GEOMETRYCOLLECTION');
    const result = await pipe('parcels', [{ type: 'clip', clip_layer: 'area' }]);
    load(result.dataset.path, 'parcels', 'clipped');
    expect(await invalidIn('clipped')).toEqual([]);
    expect(await typesIn('clipped')).toEqual(['MULTIPOLYGON']);
    const rows = await db.sql<{ name: string; ours: number | null; ref: number }>(
      `SELECT p.name, ST_Area(o.geom) AS ours,
              ST_Area(ST_CollectionExtract(ST_Intersection(ST_MakeValid(p.geom), (SELECT ST_Union(geom) FROM area)), 3)) AS ref
       FROM parcels p LEFT JOIN clipped o USING (name) WHERE ST_Intersects(ST_MakeValid(p.geom), (SELECT ST_Union(geom) FROM area)) ORDER BY p.fid`,
    );
    expect(rows.map((r) => r.name)).toEqual(['bowtie1', 'bowtie2', 'square3']);
    for (const r of rows) expect(r.ours, r.name).toBeCloseTo(r.ref, 3);
    // The same with clip_bbox over the bow-ties.
    const boxed = await pipe('parcels', [{ type: 'clip_bbox', bbox: [3500, -1000, 13000, 1000], crs: 'EPSG:3857' }]);
    const features = readLayer(boxed.dataset.path, 'parcels').features;
    expect(features.map((f) => f.props.name)).toEqual(['bowtie1', 'bowtie2']);
    expect(features.map((f) => f.type)).toEqual(['MULTIPOLYGON', 'MULTIPOLYGON']);
  });

  it('what cannot be made valid (a polygon collapsed to a line along the central meridian) is kept and reported as geometry_invalid with its row; the rest is repaired', async () => {
    const broken = d('broken.gpkg');
    vectorFromCsv(
      broken,
      'name,wkt\nfine,"POLYGON ((0 0,1 0,1 1,0 1,0 0))"\nbowtie,"POLYGON ((0 0,2 2,2 0,0 2,0 0))"\ncollapsed,"POLYGON ((0 0,0 1000,0 2000,0 0))"\n',
      ['-f', 'GPKG', '-a_srs', 'EPSG:3857', '-nlt', 'POLYGON', '-nln', 'broken'],
    );
    for (const operations of [[{ type: 'make_valid' }], [{ type: 'reproject', target_crs: 'EPSG:3395' }]]) {
      const op = operations[0]!.type;
      const result = await applyPipeline(datasetAt(broken), { layers: ['broken'], operations }, d(`work-${++n}`));
      expect(
        result.warnings.filter((w) => w.code === 'geometry_invalid'),
        op,
      ).toEqual([
        expect.objectContaining({
          layer: 'broken',
          details: { operation: op, features: [3] },
          message: expect.stringContaining('1 results could not be made valid (rows 3)'),
        }),
      ]);
      load(result.dataset.path, 'broken', 'repaired');
      const rows = await db.sql<{ name: string; valid: boolean; t: string }>(
        'SELECT name, ST_IsValid(geom) AS valid, GeometryType(geom) AS t FROM repaired ORDER BY fid',
      );
      // The bow-tie comes out as its two triangles; the collapsed polygon keeps its geometry (no line in a polygon layer).
      expect(rows, op).toEqual([
        { name: 'fine', valid: true, t: 'POLYGON' },
        { name: 'bowtie', valid: true, t: 'MULTIPOLYGON' },
        { name: 'collapsed', valid: false, t: 'POLYGON' },
      ]);
    }
  });

  it('a Workspace convert with target_crs writes valid geometries of the declared type (ogr2ogr -makevalid)', async () => {
    const result = await convertDataset(datasetAt(gpkg), { outputFormat: 'GPKG', targetCrs: 'EPSG:3995', layers: ['countries'] }, d('convert'));
    load(path.join(d('convert'), result.filename), 'countries', 'converted');
    expect(await invalidIn('converted')).toEqual([]);
    expect(await typesIn('converted')).toEqual(['MULTIPOLYGON']);
    const [{ n: count } = { n: 0 }] = await db.sql<{ n: number }>('SELECT count(*)::int AS n FROM converted');
    expect(count).toBe(177);
    const [russia] = await db.sql<{ ratio: number }>(
      "SELECT ST_Area(v.geom) / ST_Area(ST_MakeValid(ST_Transform(c.geom, 3995))) AS ratio FROM converted v JOIN countries c USING (name) WHERE name = 'Russia'",
    );
    expect(russia!.ratio).toBeCloseTo(1, 6);
  });
});
