import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertDataset } from '../../geo/isolation/index.js';
import { datasetAt, type DatasetRef } from '../../geo/datasets/dataset-files.js';
import { formatCatalog } from '../../geo/datasets/formats.js';
import { gdal } from '../../geo/gdal/gdal.js';
import { addGpkgLayer, tempFolder, vectorFromCsv } from './support.js';
import { engineAvailable } from '../../geo/formats/engine.js';
import { constantGeoTiff } from '../support/fixtures.js';

/*
 * Issue 8: GET /api/v1/formats lists only what convert can really write. Every output the
 * catalog lists is written here from an ordinary dataset (points and polygons in EPSG:2263,
 * non-ASCII text; a one-band DEM and an RGB image), so a driver that cannot do it fails this
 * test rather than a user's convert.
 */
describe('the format catalog', { timeout: 600_000 }, () => {
  const tmp = tempFolder('formats');
  const d = (n: string) => path.join(tmp.dir, n);
  let n = 0;
  const out = () => d(`out-${++n}`);
  let vector: DatasetRef;
  const rasters: DatasetRef[] = [];

  beforeAll(() => {
    const gpkg = vectorFromCsv(d('city.gpkg'), 'id,name,wkt\n1,Grand Central – Ünïcode,"POINT (990000 212000)"\n2,Fulton St,"POINT (982000 197000)"\n', [
      '-a_srs',
      'EPSG:2263',
      '-nln',
      'stations',
      '-nlt',
      'POINT',
    ]);
    addGpkgLayer(gpkg, 'parks', 'id,name,wkt\n1,Bryant Park,"POLYGON ((987000 213000,988000 213000,988000 214000,987000 214000,987000 213000))"\n', [
      '-a_srs',
      'EPSG:2263',
      '-nlt',
      'POLYGON',
    ]);
    vector = datasetAt(gpkg);
    constantGeoTiff(d('dem.tif'), { size: [64, 48], burn: [12.5], type: 'Float32', srs: 'EPSG:2263', ullr: [980000, 200000, 986400, 195200] });
    constantGeoTiff(d('rgb.tif'), { size: [64, 48], burn: [10, 200, 30], type: 'Byte', srs: 'EPSG:2263', ullr: [980000, 200000, 986400, 195200] });
    rasters.push(datasetAt(d('dem.tif')), datasetAt(d('rgb.tif')));
  });
  afterAll(() => tmp.remove());

  it('holds file formats only, labelled without their extensions', () => {
    const ids = formatCatalog().map((f) => f.id);
    for (const absent of ['Memory', 'MEM', 'PostgreSQL', 'MySQL', 'Carto', 'MSSQLSpatial', 'VRT', 'WMS', 'GPSBabel']) expect(ids, absent).not.toContain(absent);
    for (const f of formatCatalog()) {
      expect(f.read || f.write, f.id).toBe(true);
      expect(f.name, f.id).not.toMatch(/\((?:\.[\w-]+(?:,\s*)?)+\)$/);
      // GeoParquet and PMTiles are the formats engine's, not GDAL drivers.
      if (f.id === 'GeoParquet' || f.id === 'PMTiles') continue;
      const md = gdal.drivers.get(f.id).getMetadata() as Record<string, string>;
      expect(md.DMD_CONNECTION_PREFIX, f.id).toBeUndefined();
    }
    expect(formatCatalog().find((f) => f.id === 'CSV')?.name).toBe('Comma Separated Value');
  });

  it('offers no raster-first driver as a vector output', () => {
    const vectorOutputs = formatCatalog()
      .filter((f) => f.kind === 'vector' && f.write)
      .map((f) => f.id);
    for (const id of ['JP2OpenJPEG', 'PDF', 'FITS', 'netCDF', 'PCIDSK', 'PDS4', 'BAG', 'VICAR']) expect(vectorOutputs, id).not.toContain(id);
    // Vector MBTiles (and PMTiles, GeoParquet) are written by the formats engine when it is installed, not by GDAL 3.6.
    if (!engineAvailable()) expect(vectorOutputs).not.toContain('MBTiles');
    for (const id of ['GPKG', 'GeoJSON', 'ESRI Shapefile', 'FlatGeobuf', 'CSV', 'KML', 'GML', 'OpenFileGDB']) expect(vectorOutputs, id).toContain(id);
  });

  it('writes every vector output it lists, each layer kept', async () => {
    const outputs = formatCatalog().filter((f) => f.kind === 'vector' && f.write);
    expect(outputs.length).toBeGreaterThan(15);
    const failures: string[] = [];
    for (const format of outputs) {
      const dir = out();
      // GPX holds points and lines: its row is the points layer.
      const layers = format.id === 'GPX' ? ['stations'] : ['stations', 'parks'];
      try {
        const result = await convertDataset(vector, { outputFormat: format.id, layers }, dir);
        expect(result.format, format.id).toBe(format.id);
        expect(result.layers, format.id).toEqual(layers);
        expect(result.size, format.id).toBeGreaterThan(0);
        expect(readdirSync(dir), format.id).toEqual([result.filename]);
      } catch (error) {
        failures.push(`${format.id}: ${String(error)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('writes every raster output it lists, from a one-band DEM or an RGB image', async () => {
    const outputs = formatCatalog().filter((f) => f.kind === 'raster' && f.write);
    expect(outputs.length).toBeGreaterThan(30);
    for (const format of outputs) {
      const written: string[] = [];
      const refusals: string[] = [];
      for (const raster of rasters) {
        try {
          const dir = out();
          const result = await convertDataset(raster, { outputFormat: format.id }, dir);
          expect(result.size, format.id).toBeGreaterThan(0);
          written.push(result.filename);
        } catch (error) {
          // A band count or data type a format does not take is the user's to fix: it says why.
          expect((error as { code?: string }).code, `${format.id}: ${String(error)}`).toBe('conversion_failed');
          refusals.push(String(error));
        }
      }
      expect(written.length, `${format.id} wrote nothing: ${refusals.join(' | ')}`).toBeGreaterThan(0);
    }
  });

  it('keeps the files a raster format writes beside its main file (ENVI .hdr, EHdr .hdr and .prj)', async () => {
    for (const id of ['ENVI', 'EHdr']) {
      const dir = out();
      const result = await convertDataset(rasters[0]!, { outputFormat: id }, dir);
      expect(result.filename, id).toBe('dem.zip');
      const ds = gdal.open(`/vsizip/${path.join(dir, result.filename)}/${id === 'ENVI' ? 'dem.envi' : 'dem.bil'}`);
      try {
        expect(ds.rasterSize, id).toEqual({ x: 64, y: 48 });
        expect(ds.srs?.getAuthorityCode(null) ?? ds.srs?.toWKT(), id).toBeTruthy();
      } finally {
        ds.close();
      }
    }
  });
});
