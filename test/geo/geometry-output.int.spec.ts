import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertDataset, type ConvertResult } from '../../geo/datasets/convert.js';
import { datasetAt, type DatasetRef } from '../../geo/datasets/dataset-files.js';
import { gdal } from '../../geo/gdal/gdal.js';
import { splitGeometryType } from '../../geo/gdal/labels.js';
import { operationCatalog } from '../../geo/operations/catalog.js';
import { applyPipeline } from '../../geo/operations/pipeline.js';
import { readZipDirectory } from '../../geo/datasets/zip.js';
import { layerFromWktCsv } from '../support/fixtures.js';
import { refusal, tempFolder, vectorFromCsv, write } from './support.js';

/*
 * Issue 8, bug 1: after a geometry operation, the output layer must declare what the pipeline
 * really produced, whatever the output format. Every geometry operation of the catalog runs on
 * polygons (a shapefile that says Polygon and also holds a multipolygon, like NYC's boroughs)
 * and on points, both in EPSG:2263, and each result is converted to every format below.
 */

/**
 * Parameters for EPSG:2263 data (US survey feet) for every geometry operation of the catalog.
 * Operations that read a second layer are given the input's own one (`layer`): a layer clips and
 * joins itself, which keeps every row.
 */
type Parameters = Record<string, unknown> | ((layer: string) => Record<string, unknown>);
const parameters: Record<string, Parameters> = {
  reproject: { target_crs: 'EPSG:3857' },
  assign_crs: { crs: 'EPSG:2263' },
  buffer: { distance: 10, units: 'source' },
  simplify: { tolerance: 50, units: 'source' },
  make_valid: {},
  centroid: {},
  point_on_surface: {},
  explode_multipart: {},
  promote_to_multi: {},
  force_2d: {},
  dissolve: { by: [] },
  clip_bbox: { bbox: [979000, 189000, 1005000, 245000], crs: 'EPSG:2263' },
  clip: (layer) => ({ clip_layer: layer }),
  spatial_join: (layer) => ({ join_layer: layer, predicate: 'intersects', columns: [] }),
  calculate_geometry: { column: 'measured', measure: 'length', units: 'feet' },
  densify: { max_segment: 1000, units: 'source' },
};
/** A clip layer must be of polygons. */
const polygonsOnly = new Set(['clip']);
const parametersOn = (op: string, layer: string) => {
  const p = parameters[op]!;
  return typeof p === 'function' ? p(layer) : p;
};

/**
 * Formats whose layers declare one geometry type, and the other common ones. (MapInfo is left
 * out: GDAL writes a multipoint as several features and rounds coordinates to its bounds.)
 */
const formats = ['FlatGeobuf', 'GPKG', 'ESRI Shapefile', 'OpenFileGDB', 'SQLite', 'GML', 'KML', 'LIBKML', 'CSV', 'GeoJSON'];
/** Formats whose declared layer type readers rely on: it must be exact. */
const strict = new Set(['FlatGeobuf', 'GPKG', 'OpenFileGDB', 'SQLite']);

const base = (code: number) => splitGeometryType(code).base;
const family = (b: number) => (b === 4 || b === 5 || b === 6 ? b - 3 : b);

interface ReadBack {
  declared: number;
  geomColumn: string;
  types: number[];
  count: number;
}

/** Opens what convert wrote (a file, or the main file inside its ZIP) through GDAL. */
async function readOutput(dir: string, result: ConvertResult, format: string): Promise<ReadBack> {
  const file = path.join(dir, result.filename);
  let source = file;
  if (result.filename.endsWith('.zip')) {
    const names = (await readZipDirectory(file)).map((e) => e.name);
    const main = { 'ESRI Shapefile': /\.shp$/, OpenFileGDB: /\.gdb\//, GML: /\.gml$/, 'MapInfo File': /\.tab$/ }[format];
    const entry = names.find((n) => main?.test(n));
    expect(entry, `${format}: ${names.join(', ')}`).toBeDefined();
    source = `/vsizip/${file}/${format === 'OpenFileGDB' ? entry!.slice(0, entry!.indexOf('.gdb/') + 4) : entry}`;
  }
  const ds = format === 'CSV' ? gdal.drivers.get('CSV').open(source, 'r', ['GEOM_POSSIBLE_NAMES=WKT', 'KEEP_GEOM_COLUMNS=NO']) : gdal.open(source);
  try {
    const layer = ds.layers.get(0);
    const types: number[] = [];
    layer.features.forEach((f) => {
      const g = f.getGeometry();
      if (g) types.push(g.wkbType);
    });
    return { declared: layer.geomType, geomColumn: layer.geomColumn, types, count: layer.features.count() };
  } finally {
    ds.close();
  }
}

function featureCount(ref: DatasetRef, layer: string): number {
  const ds = gdal.open(ref.path);
  try {
    return ds.layers.get(layer).features.count();
  } finally {
    ds.close();
  }
}

describe('output geometry types after every geometry operation, into every format', { timeout: 600_000 }, () => {
  const tmp = tempFolder('geometry-output');
  const d = (n: string) => path.join(tmp.dir, n);
  let n = 0;
  const out = () => d(`out-${++n}`);
  const inputs: Record<string, DatasetRef> = {};

  beforeAll(() => {
    // NYC boroughs in miniature: a shapefile says Polygon, one borough is a multipolygon, names
    // are not ASCII.
    const csv = write(
      d('boroughs.csv'),
      `${[
        'BoroCode,BoroName,wkt',
        '1,Manhattan,"MULTIPOLYGON (((980000 190000,990000 190000,990000 200000,980000 200000,980000 190000)),((995000 190000,996000 190000,996000 191000,995000 191000,995000 190000)))"',
        '2,The Brönx,"POLYGON ((1000000 240000,1010000 240000,1010000 250000,1000000 250000,1000000 240000))"',
        '3,Stäten Ærø,"POLYGON ((960000 140000,970000 140000,970000 150000,960000 150000,960000 140000),(962000 142000,963000 142000,963000 143000,962000 142000))"',
      ].join('\n')}\n`,
    );
    layerFromWktCsv('ESRI Shapefile', d('nybb'), csv, 'EPSG:2263', 'nybb', ['-lco', 'ENCODING=UTF-8']);
    inputs.polygons = datasetAt(d('nybb/nybb.shp'));
    inputs.points = datasetAt(
      vectorFromCsv(
        d('stations.gpkg'),
        'id,a_really_long_attribute_name,wkt\n1,Grand Central – Ünïcode,"POINT (990000 212000)"\n2,Fulton St,"POINT (982000 197000)"\n3,Jamaica,"POINT (1040000 195000)"\n',
        ['-a_srs', 'EPSG:2263', '-nln', 'stations', '-nlt', 'POINT'],
      ),
    );
  });
  afterAll(() => tmp.remove());

  it('has parameters for every geometry operation of the catalog', () => {
    const geometryOps = operationCatalog.filter((o) => o.requiresGeometry).map((o) => o.id);
    expect(Object.keys(parameters).sort()).toEqual(geometryOps.sort());
  });

  for (const kind of ['polygons', 'points'] as const) {
    for (const op of Object.keys(parameters)) {
      if (kind === 'points' && polygonsOnly.has(op)) continue;
      it(`${op} on ${kind}: every format holds the result and declares its type`, async () => {
        const input = inputs[kind]!;
        const layer = kind === 'polygons' ? 'nybb' : 'stations';
        const piped = await applyPipeline(input, { operations: [{ type: op, ...parametersOn(op, layer) }] }, d(`work-${kind}-${op}`));
        const expected = featureCount(piped.dataset, layer);
        expect(expected, 'the operation keeps rows').toBeGreaterThan(0);
        for (const format of formats) {
          const dir = out();
          const result = await convertDataset(piped.dataset, { outputFormat: format, baseName: layer }, dir);
          expect(result.layers, format).toEqual([layer]);
          const back = await readOutput(dir, result, format);
          const label = `${op} on ${kind} as ${format}`;
          if (format !== 'KML' && format !== 'LIBKML') expect(back.count, label).toBe(expected);
          expect(back.types.length, label).toBe(expected);
          const families = new Set(back.types.map((t) => family(base(t))));
          if (strict.has(format)) {
            // One kind of geometry: the layer says exactly which, and every row is of it.
            if (families.size === 1) expect(base(back.declared), `${label} declares ${back.declared}`).not.toBe(0);
            for (const t of back.types) if (base(back.declared) !== 0) expect(base(t), label).toBe(base(back.declared));
          }
          if (format === 'ESRI Shapefile') for (const t of back.types) expect(family(base(t)), label).toBe(family(base(back.declared)));
          if (format === 'GPKG') expect(back.geomColumn, label).toBe('geom');
        }
      });
    }
  }

  it('promotes single and multi parts of one kind to multi, as ogr2ogr -nlt PROMOTE_TO_MULTI does', async () => {
    const piped = await applyPipeline(inputs.polygons!, { operations: [{ type: 'buffer', distance: 10 }] }, d('work-promote'));
    // The pipeline's own result holds what the buffer made and says so: GEOMETRY, not POLYGON.
    const ds = gdal.open(piped.dataset.path);
    expect(base(ds.layers.get('nybb').geomType)).toBe(0);
    ds.close();
    // (GeoJSON has no layer type, and its RFC 7946 writer may write a one-part multipolygon as a Polygon.)
    for (const format of ['FlatGeobuf', 'GPKG', 'ESRI Shapefile', 'GML']) {
      const dir = out();
      const back = await readOutput(dir, await convertDataset(piped.dataset, { outputFormat: format }, dir), format);
      expect(base(back.declared), format).toBe(format === 'ESRI Shapefile' ? 3 : 6);
      if (format !== 'ESRI Shapefile') expect(new Set(back.types.map(base)), format).toEqual(new Set([6]));
    }
  });

  it('names the geometry column geom in a GeoPackage with or without a pipeline', async () => {
    const plain = out();
    expect((await readOutput(plain, await convertDataset(inputs.points!, { outputFormat: 'GPKG' }, plain), 'GPKG')).geomColumn).toBe('geom');
    const shp = out();
    expect((await readOutput(shp, await convertDataset(inputs.polygons!, { outputFormat: 'GPKG' }, shp), 'GPKG')).geomColumn).toBe('geom');
  });

  it('keeps mixed kinds where the format allows them, and says which layer and kinds a single-type format cannot hold', async () => {
    const mixed = datasetAt(
      vectorFromCsv(d('mixed.gpkg'), 'id,wkt\n1,"POINT (990000 212000)"\n2,"POLYGON ((980000 190000,990000 190000,990000 200000,980000 190000))"\n', [
        '-a_srs',
        'EPSG:2263',
        '-nln',
        'things',
        '-nlt',
        'GEOMETRY',
      ]),
    );
    for (const format of ['GPKG', 'FlatGeobuf', 'GeoJSON', 'GML', 'CSV']) {
      const dir = out();
      const back = await readOutput(dir, await convertDataset(mixed, { outputFormat: format }, dir), format);
      expect(new Set(back.types.map(base)), format).toEqual(new Set([1, 3]));
    }
    for (const format of ['ESRI Shapefile', 'OpenFileGDB']) {
      const err = await refusal(convertDataset(mixed, { outputFormat: format }, out()), 'conversion_failed');
      expect(err.message).toContain('"things"');
      expect(err.message).toMatch(/POINT, POLYGON/);
      expect(err.details).toMatchObject({ layer: 'things', format, geometry_types: ['POINT', 'POLYGON'] });
    }
  });

  it("answers conversion_failed with the layer and GDAL's own reason when the format refuses the data", async () => {
    // GPX holds points and lines only.
    const err = await refusal(convertDataset(inputs.polygons!, { outputFormat: 'GPX' }, out()), 'conversion_failed');
    expect(err.details.layer).toBe('nybb');
    expect(err.message).toContain('"nybb"');
    expect(String(err.details.reason)).not.toMatch(/Terminating translation prematurely/);
    expect(String(err.details.reason).length).toBeGreaterThan(10);
    expect(err.message).not.toContain(tmp.dir);

    // LIBKML refuses a self-intersecting polygon; GDAL says so.
    const bowtie = datasetAt(
      vectorFromCsv(d('bowtie.gpkg'), 'id,wkt\n1,"POLYGON ((1000000 200000,1004000 204000,1004000 200000,1000000 204000,1000000 200000))"\n', [
        '-a_srs',
        'EPSG:2263',
        '-nln',
        'bowtie',
      ]),
    );
    const invalid = await refusal(convertDataset(bowtie, { outputFormat: 'LIBKML' }, out()), 'conversion_failed');
    expect(invalid.message).toMatch(/^Layer "bowtie" cannot be written as .*: .*invalid polygon/i);
  });

  it('refuses to drop rows without geometry silently (FlatGeobuf skips them)', async () => {
    const gaps = datasetAt(
      vectorFromCsv(d('gaps.gpkg'), 'id,wkt\n1,"POINT (990000 212000)"\n2,\n3,"POINT (982000 197000)"\n', [
        '-a_srs',
        'EPSG:2263',
        '-nln',
        'gaps',
        '-nlt',
        'POINT',
      ]),
    );
    const err = await refusal(convertDataset(gaps, { outputFormat: 'FlatGeobuf' }, out()), 'conversion_failed');
    expect(err.details).toMatchObject({ layer: 'gaps', rows_without_geometry: 1 });
    const dir = out();
    expect((await readOutput(dir, await convertDataset(gaps, { outputFormat: 'GPKG' }, dir), 'GPKG')).count).toBe(3);
  });

  it('writes an empty layer to every format', async () => {
    const empty = datasetAt(vectorFromCsv(d('empty.gpkg'), 'id,wkt\n', ['-a_srs', 'EPSG:2263', '-nln', 'nothing', '-nlt', 'POLYGON']));
    for (const format of formats) {
      const result = await convertDataset(empty, { outputFormat: format }, out());
      expect(result.layers, format).toEqual(['nothing']);
    }
  });
});
