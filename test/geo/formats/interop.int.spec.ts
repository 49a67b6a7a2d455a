import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertDataset } from '../../../geo/datasets/convert.js';
import { datasetAt, prepareUpload } from '../../../geo/datasets/dataset-files.js';
import { inspectDataset } from '../../../geo/datasets/inspect.js';
import { dataPreview } from '../../../geo/datasets/preview.js';
import { engineVenv } from '../../../geo/formats/engine.js';
import { addGpkgLayer, pyZip, tempFolder, vectorFromCsv, write } from '../support.js';

/*
 * Issue 35's interoperability: GeoParquet the service writes, read back by pyarrow, DuckDB and
 * GDAL 3.12 (the pyogrio wheel, through DuckDB's ADBC entry point); GeoParquet written by
 * geopandas (1.1 with covering), DuckDB (1.0) and pyarrow (GeoArrow-native) read by the service;
 * PMTiles the service writes decoded by the pmtiles reader at two zooms. The independent readers
 * and writers live in interop.py, in a venv of their own (test/servers/formats-interop).
 */

const interopPython = path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'tools', 'formats-interop', 'bin', 'python');
const missing = !engineVenv()
  ? 'the formats engine is not installed (scripts/ensure.sh installs it)'
  : !existsSync(interopPython)
    ? `the interop readers are not installed in ${path.dirname(path.dirname(interopPython))} (test/servers/formats-interop/install.sh)`
    : null;

function interop<T>(command: string, ...args: string[]): T {
  const out = execFileSync(interopPython, [path.join(import.meta.dirname, 'interop.py'), command, ...args], {
    encoding: 'utf8',
    env: { PATH: '/usr/bin:/bin', HOME: '/tmp' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return JSON.parse(out) as T;
}

interface Row {
  [k: string]: unknown;
}

const expectedRows = [
  {
    id: 1,
    name: 'Zürich – Ünïcode 東京',
    founded: '1291-08-01',
    wkt: 'POLYGON ((2683000 1247000, 2684000 1247000, 2684000 1248000, 2683000 1248000, 2683000 1247000))',
  },
  { id: 2, name: null, founded: null, wkt: 'POLYGON ((2600000 1200000, 2601000 1200000, 2601000 1201500, 2600000 1200000))' },
  { id: 3, name: 'Genève', founded: '1815-05-19', wkt: null },
];

describe.skipIf(missing)(`GeoParquet and PMTiles interoperability${missing ? ` — skipped: ${missing}` : ''}`, { timeout: 300_000 }, () => {
  const tmp = tempFolder('geoparquet');
  const d = (n: string) => path.join(tmp.dir, n);
  let towns: string;

  beforeAll(() => {
    // Polygons in EPSG:2056 with non-ASCII text, nulls, dates and a row without geometry.
    towns = vectorFromCsv(
      d('towns.gpkg'),
      `id,name,founded,wkt\n${expectedRows.map((r) => `${r.id},${r.name === null ? '' : `"${r.name}"`},${r.founded ?? ''},${r.wkt ? `"${r.wkt}"` : ''}`).join('\n')}\n`,
      ['-a_srs', 'EPSG:2056', '-nln', 'towns', '-nlt', 'POLYGON', '-oo', 'EMPTY_STRING_AS_NULL=YES'],
    );
  });
  afterAll(() => tmp.remove());

  it('writes GeoParquet 1.1 that pyarrow, DuckDB and GDAL 3.12 read back: count, geometry, CRS, text, nulls, dates', async () => {
    const dir = d('written');
    const result = await convertDataset(datasetAt(towns), { outputFormat: 'GeoParquet' }, dir);
    expect(result).toMatchObject({ format: 'GeoParquet', filename: 'towns.parquet', media_type: 'application/vnd.apache.parquet', layers: ['towns'] });
    const file = path.join(dir, result.filename);

    const arrow = interop<{ geo: Row; types: Record<string, string>; rows: Row[]; compression: string }>('read-pyarrow', file);
    const geo = arrow.geo as { version: string; primary_column: string; columns: Record<string, Row> };
    expect(geo.version).toBe('1.1.0');
    const column = geo.columns[geo.primary_column]!;
    expect(column).toMatchObject({
      encoding: 'WKB',
      geometry_types: ['Polygon'],
      covering: { bbox: { xmin: ['bbox', 'xmin'], ymin: ['bbox', 'ymin'], xmax: ['bbox', 'xmax'], ymax: ['bbox', 'ymax'] } },
      bbox: [2600000, 1200000, 2684000, 1248000],
    });
    expect((column.crs as { id: unknown; type: string }).id).toEqual({ authority: 'EPSG', code: 2056 });
    expect(arrow.types).toMatchObject({ name: 'string', founded: 'date32[day]', geometry: 'binary' });
    expect(arrow.compression).toBe('ZSTD');
    const byId = (rows: Row[]) => [...rows].sort((a, b) => Number(a.id) - Number(b.id));
    expect(byId(arrow.rows).map((r) => ({ id: r.id, name: r.name, founded: r.founded, wkt: r.geometry }))).toEqual(expectedRows);
    // The row without geometry has no bbox either.
    expect(byId(arrow.rows)[2]!.bbox).toBeNull();

    const duck = interop<{ rows: Row[]; types: Record<string, string> }>('read-duckdb', file);
    expect(duck.rows.map((r) => ({ id: r.id, name: r.name, founded: r.founded, wkt: r.wkt }))).toEqual(expectedRows);
    expect(duck.types.founded).toBe('DATE');
    expect(String(duck.rows[0]!.crs)).toContain('"code":2056');

    const ogr = interop<{ driver: string; crs: string; features: number; geometry_type: string; rows: Row[]; dtypes: string[]; fields: string[] }>(
      'read-gdal',
      file,
    );
    expect(ogr).toMatchObject({ driver: 'ADBC', crs: 'EPSG:2056', features: 3, geometry_type: 'Polygon' });
    expect(ogr.rows.map((r) => ({ id: r.id, name: r.name, founded: r.founded === null ? null : String(r.founded).slice(0, 10), wkt: r.wkt }))).toEqual(
      expectedRows,
    );
  });

  for (const writer of ['geopandas', 'duckdb', 'geoarrow'] as const) {
    it(`reads GeoParquet written by ${writer === 'geoarrow' ? 'pyarrow with GeoArrow-native polygons' : writer === 'duckdb' ? 'DuckDB (1.0)' : 'geopandas (1.1 with covering bbox)'}`, async () => {
      const file = d(`${writer}.parquet`);
      interop(`write-${writer}`, file);
      const ref = await prepareUpload(file, `${writer}.parquet`, d(`read-${writer}`), { maxUncompressedBytes: 1e9 });
      const info = await inspectDataset(ref);
      expect(info).toMatchObject({ dataset_type: 'vector', driver: 'GeoParquet', format: writer === 'duckdb' ? 'GeoParquet 1.0.0' : 'GeoParquet 1.1.0' });
      expect(info.layers).toHaveLength(1);
      const layer = info.layers[0]!;
      // DuckDB core writes no CRS (it has no PROJ): GeoParquet reads that as OGC:CRS84.
      expect(layer).toMatchObject({ name: writer, feature_count: 3, geometry_type: 'POLYGON', crs: writer === 'duckdb' ? 'OGC:CRS84' : 'EPSG:2056' });
      expect(layer.extent).toEqual([2600000, 1200000, 2684000, 1248000]);
      expect(layer.fields.map((f) => [f.name, f.type])).toEqual([
        ['id', writer === 'duckdb' ? 'Integer' : 'Integer64'],
        ['name', 'String'],
        ['founded', 'Date'],
      ]);
      const preview = await dataPreview(ref, undefined, 10);
      expect(preview.rows.map((r) => ({ id: r.id, name: r.name, founded: r.founded, geometry: r.geometry }))).toEqual(
        expectedRows.map((r) => ({ id: r.id, name: r.name, founded: r.founded, geometry: r.wkt ? 'POLYGON' : null })),
      );
      // And every conversion works from it: back to a GeoPackage with the same coordinates.
      const gpkg = await convertDataset(ref, { outputFormat: 'GPKG' }, d(`gpkg-${writer}`));
      const back = execFileSync('ogrinfo', ['-al', '-q', path.join(d(`gpkg-${writer}`), gpkg.filename)], { encoding: 'utf8' });
      expect(back).toContain('POLYGON ((2683000 1247000,2684000 1247000,2684000 1248000,2683000 1248000,2683000 1247000))');
      expect(back).toContain('Zürich – Ünïcode 東京');
    });
  }

  it('reads plain Parquet with lon/lat columns as points in WGS 84, and a zipped partitioned dataset as one layer', async () => {
    const script = `
import pyarrow as pa, pyarrow.parquet as pq, os, sys
root = sys.argv[1]
pq.write_table(pa.table({'name': ['Bern', 'Chur'], 'lon': [7.44, 9.53], 'lat': [46.95, 46.85]}), os.path.join(root, 'cities.parquet'))
for year, n in ((2023, 2), (2024, 3)):
    os.makedirs(os.path.join(root, 'parts', f'year={year}'), exist_ok=True)
    pq.write_table(pa.table({'id': list(range(n)), 'x': [7.0 + i for i in range(n)], 'y': [46.0] * n}), os.path.join(root, 'parts', f'year={year}', 'part-0.parquet'))
`;
    mkdirSync(d('plain'), { recursive: true });
    execFileSync(interopPython, ['-c', script, d('plain')]);
    const cities = await prepareUpload(d('plain/cities.parquet'), 'cities.parquet', d('read-plain'), { maxUncompressedBytes: 1e9 });
    const info = await inspectDataset(cities);
    expect(info.format).toBe('Parquet');
    expect(info.layers[0]).toMatchObject({ feature_count: 2, geometry_type: 'POINT', crs: 'EPSG:4326' });

    const zip = pyZip(d('parts.zip'), [
      { name: 'parts/year=2023/part-0.parquet', file: d('plain/parts/year=2023/part-0.parquet') },
      { name: 'parts/year=2024/part-0.parquet', file: d('plain/parts/year=2024/part-0.parquet') },
    ]);
    const parts = await prepareUpload(zip, 'parts.zip', d('read-parts'), { maxUncompressedBytes: 1e9 });
    const partsInfo = await inspectDataset(parts);
    expect(partsInfo.layers).toHaveLength(1);
    expect(partsInfo.layers[0]).toMatchObject({ feature_count: 5, geometry_type: 'POINT' });
    expect(partsInfo.layers[0]!.fields.map((f) => f.name)).toEqual(expect.arrayContaining(['id', 'x', 'y', 'year']));
  });

  it('reads the geometry or coordinate columns the user names, and says which columns there are when one is missing', async () => {
    const script = `
import pyarrow as pa, pyarrow.parquet as pq, shapely, os, sys
root = sys.argv[1]
pq.write_table(pa.table({'name': ['a', 'b'], 'shape_wkb': shapely.to_wkb(shapely.points([2600000, 2700000], [1200000, 1250000])), 'e': [1.0, 2.0], 'n': [3.0, 4.0]}), os.path.join(root, 'named.parquet'))
`;
    mkdirSync(d('named'), { recursive: true });
    execFileSync(interopPython, ['-c', script, d('named')]);
    const file = d('named/named.parquet');
    const byGeometry = await prepareUpload(file, 'named.parquet', d('read-named-g'), {
      maxUncompressedBytes: 1e9,
      read: { geometryColumn: 'shape_wkb', sourceCrs: 'EPSG:2056' },
    });
    const g = (await inspectDataset(byGeometry)).layers[0]!;
    // Footers only: without GeoParquet metadata the geometry type is not known before the rows are read.
    expect(g).toMatchObject({ feature_count: 2, geometry_type: 'GEOMETRY', crs: 'EPSG:2056', has_geometry: true });
    expect(g.fields.map((f) => f.name)).toEqual(['name', 'e', 'n']);
    const byColumns = await prepareUpload(file, 'named.parquet', d('read-named-xy'), { maxUncompressedBytes: 1e9, read: { xColumn: 'e', yColumn: 'n' } });
    expect((await inspectDataset(byColumns)).layers[0]).toMatchObject({ feature_count: 2, geometry_type: 'POINT', crs: 'EPSG:4326' });
    await expect(
      prepareUpload(file, 'named.parquet', d('read-named-bad'), { maxUncompressedBytes: 1e9, read: { geometryColumn: 'geom' } }),
    ).rejects.toMatchObject({ code: 'invalid_source', message: expect.stringContaining("No column named 'geom'; the columns are: name, shape_wkb, e, n") });
    const csv = write(d('named/points.csv'), 'id,wkt\n1,"POINT (1 2)"\n');
    await expect(prepareUpload(csv, 'points.csv', d('read-named-csv'), { maxUncompressedBytes: 1e9, read: { geometryColumn: 'wkt' } })).rejects.toMatchObject({
      code: 'invalid_parameter',
      details: { parameter: 'geometry_column' },
    });
  });

  it('writes rows in Hilbert order, so each row group covers a small part of the extent', async () => {
    // 4,000 points on a 200 × 20 grid, listed in a scrambled order.
    const points = Array.from({ length: 4000 }, (_, i) => i).sort((a, b) => ((a * 7919) % 4001) - ((b * 7919) % 4001));
    const csv = `id,wkt\n${points.map((i) => `${i},"POINT (${i % 200} ${Math.floor(i / 200)})"`).join('\n')}\n`;
    const grid = vectorFromCsv(d('grid.gpkg'), csv, ['-a_srs', 'EPSG:3857', '-nln', 'grid', '-nlt', 'POINT']);
    const dir = d('sorted');
    const result = await convertDataset(datasetAt(grid), { outputFormat: 'GeoParquet', creationOptions: { dataset: { ROW_GROUP_SIZE: '1000' } } }, dir);
    const arrow = interop<{ row_groups: { rows: number; bbox: Record<string, [number, number]> }[] }>('read-pyarrow', path.join(dir, result.filename));
    expect(arrow.row_groups.map((g) => g.rows)).toEqual([1000, 1000, 1000, 1000]);
    const areas = arrow.row_groups.map((g) => (g.bbox.xmax![1] - g.bbox.xmin![0]) * (g.bbox.ymax![1] - g.bbox.ymin![0]));
    const total = 199 * 19;
    // In input order every group would span nearly the whole grid; along the curve each holds a quarter of it.
    for (const a of areas) expect(a).toBeLessThan(total * 0.5);
    const unsorted = await convertDataset(
      datasetAt(grid),
      { outputFormat: 'GeoParquet', creationOptions: { dataset: { ROW_GROUP_SIZE: '1000', SORT: 'NONE', COMPRESSION: 'SNAPPY' } } },
      d('unsorted'),
    );
    const plain = interop<{ row_groups: { bbox: Record<string, [number, number]> }[]; compression: string }>(
      'read-pyarrow',
      path.join(d('unsorted'), unsorted.filename),
    );
    expect(plain.compression).toBe('SNAPPY');
    const plainAreas = plain.row_groups.map((g) => (g.bbox.xmax![1] - g.bbox.xmin![0]) * (g.bbox.ymax![1] - g.bbox.ymin![0]));
    expect(Math.max(...plainAreas)).toBeGreaterThan(total * 0.9);
  });

  it('writes PMTiles that the pmtiles reader decodes to the right features at two zooms, with only the chosen attributes', async () => {
    const places = vectorFromCsv(d('places.gpkg'), 'id,name,kind,wkt\n1,Zürich,city,"POINT (8.54 47.37)"\n2,Genève,city,"POINT (6.14 46.2)"\n', [
      '-a_srs',
      'EPSG:4326',
      '-nln',
      'places',
      '-nlt',
      'POINT',
    ]);
    addGpkgLayer(places, 'lakes', 'name,kind,wkt\nZürichsee,lake,"POLYGON ((8.5 47.2,8.8 47.2,8.8 47.36,8.5 47.36,8.5 47.2))"\n', [
      '-a_srs',
      'EPSG:4326',
      '-nlt',
      'POLYGON',
    ]);
    const dir = d('tiles');
    const result = await convertDataset(
      datasetAt(places),
      { outputFormat: 'PMTiles', creationOptions: { dataset: { MINZOOM: '2', MAXZOOM: '9', ATTRIBUTES: 'name' } } },
      dir,
    );
    expect(result).toMatchObject({ format: 'PMTiles', filename: 'places.pmtiles', media_type: 'application/vnd.pmtiles' });
    expect(result.layers.sort()).toEqual(['lakes', 'places']);
    type Tiles = {
      min_zoom: number;
      max_zoom: number;
      tile_type: number;
      metadata: Row;
      tiles: { z: number; layers: Record<string, { type: string; properties: Row }[]> | null }[];
    };
    const read = interop<Tiles>('read-pmtiles', path.join(dir, result.filename), '2', '8.54', '47.37', '9', '8.54', '47.37');
    expect([read.min_zoom, read.max_zoom, read.tile_type]).toEqual([2, 9, 1]); // 1: Mapbox Vector Tile
    for (const tile of read.tiles) {
      expect(tile.layers, `zoom ${tile.z}`).not.toBeNull();
      const places = tile.layers!.places!;
      expect(places.map((f) => f.type)).toContain('Point');
      expect(places.map((f) => f.properties)).toContainEqual({ name: 'Zürich' });
      // ATTRIBUTES=name: kind and id are not in the tiles.
      for (const f of [...places, ...(tile.layers!.lakes ?? [])]) expect(Object.keys(f.properties).sort()).toEqual(['name']);
    }
    // The lake is in the tile around Zürich at both zooms; Genève only shares the zoom-2 tile.
    expect(read.tiles[0]!.layers!.lakes!.map((f) => f.properties.name)).toEqual(['Zürichsee']);
    expect(read.tiles[1]!.layers!.lakes!.map((f) => f.type)).toEqual(['Polygon']);
    expect(read.tiles[0]!.layers!.places!.map((f) => f.properties.name).sort()).toEqual(['Genève', 'Zürich']);
    expect(read.tiles[1]!.layers!.places!.map((f) => f.properties.name)).toEqual(['Zürich']);
  });

  it('refuses a Parquet file that is not one, clearly', async () => {
    const bogus = write(d('bogus/not.parquet'), 'PAR1 this is not a parquet file PAR1');
    await expect(prepareUpload(bogus, 'not.parquet', d('read-bogus'), { maxUncompressedBytes: 1e9 })).rejects.toMatchObject({
      code: 'invalid_source',
      message: expect.stringMatching(/^The Parquet file cannot be read: /),
    });
  });
});
