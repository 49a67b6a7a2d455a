import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertDataset } from '../../geo/isolation/index.js';
import { datasetAt, prepareUpload } from '../../geo/datasets/dataset-files.js';
import type { Point } from 'gdal-async';
import { gdal } from '../../geo/gdal/gdal.js';
import { readZipDirectory } from '../../geo/datasets/zip.js';
import { addGpkgLayer, layerNames, readLayer, refusal, run, tempFolder, vectorFromCsv, write } from './support.js';
import { constantGeoTiff } from '../support/fixtures.js';

/** The first [x, y] of any GeoJSON coordinates array (polygons and multipolygons nest deeper). */
function firstPosition(coordinates: unknown): number[] {
  let c = coordinates as unknown[];
  while (Array.isArray(c[0])) c = c[0] as unknown[];
  return c as number[];
}

describe('convertDataset', { timeout: 120_000 }, () => {
  const tmp = tempFolder('convert');
  const d = (n: string) => path.join(tmp.dir, n);
  let n = 0;
  const out = () => d(`out-${++n}`);
  let gpkg: string;
  let mixed: string;

  beforeAll(() => {
    gpkg = vectorFromCsv(d('city.gpkg'), 'id,name,wkt\n1,Zürich Hauptbahnhof,"POINT (8.54 47.378)"\n2,Genève-Cornavin,"POINT (6.142 46.21)"\n', [
      '-a_srs',
      'EPSG:4326',
      '-nln',
      'stations',
      '-nlt',
      'POINT',
    ]);
    addGpkgLayer(gpkg, 'operators', 'code,label\nSBB,Schweizerische Bundesbahnen\n');
    addGpkgLayer(gpkg, 'closed', 'id,wkt\n', ['-a_srs', 'EPSG:4326', '-nlt', 'POINT']);
    // Polygons and multipolygons mixed in one layer, long and non-ASCII field names.
    mixed = vectorFromCsv(
      d('parcels.gpkg'),
      `${[
        'id,a_really_long_attribute_name,another_really_long_attribute_name,eigentümer,wkt',
        '1,1,2,Müller,"POLYGON ((0 0,1 0,1 1,0 1,0 0))"',
        '2,3,4,Núñez,"MULTIPOLYGON (((2 2,3 2,3 3,2 3,2 2)),((4 4,5 4,5 5,4 5,4 4)))"',
      ].join('\n')}\n`,
      ['-a_srs', 'EPSG:2056', '-nln', 'parcels', '-nlt', 'GEOMETRY'],
    );
  });
  afterAll(() => tmp.remove());

  it('converts a multi-layer GeoPackage to GeoPackage with all layers, no paths in the result', async () => {
    const dir = out();
    const r = await convertDataset(datasetAt(gpkg), { outputFormat: 'gpkg' }, dir);
    const all = layerNames(gpkg);
    expect(r).toEqual({
      format: 'GPKG',
      filename: 'city.gpkg',
      size: statSync(path.join(dir, 'city.gpkg')).size,
      layers: all,
      media_type: 'application/geopackage+sqlite3',
      warnings: [],
    });
    expect(layerNames(path.join(dir, r.filename)).sort()).toEqual(['closed', 'operators', 'stations']);
    expect(readLayer(path.join(dir, r.filename), 'stations').features.map((f) => f.props.name)).toEqual(['Zürich Hauptbahnhof', 'Genève-Cornavin']);
    expect(readdirSync(dir)).toEqual(['city.gpkg']); // no work folders left behind
  });

  it('writes one GeoJSON per layer into a ZIP for several layers, a plain file for one', async () => {
    const dir = out();
    const r = await convertDataset(datasetAt(gpkg), { outputFormat: 'GeoJSON' }, dir);
    expect(r).toMatchObject({ format: 'GeoJSON', filename: 'city.zip', media_type: 'application/zip', layers: layerNames(gpkg) });
    const names = (await readZipDirectory(path.join(dir, r.filename))).map((e) => e.name).sort();
    expect(names).toEqual(['closed.geojson', 'operators.geojson', 'stations.geojson']);
    const stations = readLayer(`/vsizip/${path.join(dir, r.filename)}/stations.geojson`);
    expect(stations.features).toHaveLength(2);
    const empty = readLayer(`/vsizip/${path.join(dir, r.filename)}/closed.geojson`);
    expect(empty.features).toHaveLength(0);

    const one = await convertDataset(datasetAt(gpkg), { outputFormat: 'geojson', layers: ['stations'], baseName: 'Bahnhöfe' }, out());
    expect(one).toMatchObject({ filename: 'Bahnhöfe.geojson', media_type: 'application/geo+json', layers: ['stations'] });
  });

  it('writes GeoJSON as RFC 7946 (WGS 84 longitude/latitude, no "crs") unless another CRS is asked for', async () => {
    const dir = out();
    const r = await convertDataset(datasetAt(mixed), { outputFormat: 'GeoJSON' }, dir);
    const doc = JSON.parse(readFileSync(path.join(dir, r.filename), 'utf8'));
    expect(doc.crs).toBeUndefined();
    // The parcels' first corner, (0, 0) in EPSG:2056, as longitude/latitude.
    const corner = new gdal.CoordinateTransformation(gdal.SpatialReference.fromEPSG(2056), gdal.SpatialReference.fromEPSG(4326)).transformPoint(0, 0);
    const [lon = NaN, lat = NaN] = firstPosition(doc.features[0].geometry.coordinates);
    expect(lon).toBeCloseTo(corner.x, 5);
    expect(lat).toBeCloseTo(corner.y, 5);

    const wgs = await convertDataset(datasetAt(mixed), { outputFormat: 'GeoJSON', targetCrs: 'EPSG:4326' }, out());
    expect(wgs.filename).toBe('parcels.geojson');

    const kept = out();
    const k = await convertDataset(datasetAt(mixed), { outputFormat: 'GeoJSON', targetCrs: 'EPSG:2056' }, kept);
    const legacy = JSON.parse(readFileSync(path.join(kept, k.filename), 'utf8'));
    expect(legacy.crs.properties.name).toMatch(/EPSG::?2056/);
    expect(firstPosition(legacy.features[0].geometry.coordinates)).toEqual([0, 0]);
  });

  it('reprojects with target_crs', async () => {
    const dir = out();
    const r = await convertDataset(datasetAt(gpkg), { outputFormat: 'FlatGeobuf', layers: ['stations'], targetCrs: 'EPSG:2056' }, dir);
    expect(r.filename).toBe('city.fgb');
    const f = readLayer(path.join(dir, r.filename));
    expect(f.srs).toBe('EPSG:2056');
    const p = gdal.Geometry.fromWKT(f.features[0]!.wkt!) as Point;
    expect(p.x).toBeGreaterThan(2_680_000);
    expect(p.x).toBeLessThan(2_690_000);
  });

  it('writes a Shapefile ZIP: multipolygons promoted, long names laundered, UTF-8 with a .cpg', async () => {
    const dir = out();
    const r = await convertDataset(datasetAt(mixed), { outputFormat: 'shp' }, dir);
    expect(r).toMatchObject({ format: 'ESRI Shapefile', filename: 'parcels.zip', media_type: 'application/zip', layers: ['parcels'] });
    const entries = (await readZipDirectory(path.join(dir, r.filename))).map((e) => e.name).sort();
    expect(entries).toEqual(['parcels.cpg', 'parcels.dbf', 'parcels.prj', 'parcels.shp', 'parcels.shx']);
    const shp = readLayer(`/vsizip/${path.join(dir, r.filename)}/parcels.shp`);
    expect(shp.srs).toBe('EPSG:2056');
    // A GEOMETRY layer went into one polygon shapefile; single-part shapes read back as POLYGON.
    expect(gdal.Geometry.getName(shp.geomType)).toBe('Polygon');
    expect(shp.features.map((f) => f.type)).toEqual(['POLYGON', 'MULTIPOLYGON']);
    const names = shp.fields.map((f) => f.name);
    expect(names.every((name) => Buffer.byteLength(name) <= 10)).toBe(true);
    expect(new Set(names).size).toBe(names.length);
    expect(shp.features.map((f) => Object.values(f.props))).toEqual([
      [1, 1, 2, 'Müller'],
      [2, 3, 4, 'Núñez'],
    ]);
    // The .cpg is what tells other software the .dbf is UTF-8.
    expect(run('unzip', ['-p', path.join(dir, r.filename), 'parcels.cpg']).trim()).toBe('UTF-8');
  });

  it('writes several layers as several shapefiles in one ZIP (tables as .dbf only), empty layers included', async () => {
    const dir = out();
    const r = await convertDataset(datasetAt(gpkg), { outputFormat: 'ESRI Shapefile' }, dir);
    const entries = (await readZipDirectory(path.join(dir, r.filename))).map((e) => e.name).sort();
    expect(entries).toEqual(expect.arrayContaining(['stations.shp', 'stations.dbf', 'operators.dbf', 'closed.shp']));
    expect(entries).not.toContain('operators.shp');
    expect(readLayer(`/vsizip/${path.join(dir, r.filename)}/stations.shp`).features[0]!.type).toBe('POINT'); // points stay points
    expect(readLayer(`/vsizip/${path.join(dir, r.filename)}/closed.shp`).features).toHaveLength(0);
  });

  it('converts mixed polygons from a shapefile to FlatGeobuf (promoted to multi)', async () => {
    const shpDir = out();
    const zip = await convertDataset(datasetAt(mixed), { outputFormat: 'shp' }, shpDir);
    const ref = await prepareUpload(path.join(shpDir, zip.filename), 'parcels.zip', d('ws-fgb'), { maxUncompressedBytes: 1e7 });
    const dir = out();
    const r = await convertDataset(ref, { outputFormat: 'fgb' }, dir);
    const f = readLayer(path.join(dir, r.filename));
    expect(gdal.Geometry.getName(f.geomType)).toBe('Multi Polygon');
    expect(f.features.map((x) => x.type)).toEqual(['MULTIPOLYGON', 'MULTIPOLYGON']);
    // FlatGeobuf's spatial index orders features along a curve: look them up by id.
    expect(f.features.map((x) => x.props.id).sort()).toEqual([1, 2]);
  });

  it('writes CSV with geometry as WKT, KML, and a lat/lon CSV to GeoPackage with WGS 84', async () => {
    const dir = out();
    const r = await convertDataset(datasetAt(gpkg), { outputFormat: 'csv', layers: ['stations'] }, dir);
    const text = run('cat', [path.join(dir, r.filename)]);
    expect(text.split('\n')[0]).toBe('WKT,id,name');
    expect(text).toMatch(/^"POINT \(8\.54 47\.378\)","?1"?,Zürich Hauptbahnhof$/m);

    const kml = await convertDataset(datasetAt(gpkg), { outputFormat: 'KML' }, out());
    expect(kml.filename).toBe('city.kml');

    const ref = await prepareUpload(write(d('u.csv'), 'name,lat,lon\nBern,46.95,7.44\n'), 'places.csv', d('ws-csv'), { maxUncompressedBytes: 1e6 });
    const gdir = out();
    const g = await convertDataset(ref, { outputFormat: 'GPKG' }, gdir);
    const layer = readLayer(path.join(gdir, g.filename));
    expect(layer.srs).toBe('EPSG:4326');
    expect(layer.features[0]!.wkt).toBe('POINT (7.44 46.95)');
  });

  it('refuses unknown, read-only and wrong-kind formats with invalid_parameter naming the catalog', async () => {
    const unknown = await refusal(convertDataset(datasetAt(gpkg), { outputFormat: 'nope' }, out()), 'invalid_parameter');
    expect(unknown.message).toContain('/api/v1/formats');
    expect(unknown.details).toMatchObject({ parameter: 'output_format', value: 'nope' });
    for (const readOnlyName of ['OSM', 'dwg']) {
      const readOnly = await refusal(convertDataset(datasetAt(gpkg), { outputFormat: readOnlyName }, out()), 'invalid_parameter');
      expect(readOnly.message).toMatch(/can be read but not written/);
    }
    const raster = await refusal(convertDataset(datasetAt(gpkg), { outputFormat: 'GTiff' }, out()), 'invalid_parameter');
    expect(raster.message).toMatch(/raster format/);
    const crs = await refusal(convertDataset(datasetAt(gpkg), { outputFormat: 'GPKG', targetCrs: 'EPSG:999999' }, out()), 'invalid_parameter');
    expect(crs.details.parameter).toBe('target_crs');
    const layer = await refusal(convertDataset(datasetAt(gpkg), { outputFormat: 'GPKG', layers: ['missing'] }, out()), 'invalid_parameter');
    expect(layer.details.layers).toEqual(layerNames(gpkg));
  });

  it('converts rasters: GeoTIFF to COG, to PNG (stretched to bytes) and reprojected', async () => {
    const tif = d('dem.tif');
    constantGeoTiff(tif, { size: [40, 20], burn: [1200], type: 'Int16', srs: 'EPSG:2056', ullr: [2600000, 1200400, 2600800, 1200000] });
    const cogDir = out();
    const cog = await convertDataset(datasetAt(tif), { outputFormat: 'COG' }, cogDir);
    expect(cog).toMatchObject({ format: 'COG', filename: 'dem.tif', layers: [] });
    const c = gdal.open(path.join(cogDir, cog.filename));
    expect(c.getMetadata('IMAGE_STRUCTURE').LAYOUT).toBe('COG');
    expect(c.bands.get(1).pixels.get(0, 0)).toBe(1200);
    c.close();

    const pngDir = out();
    const png = await convertDataset(datasetAt(tif), { outputFormat: 'png' }, pngDir);
    expect(png).toMatchObject({ format: 'PNG', filename: 'dem.png', media_type: 'image/png' });
    expect(readdirSync(pngDir)).toEqual(['dem.png']);
    const p = gdal.open(path.join(pngDir, png.filename));
    expect(p.bands.get(1).dataType).toBe('Byte');
    p.close();

    // and back: a PNG (no georeferencing left) to GeoTIFF
    const backDir = out();
    const back = await convertDataset(datasetAt(path.join(pngDir, png.filename)), { outputFormat: 'GTiff' }, backDir);
    expect(back).toMatchObject({ format: 'GTiff', filename: 'dem.tif', media_type: 'image/tiff' });
    const b = gdal.open(path.join(backDir, back.filename));
    expect(b.rasterSize).toMatchObject({ x: 40, y: 20 });
    b.close();

    const wDir = out();
    const warped = await convertDataset(datasetAt(tif), { outputFormat: 'GTiff', targetCrs: 'EPSG:4326' }, wDir);
    const w = gdal.open(path.join(wDir, warped.filename));
    expect(w.srs?.getAuthorityCode(null)).toBe('4326');
    expect(w.geoTransform![0]).toBeCloseTo(7.4386, 2);
    w.close();
  });
});
