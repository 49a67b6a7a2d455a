import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Small real-world-shaped datasets, made with GDAL's own tools at test time. */
export function fixtureDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'svc-fixtures-'));
}

const ogr = (args: string[]) => execFileSync('ogr2ogr', args, { stdio: 'pipe' });

export function pointsGeoJson(dir: string, count = 25): string {
  const features = Array.from({ length: count }, (_, i) => ({
    type: 'Feature',
    properties: { id: i + 1, name: i % 2 ? `Zürich ${i}` : `Genève ${i}`, population: 1000 * (i + 1) },
    geometry: { type: 'Point', coordinates: [6 + i * 0.1, 46 + i * 0.05] },
  }));
  const file = path.join(dir, 'places.geojson');
  writeFileSync(file, JSON.stringify({ type: 'FeatureCollection', features }));
  return file;
}

/** Polygon and MultiPolygon in one layer, projected (Swiss LV95), with a long field name. */
export function mixedPolygonsGeoJson(dir: string): string {
  const square = (x: number, y: number, s: number) => [[[x, y], [x + s, y], [x + s, y + s], [x, y + s], [x, y]]];
  const file = path.join(dir, 'parcels.geojson');
  writeFileSync(
    file,
    JSON.stringify({
      type: 'FeatureCollection',
      crs: { type: 'name', properties: { name: 'urn:ogc:def:crs:EPSG::2056' } },
      features: [
        { type: 'Feature', properties: { parcel_identifier_long_name: 'A-1', owner: 'Müller' }, geometry: { type: 'Polygon', coordinates: square(2600000, 1200000, 100) } },
        { type: 'Feature', properties: { parcel_identifier_long_name: 'B-2', owner: 'Løvland' }, geometry: { type: 'MultiPolygon', coordinates: [square(2600200, 1200000, 50), square(2600300, 1200000, 50)] } },
      ],
    }),
  );
  return file;
}

/** A GeoPackage with a spatial layer and a plain attribute table. */
export function twoLayerGpkg(dir: string): string {
  const gpkg = path.join(dir, 'city.gpkg');
  ogr(['-f', 'GPKG', gpkg, pointsGeoJson(dir), '-nln', 'places']);
  const csv = path.join(dir, 'owners.csv');
  writeFileSync(csv, 'owner_id,owner_name\n1,Ana\n2,Bo\n3,Çelik\n');
  ogr(['-f', 'GPKG', '-update', gpkg, csv, '-nln', 'owners']);
  return gpkg;
}

export function latLonCsv(dir: string): string {
  const file = path.join(dir, 'stations.csv');
  writeFileSync(file, 'name,lat,lon\nBern,46.948,7.447\nLausanne,46.519,6.632\nChur,46.853,9.530\n');
  return file;
}

/** A zipped shapefile with its companions, as users upload them. */
export function zippedShapefile(dir: string): string {
  const shpDir = path.join(dir, 'shp');
  ogr(['-f', 'ESRI Shapefile', shpDir, pointsGeoJson(dir), '-nln', 'places', '-lco', 'ENCODING=UTF-8']);
  const zip = path.join(dir, 'places.zip');
  execFileSync('zip', ['-j', '-q', zip, ...['shp', 'shx', 'dbf', 'prj', 'cpg'].map((e) => path.join(shpDir, `places.${e}`))]);
  return zip;
}
