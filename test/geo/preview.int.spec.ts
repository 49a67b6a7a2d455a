import { statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../domain/errors.js';
import { datasetAt, prepareUpload } from '../../geo/datasets/dataset-files.js';
import { dataPreview, parsePreviewLimit, spatialPreview } from '../../geo/datasets/preview.js';
import { addGpkgLayer, refusal, run, sha256, tempFolder, vectorFromCsv, write } from './support.js';

function refusedWith(fn: () => unknown, code: string): DomainError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(DomainError);
    expect((e as DomainError).code).toBe(code);
    return e as DomainError;
  }
  throw new Error('expected a refusal');
}

describe('parsePreviewLimit', () => {
  it('defaults to 100, caps at 500 and refuses non-positive or non-numeric values', () => {
    expect(parsePreviewLimit(undefined)).toBe(100);
    expect(parsePreviewLimit('')).toBe(100);
    expect(parsePreviewLimit('25')).toBe(25);
    expect(parsePreviewLimit(7)).toBe(7);
    expect(parsePreviewLimit('1000')).toBe(500);
    for (const bad of ['0', '-3', 'abc', '1.5', '10abc', 0, -1, 2.5]) {
      const err = refusedWith(() => parsePreviewLimit(bad), 'invalid_parameter');
      expect(err.details.parameter).toBe('limit');
    }
  });
});

describe('previews', { timeout: 60_000 }, () => {
  const tmp = tempFolder('preview');
  const d = (name: string) => path.join(tmp.dir, name);
  afterAll(() => tmp.remove());

  let gpkg: string;
  beforeAll(() => {
    // 2100 points in the Swiss projected CRS, with dates, non-ASCII text and a binary column.
    const rows = ['id,name,day,seen,wkt'];
    for (let i = 1; i <= 2100; i++)
      rows.push(`${i},Ort ${i} – Zürich,2024-01-${String((i % 28) + 1).padStart(2, '0')},2024-02-03T04:05:06Z,"POINT (${2600000 + i} ${1200000 + i})"`);
    const src = write(d('points.csv'), `${rows.join('\n')}\n`);
    run('ogr2ogr', [
      '-a_srs',
      'EPSG:2056',
      '-nln',
      'orte',
      '-nlt',
      'POINT',
      '-dialect',
      'SQLite',
      '-sql',
      "SELECT id, name, day, seen, GEOMETRY, CAST(X'0102' AS BLOB) AS raw FROM points",
      d('data.gpkg'),
      src,
      '-oo',
      'GEOM_POSSIBLE_NAMES=wkt',
      '-oo',
      'KEEP_GEOM_COLUMNS=NO',
      '-oo',
      'AUTODETECT_TYPE=YES',
    ]);
    gpkg = d('data.gpkg');
    addGpkgLayer(gpkg, 'owners', 'owner_id,full_name\n1,Anna Müller\n2,José Núñez\n');
    addGpkgLayer(gpkg, 'tracks', 'id,wkt\n1,"LINESTRING ZM (2600000 1200000 500 1,2600100 1200100 510 2)"\n', ['-a_srs', 'EPSG:2056', '-nlt', 'LINESTRINGZM']);
  });

  it('requires a layer on multi-layer datasets and names the layers', async () => {
    const err = await refusal(dataPreview(datasetAt(gpkg)), 'invalid_parameter');
    expect(err.details.layers).toEqual(['orte', 'tracks', 'owners']);
    expect(err.message).toContain('orte, tracks, owners');
    const unknown = await refusal(dataPreview(datasetAt(gpkg), 'nope'), 'invalid_parameter');
    expect(unknown.details.layers).toEqual(['orte', 'tracks', 'owners']);
    await refusal(spatialPreview(datasetAt(gpkg)), 'invalid_parameter');
  });

  it('returns a truncated sample with type labels in geometry cells and ISO dates', async () => {
    const before = sha256(gpkg);
    const p = await dataPreview(datasetAt(gpkg), 'orte', 10);
    expect(p).toMatchObject({
      layer: 'orte',
      has_geometry: true,
      geometry_type: 'POINT',
      crs: 'EPSG:2056',
      row_count: 2100,
      preview_row_count: 10,
      limit: 10,
      truncated: true,
    });
    expect(p.fields).toEqual([
      { name: 'id', type: 'Integer' },
      { name: 'name', type: 'String' },
      { name: 'day', type: 'Date' },
      { name: 'seen', type: 'DateTime' },
      { name: 'raw', type: 'Binary' },
      { name: 'geometry', type: 'Geometry' }, // always `geometry`, whatever the file calls it (GEOMETRY here)
    ]);
    expect(p.rows).toHaveLength(10);
    expect(p.rows[0]).toEqual({ id: 1, name: 'Ort 1 – Zürich', day: '2024-01-02', seen: '2024-02-03T04:05:06Z', raw: null, geometry: 'POINT' });
    expect(JSON.stringify(p)).not.toMatch(/2600001/); // no coordinates anywhere
    expect(sha256(gpkg)).toBe(before);
  });

  it('previews a non-spatial table without geometry_type, untruncated when it fits', async () => {
    const p = await dataPreview(datasetAt(gpkg), 'owners');
    expect(p).toEqual({
      layer: 'owners',
      fields: [
        { name: 'owner_id', type: 'Integer' },
        { name: 'full_name', type: 'String' },
      ],
      has_geometry: false,
      crs: null,
      crs_info: null,
      row_count: 2,
      preview_row_count: 2,
      limit: 100,
      truncated: false,
      rows: [
        { owner_id: 1, full_name: 'Anna Müller' },
        { owner_id: 2, full_name: 'José Núñez' },
      ],
    });
    expect('geometry_type' in p).toBe(false);
  });

  it('marks a sample truncated only when the limit cut rows off: a table of exactly `limit` rows is whole', async () => {
    const exact = await dataPreview(datasetAt(gpkg), 'owners', 2);
    expect(exact).toMatchObject({ row_count: 2, preview_row_count: 2, limit: 2, truncated: false });
    const cut = await dataPreview(datasetAt(gpkg), 'owners', 1);
    expect(cut).toMatchObject({ row_count: 2, preview_row_count: 1, limit: 1, truncated: true });
    const roomy = await dataPreview(datasetAt(gpkg), 'owners', 3);
    expect(roomy).toMatchObject({ row_count: 2, preview_row_count: 2, limit: 3, truncated: false });
    // Where the count is not known, the row read past the limit decides: 5 of 5 is whole.
    const csv = datasetAt(write(path.join(tmp.dir, 'five.csv'), 'id,name\n1,a\n2,b\n3,c\n4,d\n5,e\n'));
    expect(await dataPreview(csv, undefined, 5)).toMatchObject({ preview_row_count: 5, truncated: false });
    expect(await dataPreview(csv, undefined, 4)).toMatchObject({ preview_row_count: 4, truncated: true });
  });

  it('labels Z/M geometries and caps the limit at 500', async () => {
    const t = await dataPreview(datasetAt(gpkg), 'tracks', 1000);
    expect(t.limit).toBe(500);
    expect(t.geometry_type).toBe('LINESTRING ZM');
    expect(t.rows[0]!.geometry).toBe('LINESTRING ZM');
  });

  it('spatial preview: WGS 84 lon/lat, capped at 2000, properties kept, source untouched', async () => {
    const before = sha256(gpkg);
    const mtime = statSync(gpkg).mtimeMs;
    const s = await spatialPreview(datasetAt(gpkg), 'orte');
    expect(s).toMatchObject({ layer: 'orte', source_crs: 'EPSG:2056', preview_crs: 'EPSG:4326', returned_count: 2000, feature_count: 2100, truncated: true });
    expect(s.geojson.type).toBe('FeatureCollection');
    expect(s.geojson.features).toHaveLength(2000);
    const first = s.geojson.features[0] as { geometry: { type: string; coordinates: number[] }; properties: Record<string, unknown> };
    // LV95 2600001/1200001 is the Bern observatory: 7.4386 E, 46.9511 N.
    expect(first.geometry.type).toBe('Point');
    expect(first.geometry.coordinates[0]).toBeCloseTo(7.4386, 3);
    expect(first.geometry.coordinates[1]).toBeCloseTo(46.9511, 3);
    expect(first.properties).toMatchObject({ id: 1, name: 'Ort 1 – Zürich', day: '2024-01-02', raw: null });
    expect(sha256(gpkg)).toBe(before);
    expect(statSync(gpkg).mtimeMs).toBe(mtime);
  });

  it('spatial preview flattens LineString ZM to 2D', async () => {
    const s = await spatialPreview(datasetAt(gpkg), 'tracks');
    expect(s).toMatchObject({ returned_count: 1, feature_count: 1, truncated: false });
    const g = (s.geojson.features[0] as { geometry: { type: string; coordinates: number[][] } }).geometry;
    expect(g.type).toBe('LineString');
    expect(g.coordinates[0]).toHaveLength(2);
  });

  it('spatial preview refuses a non-spatial layer with invalid_parameter', async () => {
    const err = await refusal(spatialPreview(datasetAt(gpkg), 'owners'), 'invalid_parameter');
    expect(err.message).toMatch(/no geometry/);
  });

  it('previews a lat/lon CSV (no CRS in the file: WGS 84 assumed)', async () => {
    const ref = await prepareUpload(write(d('u.csv'), 'name,lat,lon\nBern,46.95,7.44\n'), 'cities.csv', d('ws'), { maxUncompressedBytes: 1e6 });
    const s = await spatialPreview(ref);
    expect(s.source_crs).toBe('EPSG:4326');
    expect((s.geojson.features[0] as { geometry: { coordinates: number[] } }).geometry.coordinates).toEqual([7.44, 46.95]);
    const p = await dataPreview(ref);
    expect(p.rows).toEqual([{ name: 'Bern', geometry: 'POINT' }]);
  });

  it('previews a single-layer dataset without naming the layer, empty layers included', async () => {
    const empty = vectorFromCsv(d('empty.gpkg'), 'id,wkt\n', ['-a_srs', 'EPSG:4326', '-nlt', 'POLYGON', '-nln', 'nothing']);
    const p = await dataPreview(datasetAt(empty));
    expect(p).toMatchObject({ layer: 'nothing', row_count: 0, preview_row_count: 0, truncated: false, rows: [] });
    const s = await spatialPreview(datasetAt(empty));
    expect(s).toMatchObject({ returned_count: 0, feature_count: 0, truncated: false, geojson: { type: 'FeatureCollection', features: [] } });
  });
});

describe('spatial preview of detailed geometries', () => {
  it('drops vertices no screen can show, keeping the shape', async () => {
    const { tempFolder, write } = await import('./support.js');
    const tmp = tempFolder('detail');
    try {
      // a circle of 100,000 vertices, radius 1 degree
      const ring = Array.from({ length: 100_000 }, (_, i) => {
        const a = (2 * Math.PI * i) / 100_000;
        return [7 + Math.cos(a), 46 + Math.sin(a)];
      });
      ring.push(ring[0]!);
      const file = write(
        `${tmp.dir}/circle.geojson`,
        JSON.stringify({
          type: 'FeatureCollection',
          features: [{ type: 'Feature', properties: { name: 'c' }, geometry: { type: 'Polygon', coordinates: [ring] } }],
        }),
      );
      const { datasetAt } = await import('../../geo/datasets/dataset-files.js');
      const p = await spatialPreview(datasetAt(file));
      const coords = (p.geojson.features[0] as { geometry: { coordinates: number[][][] } }).geometry.coordinates[0]!;
      expect(coords.length).toBeLessThan(5_000);
      expect(coords.length).toBeGreaterThan(50);
      const xs = coords.map((c) => c[0]!);
      expect(Math.min(...xs)).toBeCloseTo(6, 2);
      expect(Math.max(...xs)).toBeCloseTo(8, 2);
    } finally {
      tmp.remove();
    }
  });
});
