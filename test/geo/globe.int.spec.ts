import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { datasetAt } from '../../geo/datasets/dataset-files.js';
import { applyPipeline } from '../../geo/operations/pipeline.js';
import { skipWithoutDatabase } from '../support/database.js';
import { createPostgisDatabase, loadLayer, type PostgisDatabase } from '../support/postgis.js';
import { readLayer, run, tempFolder, vectorFromCsv } from './support.js';

/*
 * Metric buffers and simplification on longitude/latitude data, on Natural Earth's countries
 * (test/fixtures/natural-earth): valid everywhere, whole across 180°, reaching the poles, and
 * areas within 1 % of references computed elsewhere: PostGIS's geography buffer on small pieces
 * where PostGIS is right, and pyproj in one local projection for the features PostGIS gets wrong
 * (across 180° and over the pole).
 */

const NE = path.resolve('test/fixtures/natural-earth/natural-earth-110m.gpkg');

/** Geodesic areas (pyproj Geod, km²) of a layer's features by name, and reference buffers of named features computed with pyproj alone. */
const REFERENCE = `
import json, sys
from osgeo import ogr
from pyproj import Geod, Transformer
from shapely import wkb
from shapely.affinity import translate
from shapely.ops import transform, unary_union
geod = Geod(ellps="WGS84")
def area(g):
    return abs(geod.geometry_area_perimeter(g)[0]) / 1e6
def read(path, layer):
    ds = ogr.Open(path); out = {}
    for f in ds.GetLayerByName(layer):
        g = f.GetGeometryRef()
        out[f.GetField("name")] = wkb.loads(bytes(g.ExportToIsoWkb())) if g else None
    return out
ours = read(sys.argv[1], sys.argv[2])
source = read(sys.argv[3], "countries")
def unwrapped(g):
    return unary_union([translate(p, 360) if p.centroid.x < 0 else p for p in g.geoms])
def laea(lat, lon):
    return Transformer.from_pipeline(f"+proj=laea +lat_0={lat} +lon_0={lon} +ellps=WGS84")
refs = {}
# Fiji: moved into one piece east of 180°, buffered in an equal-area projection centred on it.
t = laea(-17, 179)
refs["Fiji"] = transform(lambda x, y: t.transform(x, y), unwrapped(source["Fiji"])).buffer(10000, 16).area / 1e6
# Antarctica: an equal-area projection centred on the South Pole (the -90 edge goes to the centre).
t = laea(-90, 0)
refs["Antarctica"] = transform(lambda x, y: t.transform(x, y), source["Antarctica"]).buffer(0).buffer(10000, 16).area / 1e6
print(json.dumps({"ours": {k: area(v) for k, v in ours.items() if v is not None}, "refs": refs}))
`;

describe.skipIf(skipWithoutDatabase)('metric operations on the whole globe (Natural Earth countries)', { timeout: 300_000 }, () => {
  const tmp = tempFolder('globe');
  const d = (n: string) => path.join(tmp.dir, n);
  let db: PostgisDatabase;
  let buffered: string;
  let warnings: unknown[];
  const load = (file: string, layer: string, table: string) => loadLayer(db, file, layer, table, ['-nlt', 'PROMOTE_TO_MULTI']);

  beforeAll(async () => {
    db = await createPostgisDatabase();
    const result = await applyPipeline(datasetAt(NE), { layers: ['countries'], operations: [{ type: 'buffer', distance: 10_000 }] }, d('work'));
    buffered = result.dataset.path;
    warnings = result.warnings;
    load(NE, 'countries', 'countries');
    load(buffered, 'countries', 'buffered');
  });
  afterAll(async () => {
    await db?.drop();
    tmp.remove();
  });

  it('buffers every country by 10 km (the default unit is metres) into valid geometry, without a warning', async () => {
    expect(warnings).toEqual([]);
    const rows = await db.sql<{ n: number; valid: number }>('SELECT count(*)::int AS n, count(*) FILTER (WHERE ST_IsValid(geom))::int AS valid FROM buffered');
    expect(rows[0]).toEqual({ n: 177, valid: 177 });
  });

  it('keeps Fiji and Russia whole across 180°: parts meet at the antimeridian, none wraps round the world', async () => {
    for (const name of ['Fiji', 'Russia']) {
      const [row] = await db.sql<{ xmin: number; xmax: number; widest: number; parts: number; joined: number; across: number }>(
        `SELECT ST_XMin(geom) AS xmin, ST_XMax(geom) AS xmax,
                (SELECT max(ST_XMax(p.geom) - ST_XMin(p.geom)) FROM ST_Dump(geom) p) AS widest,
                ST_NumGeometries(geom) AS parts,
                ST_NumGeometries(j.g) AS joined,
                (SELECT count(*) FROM ST_Dump(j.g) p WHERE ST_XMin(p.geom) < 180 AND ST_XMax(p.geom) > 180)::int AS across
         FROM buffered, LATERAL (SELECT ST_Union(ST_ShiftLongitude(p.geom)) AS g FROM ST_Dump(buffered.geom) p) j WHERE name = $1`,
        [name],
      );
      expect(row, name).toBeDefined();
      expect([row!.xmin, row!.xmax], name).toEqual([-180, 180]);
      // No stripe from -180 to 180: every part is narrower than half the world.
      expect(row!.widest, name).toBeLessThan(180);
      // Seen from the other side of the globe (longitudes 0–360), parts cut at 180° are one piece again.
      expect(row!.joined, name).toBeLessThan(row!.parts);
      expect(row!.across, name).toBeGreaterThan(0);
    }
  });

  it('keeps Antarctica reaching the South Pole', async () => {
    const [row] = await db.sql<{ ymin: number; xmin: number; xmax: number }>(
      "SELECT ST_YMin(geom) AS ymin, ST_XMin(geom) AS xmin, ST_XMax(geom) AS xmax FROM buffered WHERE name = 'Antarctica'",
    );
    expect(row).toEqual({ ymin: -90, xmin: -180, xmax: 180 });
  });

  it('gives areas within 1 % of geodesic references', async () => {
    // PostGIS: geography buffers of small pieces (each in a projection PostGIS picks for it),
    // joined; Russia's in longitudes 0–360, where it is one piece.
    const special = ['Fiji', 'Russia', 'Antarctica'];
    const refs = await db.sql<{ name: string; ref_km2: number }>(
      `WITH p AS (SELECT name, (ST_Dump(ST_Subdivide(geom, 24))).geom AS g FROM countries WHERE name <> ALL($1)),
            b AS (SELECT name, ST_CollectionExtract(ST_MakeValid(ST_Buffer(g::geography, 10000)::geometry), 3) AS g FROM p),
            s AS (SELECT name, CASE WHEN name = 'Russia' THEN ST_ShiftLongitude(g) ELSE g END AS g FROM b)
       SELECT name, ST_Area(ST_Union(g)::geography) / 1e6 AS ref_km2 FROM s GROUP BY name`,
      [['Fiji', 'Antarctica']],
    );
    const py = JSON.parse(run('/usr/bin/python3', ['-c', REFERENCE, buffered, 'countries', NE])) as {
      ours: Record<string, number>;
      refs: Record<string, number>;
    };
    const reference = new Map<string, number>([...refs.map((r) => [r.name, r.ref_km2] as const), ...Object.entries(py.refs)]);
    expect(reference.size).toBe(177);
    const off: string[] = [];
    for (const [name, ref] of reference) {
      const ours = py.ours[name]!;
      if (Math.abs(ours / ref - 1) > 0.01) off.push(`${name}: ${ours.toFixed(0)} km² against ${ref.toFixed(0)} km²`);
    }
    expect(off).toEqual([]);
    for (const name of special) expect(py.ours[name], name).toBeGreaterThan(0);
  });

  it('warns about a 1-degree simplify in source units on EPSG:4326, and keeps Switzerland recognisable with the README example', async () => {
    const degrees = await applyPipeline(datasetAt(NE), { layers: ['countries'], operations: [{ type: 'simplify', tolerance: 1, units: 'source' }] }, d('deg'));
    expect(degrees.warnings).toEqual([
      expect.objectContaining({ code: 'units_degrees', layer: 'countries', message: expect.stringMatching(/tolerance 1 is in degrees .*EPSG:4326.*111 km/) }),
    ]);
    // README.md and the clients' README: {"type": "simplify", "tolerance": 1}, now one metre.
    const readme = await applyPipeline(datasetAt(NE), { layers: ['countries'], operations: [{ type: 'simplify', tolerance: 1 }] }, d('readme'));
    expect(readme.warnings).toEqual([]);
    const swiss = readLayer(readme.dataset.path, 'countries').features.find((f) => f.props.name === 'Switzerland')!;
    const vertices = swiss.wkt!.match(/-?\d+(\.\d+)? -?\d+(\.\d+)?/g)!.length;
    expect(vertices).toBeGreaterThan(20);
    // And every simplified country is valid, Antarctica still at the pole.
    load(readme.dataset.path, 'countries', 'simplified');
    const [row] = await db.sql<{ valid: number; ymin: number }>(
      "SELECT count(*) FILTER (WHERE ST_IsValid(geom))::int AS valid, (SELECT ST_YMin(geom) FROM simplified WHERE name = 'Antarctica') AS ymin FROM simplified",
    );
    expect(row).toEqual({ valid: 177, ymin: -90 });
  });

  it('refuses a buffer of 100 in source units on degrees, naming the unit', async () => {
    const refused = await applyPipeline(
      datasetAt(NE),
      { layers: ['countries'], operations: [{ type: 'buffer', distance: 100, units: 'source' }] },
      d('refused'),
    ).then(
      () => null,
      (e: { code: string; message: string }) => e,
    );
    expect(refused).toMatchObject({ code: 'invalid_transformation', message: expect.stringMatching(/distance 100 is in degrees.*"units": "meters"/) });
  });

  it('buffers points, lines and polygons at 180° and at the poles: circles of the right area, valid, cut at 180°', async () => {
    const shapes = vectorFromCsv(
      d('shapes.gpkg'),
      [
        'name,wkt',
        'date line point,"POINT (179.95 -16.5)"',
        'north pole point,"POINT (10 89.9)"',
        'south pole point,"POINT (-45 -89.95)"',
        'arctic line,"MULTILINESTRING ((170 70,180 70),(-180 70,-170 70))"',
        'polar cap,"POLYGON ((-180 85,180 85,180 90,-180 90,-180 85))"',
      ].join('\n'),
      ['-a_srs', 'EPSG:4326', '-nln', 'shapes', '-nlt', 'GEOMETRY'],
    );
    const result = await applyPipeline(
      datasetAt(shapes),
      { operations: [{ type: 'buffer', distance: 50, units: 'kilometers', segments: 32 }] },
      d('shapes-work'),
    );
    load(result.dataset.path, 'shapes', 'shapes');
    const rows = await db.sql<{ name: string; valid: boolean; km2: number; xmin: number; xmax: number; ymin: number; ymax: number }>(
      'SELECT name, ST_IsValid(geom) AS valid, ST_Area(geom::geography) / 1e6 AS km2, ST_XMin(geom) AS xmin, ST_XMax(geom) AS xmax, ST_YMin(geom) AS ymin, ST_YMax(geom) AS ymax FROM shapes',
    );
    const by = new Map(rows.map((r) => [r.name, r]));
    const circle = Math.PI * 50 * 50;
    for (const name of ['date line point', 'north pole point', 'south pole point']) {
      expect(by.get(name)!.valid, name).toBe(true);
      expect(Math.abs(by.get(name)!.km2 / circle - 1), name).toBeLessThan(0.01);
    }
    // Cut at 180°: a part on each side, not a band round the world.
    expect([by.get('date line point')!.xmin, by.get('date line point')!.xmax]).toEqual([-180, 180]);
    // Circles round a pole reach it.
    expect(by.get('north pole point')!.ymax).toBe(90);
    expect(by.get('south pole point')!.ymin).toBe(-90);
    // 20° of the 70th parallel, 50 km either side: about 760 km × 100 km.
    const line = by.get('arctic line')!;
    expect(line.valid).toBe(true);
    expect(Math.abs(line.km2 / (2 * Math.PI * 6371 * Math.cos((70 * Math.PI) / 180) * (20 / 360) * 100 + circle) - 1)).toBeLessThan(0.02);
    // The cap above 85° grows to about 84.55°: its area is that of the cap above it.
    const cap = by.get('polar cap')!;
    expect(cap.valid).toBe(true);
    expect(cap.ymax).toBe(90);
    expect(cap.ymin).toBeCloseTo(85 - 50 / 111.7, 1);
  });
});
