import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { DomainError } from '../../domain/errors.js';
import type { FormatEntry } from './formats.js';
import { gdal, layerSrs, type Dataset, type DatasetRef } from '../gdal/gdal.js';
import { bytesUnder, GdalWriteFailed, inputArgs, readableOf, runGdalWrite, type WriteLimits } from '../gdal/translate.js';
import { writeGeoParquet } from '../formats/geoparquet.js';
import { writeVectorTiles } from '../formats/vector-tiles.js';

/*
 * convertDataset's branch for the formats the engine writes (geo/formats/catalog.ts). GeoParquet
 * is read straight from the input by the engine's GDAL when nothing needs the service's GDAL first;
 * a reprojection, an assumed CRS (CSV), a driver the engine lacks, or FlatGeobuf (whose Arrow
 * reader in GDAL 3.12.4 corrupts the geometries after a null one, measured) go through a
 * GeoPackage the service's ogr2ogr writes first.
 */

export interface EngineConvertRequest {
  targetCrs?: string | null;
  layers: string[];
}

/** Drivers whose files the engine's GDAL 3.12 opens as the service's GDAL 3.6 does. */
const directDrivers = new Set([
  'GPKG',
  'SQLite',
  'ESRI Shapefile',
  'GeoJSON',
  'GeoJSONSeq',
  'CSV',
  'OpenFileGDB',
  'MapInfo File',
  'GPX',
  'KML',
  'LIBKML',
  'GML',
  'XLSX',
  'ODS',
]);

const safeName = (name: string) => name.replace(/[\\/\u0000-\u001f:*?"<>|]/g, '_').replace(/^\.+/, '') || 'layer';

/** One conversion by the engine: what convertDataset has opened, checked and named. */
export interface EngineConversion {
  ds: Dataset;
  input: DatasetRef;
  format: FormatEntry;
  request: EngineConvertRequest;
  /** Checked creation options (engineCreationOptions). */
  creation: Record<string, string>;
  /** Scratch folder whose files become the download. */
  work: string;
  stem: string;
  ext: string;
  limits: WriteLimits;
}

export async function convertWithEngine(job: EngineConversion): Promise<void> {
  try {
    await convertLayers(job);
  } finally {
    // Staged copies are not part of the download (convertDataset zips what is left in work).
    await rm(path.join(job.work, '.stage'), { recursive: true, force: true });
  }
}

async function convertLayers({ ds, input, format, request, creation, work, stem, ext, limits }: EngineConversion): Promise<void> {
  const layers = request.layers.map((n) => ds.layers.get(n));
  const noCrs = layers.filter((l) => l.geomType !== gdal.wkbNone && !layerSrs(l));
  if (format.id === 'GeoParquet') {
    for (const layer of layers) {
      const output = path.join(work, `${layers.length === 1 ? stem : safeName(layer.name)}.${ext}`);
      const needsGdal = !!request.targetCrs || (noCrs.includes(layer) && !!input.assumedCrs) || !directDrivers.has(ds.driver.description);
      const source = needsGdal
        ? await staged(input, layer.name, request.targetCrs ?? null, noCrs.includes(layer) ? (input.assumedCrs ?? null) : null, work, limits)
        : input;
      const layerName = needsGdal ? 'layer' : layer.name;
      const readable = await readableOf(source);
      await writeGeoParquet({ source, layer: layerName, output, options: creation }, readable, {
        ...limits,
        what: 'The conversion',
        onPercent: (percent) => void bytesUnder(output).then((bytes) => limits.progress?.({ bytes_written: bytes, percent })),
      });
    }
    return;
  }
  // Vector tiles: WGS 84 in, Web Mercator tiles out; every layer needs a place on the map.
  if (request.targetCrs && !/^(EPSG:)?(3857|4326|900913)$/i.test(request.targetCrs.trim())) {
    throw new DomainError('invalid_parameter', `${format.name} are always in Web Mercator (EPSG:3857): omit target_crs`, { parameter: 'target_crs' });
  }
  const withoutGeometry = layers.filter((l) => l.geomType === gdal.wkbNone);
  if (withoutGeometry.length) {
    throw new DomainError(
      'conversion_failed',
      `Layer ${JSON.stringify(withoutGeometry[0]!.name)} has no geometry, so it cannot become vector tiles: choose the spatial layers`,
      {
        format: format.id,
        layer: withoutGeometry[0]!.name,
      },
    );
  }
  if (noCrs.length && !input.assumedCrs) {
    throw new DomainError(
      'conversion_failed',
      `Layer ${JSON.stringify(noCrs[0]!.name)} has no coordinate reference system, so its features cannot be placed on the map`,
      {
        format: format.id,
        layer: noCrs[0]!.name,
      },
    );
  }
  const tileLayers = layers.map((l) => {
    const fields: string[] = [];
    l.fields.forEach((f) => void fields.push(f.name));
    return { name: l.name, fields };
  });
  const source = noCrs.length ? await stagedAll(input, request.layers, input.assumedCrs!, work, limits) : input;
  await writeVectorTiles(source, tileLayers, path.join(work, `${stem}.${ext}`), creation, work, limits);
}

/** One layer copied by the service's ogr2ogr into a GeoPackage (layer "layer") the engine reads. */
async function staged(
  input: DatasetRef,
  layer: string,
  targetCrs: string | null,
  assumedCrs: string | null,
  work: string,
  limits: WriteLimits,
): Promise<DatasetRef> {
  const dir = path.join(work, '.stage');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, `${Math.random().toString(36).slice(2)}.gpkg`);
  const crs = assumedCrs ? [targetCrs ? '-s_srs' : '-a_srs', assumedCrs] : [];
  try {
    await runGdalWrite(
      'ogr2ogr',
      ['-f', 'GPKG', '-lco', 'SPATIAL_INDEX=NO', '-nln', 'layer', ...crs, ...(targetCrs ? ['-t_srs', targetCrs] : []), file, ...inputArgs(input), layer],
      { readable: [await readableOf(input)], writable: [dir], output: file },
      { ...limits, what: 'The conversion' },
    );
  } catch (err) {
    if (err instanceof DomainError) throw err;
    const reason = err instanceof GdalWriteFailed ? err.errors.slice(0, 3).join('; ') || err.message : String(err);
    throw new DomainError('conversion_failed', `Layer ${JSON.stringify(layer)} cannot be read for GeoParquet: ${reason}`, { layer, reason });
  }
  return { path: file, openOptions: [], warnings: [] };
}

/** Every layer given its assumed CRS in one GeoPackage, for the tiler (CSV points). */
async function stagedAll(input: DatasetRef, layers: string[], assumedCrs: string, work: string, limits: WriteLimits): Promise<DatasetRef> {
  const dir = path.join(work, '.stage');
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, 'assumed.gpkg');
  await runGdalWrite(
    'ogr2ogr',
    ['-f', 'GPKG', '-lco', 'SPATIAL_INDEX=NO', '-a_srs', assumedCrs, file, ...inputArgs(input), ...layers],
    { readable: [await readableOf(input)], writable: [dir], output: file },
    { ...limits, what: 'The conversion' },
  );
  return { path: file, openOptions: [], warnings: [] };
}
