import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { datasetAt, prepareUpload } from '../../geo/datasets/dataset-files.js';
import { inspectDataset } from '../../geo/isolation/index.js';
import { writeZip } from '../../geo/datasets/zip.js';
import { addGpkgLayer, run, tempFolder, vectorFromCsv, write } from './support.js';
import { constantGeoTiff } from '../support/fixtures.js';

const limits = { maxUncompressedBytes: 50 * 1024 * 1024 };

describe('inspectDataset', { timeout: 60_000 }, () => {
  const tmp = tempFolder('inspect');
  const d = (name: string) => path.join(tmp.dir, name);
  afterAll(() => tmp.remove());

  let gpkg: string;
  beforeAll(() => {
    gpkg = vectorFromCsv(
      d('city.gpkg'),
      'id,name,wkt\n1,Zürich,"POLYGON ((8.5 47.3,8.6 47.3,8.6 47.4,8.5 47.4,8.5 47.3))"\n2,Genève,"POLYGON ((6.1 46.2,6.2 46.2,6.2 46.3,6.1 46.2))"\n',
      ['-a_srs', 'EPSG:4326', '-nln', 'districts', '-nlt', 'POLYGON'],
    );
    addGpkgLayer(gpkg, 'owners', 'owner_id,full_name,share\n1,Anna Müller,0.5\n2,José Núñez,0.25\n');
    addGpkgLayer(gpkg, 'planned', 'id,wkt\n', ['-a_srs', 'EPSG:2056', '-nlt', 'POINT']);
  });

  it('describes a GeoPackage with a spatial layer, an attribute table and an empty layer', async () => {
    const info = await inspectDataset(datasetAt(gpkg));
    expect(info.dataset_type).toBe('vector');
    expect(info.driver).toBe('GPKG');
    expect(info.format).toBe('GeoPackage');
    expect(info.raster).toBeNull();
    expect(info.crs).toBe('EPSG:4326');
    const [districts, owners, planned] = ['districts', 'owners', 'planned'].map((n) => info.layers.find((l) => l.name === n)!);
    expect(districts).toEqual({
      name: 'districts',
      geometry_type: 'POLYGON',
      has_geometry: true,
      feature_count: 2,
      crs: 'EPSG:4326',
      crs_info: { code: 'EPSG:4326', name: 'WGS 84', unit: 'degree', geographic: true },
      fields: [
        { name: 'id', type: 'Integer' },
        { name: 'name', type: 'String' },
      ],
      extent: [6.1, 46.2, 8.6, 47.4],
    });
    expect(owners).toMatchObject({ has_geometry: false, geometry_type: null, crs: null, crs_info: null, feature_count: 2, extent: null });
    expect(owners!.fields).toEqual([
      { name: 'owner_id', type: 'Integer' },
      { name: 'full_name', type: 'String' },
      { name: 'share', type: 'Real' },
    ]);
    expect(planned).toMatchObject({
      has_geometry: true,
      geometry_type: 'POINT',
      feature_count: 0,
      crs: 'EPSG:2056',
      crs_info: { code: 'EPSG:2056', name: 'CH1903+ / LV95', unit: 'metre', geographic: false },
      extent: null,
    });
    expect(JSON.stringify(info)).not.toContain(tmp.dir);
  });

  it('describes a shapefile ZIP in a projected CRS with non-ASCII names and values', async () => {
    const shpDir = d('shp');
    vectorFromCsv(path.join(shpDir, 'gebäude.shp'), 'höhe,straße,wkt\n12.5,Bahnhofstraße,"POINT (2683000 1248000)"\n', [
      '-a_srs',
      'EPSG:2056',
      '-lco',
      'ENCODING=UTF-8',
    ]);
    const zip = d('upload.zip');
    await writeZip(
      zip,
      readdirSync(shpDir).map((f) => ({ path: path.join(shpDir, f), name: f })),
    );
    const ref = await prepareUpload(zip, 'gebäude.zip', d('ws-shp'), limits);
    const info = await inspectDataset(ref);
    expect(info.driver).toBe('ESRI Shapefile');
    expect(info.crs).toBe('EPSG:2056');
    expect(info.layers).toHaveLength(1);
    expect(info.layers[0]).toMatchObject({
      name: 'gebäude',
      geometry_type: 'POINT',
      feature_count: 1,
      crs: 'EPSG:2056',
      fields: [
        { name: 'höhe', type: 'Real' },
        { name: 'straße', type: 'String' },
      ],
      extent: [2683000, 1248000, 2683000, 1248000],
    });
  });

  it('describes GeoJSON, FlatGeobuf, GML and an empty GeoJSON layer', async () => {
    const geojson = write(
      d('lines.geojson'),
      JSON.stringify({
        type: 'FeatureCollection',
        features: [
          {
            type: 'Feature',
            properties: { name: 'a', n: 1 },
            geometry: {
              type: 'LineString',
              coordinates: [
                [7, 46, 500],
                [8, 47, 600],
              ],
            },
          },
        ],
      }),
    );
    const gj = await inspectDataset(datasetAt(geojson));
    // GDAL reads GeoJSON with Z coordinates as WGS 84 3D.
    expect(gj).toMatchObject({ driver: 'GeoJSON', crs: 'EPSG:4979' });
    expect(gj.layers[0]).toMatchObject({ name: 'lines', geometry_type: 'LINESTRING Z', feature_count: 1 });

    run('ogr2ogr', [d('lines.fgb'), geojson]);
    const fgb = await inspectDataset(datasetAt(d('lines.fgb')));
    expect(fgb).toMatchObject({ driver: 'FlatGeobuf', format: 'FlatGeobuf', crs: 'EPSG:4979' });
    expect(fgb.layers[0]).toMatchObject({
      geometry_type: 'LINESTRING Z',
      feature_count: 1,
      fields: [
        { name: 'name', type: 'String' },
        { name: 'n', type: 'Integer' },
      ],
    });

    run('ogr2ogr', ['-f', 'GML', d('lines.gml'), geojson]);
    const gml = await inspectDataset(datasetAt(d('lines.gml')));
    expect(gml.driver).toBe('GML');
    expect(gml.layers[0]!.feature_count).toBe(1);
    expect(gml.layers[0]!.fields.map((f) => f.name)).toContain('name');

    const empty = await inspectDataset(datasetAt(write(d('empty.geojson'), '{"type":"FeatureCollection","features":[]}')));
    expect(empty.layers[0]).toMatchObject({ name: 'empty', feature_count: 0, extent: null });
  });

  it('describes KML, KMZ and GPX', async () => {
    const kml = write(
      d('places.kml'),
      '<?xml version="1.0" encoding="UTF-8"?><kml xmlns="http://www.opengis.net/kml/2.2"><Document><Folder><name>Sights</name><Placemark><name>Münster</name><Point><coordinates>7.451,46.947</coordinates></Point></Placemark></Folder></Document></kml>',
    );
    const k = await inspectDataset(datasetAt(kml));
    expect(k.driver).toMatch(/KML/);
    expect(k.layers[0]).toMatchObject({ name: 'Sights', feature_count: 1, crs: 'EPSG:4326' });

    await writeZip(d('places.kmz'), [{ path: kml, name: 'doc.kml' }]);
    const kmz = await inspectDataset(datasetAt(d('places.kmz')));
    expect(kmz.driver).toBe('LIBKML');
    expect(kmz.layers.some((l) => l.feature_count === 1)).toBe(true);

    const gpx = write(
      d('walk.gpx'),
      '<?xml version="1.0"?><gpx version="1.1" creator="test" xmlns="http://www.topografix.com/GPX/1/1"><wpt lat="46.9" lon="7.4"><name>Start</name></wpt><trk><name>Walk</name><trkseg><trkpt lat="46.9" lon="7.4"/><trkpt lat="46.91" lon="7.41"/></trkseg></trk></gpx>',
    );
    const g = await inspectDataset(datasetAt(gpx));
    expect(g.driver).toBe('GPX');
    expect(g.layers.find((l) => l.name === 'waypoints')).toMatchObject({ geometry_type: 'POINT', feature_count: 1 });
    expect(g.layers.find((l) => l.name === 'tracks')).toMatchObject({ geometry_type: 'MULTILINESTRING', feature_count: 1 });
  });

  it('reads CSV as a table, or as points/geometries from lon/lat or WKT columns (WGS 84 assumed)', async () => {
    const plain = await prepareUpload(write(d('u1'), 'code,label\nA,Eins\nB,Zwei\n'), 'codes.csv', d('ws-csv1'), limits);
    const p = await inspectDataset(plain);
    expect(p.driver).toBe('CSV');
    expect(p.layers[0]).toMatchObject({ name: 'codes', has_geometry: false, feature_count: 2, crs: null });

    const latlon = await prepareUpload(write(d('u2'), 'name,latitude,longitude\nBern,46.95,7.44\nBasel,47.56,7.59\n'), 'cities.csv', d('ws-csv2'), limits);
    const ll = await inspectDataset(latlon);
    expect(ll.layers[0]).toMatchObject({
      has_geometry: true,
      geometry_type: 'POINT',
      crs: 'EPSG:4326',
      feature_count: 2,
      fields: [{ name: 'name', type: 'String' }],
    });
    expect(ll.layers[0]!.extent).toEqual([7.44, 46.95, 7.59, 47.56]);
    expect(ll.warnings.join(' ')).toMatch(/EPSG:4326.*assumed/);

    const wkt = await prepareUpload(write(d('u3'), 'id,WKT\n1,"POLYGON ((0 0,1 0,1 1,0 0))"\n'), 'shapes.csv', d('ws-csv3'), limits);
    const w = await inspectDataset(wkt);
    expect(w.layers[0]).toMatchObject({ has_geometry: true, feature_count: 1, fields: [{ name: 'id', type: 'Integer' }] });
  });

  it('describes an XLSX workbook', async () => {
    const src = write(d('sheet.csv'), 'Name,Einwohner\nBern,134000\nThun,43000\n');
    run('ogr2ogr', ['-f', 'XLSX', d('book.xlsx'), src, '-nln', 'Gemeinden', '-oo', 'AUTODETECT_TYPE=YES']);
    const x = await inspectDataset(datasetAt(d('book.xlsx')));
    expect(x.driver).toBe('XLSX');
    expect(x.layers[0]).toMatchObject({
      name: 'Gemeinden',
      has_geometry: false,
      feature_count: 2,
      fields: [
        { name: 'Name', type: 'String' },
        { name: 'Einwohner', type: 'Integer' },
      ],
    });
  });

  it('describes a GeoTIFF raster', async () => {
    constantGeoTiff(d('dem.tif'), {
      size: [20, 10],
      burn: [7],
      bands: 2,
      type: 'Int16',
      srs: 'EPSG:32632',
      ullr: [400000, 5200000, 400200, 5199900],
      more: ['-a_nodata', '-9999'],
    });
    const r = await inspectDataset(datasetAt(d('dem.tif')));
    expect(r).toMatchObject({ dataset_type: 'raster', driver: 'GTiff', format: 'GeoTIFF', crs: 'EPSG:32632', layers: [] });
    expect(r.raster).toEqual({
      width: 20,
      height: 10,
      bands: [
        { type: 'Int16', no_data: -9999 },
        { type: 'Int16', no_data: -9999 },
      ],
      crs: 'EPSG:32632',
      geotransform: [400000, 10, 0, 5200000, 0, -10],
    });
  });
});
