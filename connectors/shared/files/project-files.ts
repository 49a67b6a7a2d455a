import { mkdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { datasetAt, safeFilename } from '../../../geo/datasets/dataset-files.js';
import { inspectDataset } from '../../../geo/isolation/index.js';
import type { ConnectorContext, ProjectLayer } from '../../types.js';
import { ConnectorError } from '../../../domain/transfers.js';
import { GdalWriteFailed, runGdalWrite } from '../../../geo/gdal/translate.js';

/*
 * The files of a field-data project (QFieldCloud, Mergin Maps) as geodata: which of them hold
 * vector layers, what those layers are (read with GDAL from a downloaded copy), and one layer
 * taken out of a multi-layer file for a Run. Both platforms keep a project as a folder of files
 * (a QGIS project, GeoPackages, photos, styles); only the vector files matter here.
 */

/** Extensions of single-file vector formats GDAL reads, as field projects carry them. */
const vectorExtensions = new Set(['gpkg', 'geojson', 'fgb', 'kml', 'gml', 'gpx', 'sqlite', 'shp']);

/** The files a shapefile needs beside its .shp (downloaded with it when present). */
export const shapefileCompanions = ['shx', 'dbf', 'prj', 'cpg'];

const extension = (name: string) => path.posix.extname(name).slice(1).toLowerCase();

export const isVectorFile = (name: string) => vectorExtensions.has(extension(name));

/** The companions of `name` (a .shp) that exist among `available`, matched without case. */
export function companionsOf(name: string, available: readonly string[]): string[] {
  if (extension(name) !== 'shp') return [];
  const stem = name.slice(0, -4).toLowerCase();
  return available.filter((other) => shapefileCompanions.some((ext) => other.toLowerCase() === `${stem}.${ext}`));
}

/**
 * Where a project file goes inside a work folder: its own sub-folder (so a shapefile's parts sit
 * together and two files of the same name in different project folders never meet), under a
 * safe name. The project path itself never becomes a server path.
 */
export async function localPathFor(ctx: ConnectorContext, slot: string, name: string): Promise<string> {
  const dir = path.join(ctx.workDir, safeFilename(slot));
  await mkdir(dir, { recursive: true });
  // A shapefile's parts keep their one stem, so GDAL finds them beside the .shp.
  return path.join(dir, safeFilename(path.posix.basename(name)));
}

/** The layers of a downloaded vector file (geometry type, CRS, feature count). */
export async function describeLayers(file: string): Promise<ProjectLayer[]> {
  const info = await inspectDataset(datasetAt(file));
  return info.layers.map((l) => ({ name: l.name, geometry_type: l.geometry_type, crs: l.crs, feature_count: l.feature_count }));
}

/**
 * One layer of a downloaded vector file as its own GeoPackage in ctx.workDir (named after the
 * layer, so the Run's input is named after it too). Without `layer`, a single-file format is kept
 * as it is and a shapefile is turned into a GeoPackage (a Run reads one file).
 */
export async function singleLayerFile(
  file: string,
  layer: string | undefined,
  ctx: ConnectorContext,
  label: string,
): Promise<{ file: string; filename: string; bytes: number }> {
  if (!layer && extension(file) !== 'shp') return { file, filename: path.basename(file), bytes: (await stat(file)).size };
  const layers = await describeLayers(file).catch((error: unknown) => {
    throw new ConnectorError('invalid_data', `${label} cannot be read as vector data: ${(error as Error).message}`, {}, false);
  });
  const chosen = layer ?? layers[0]?.name;
  if (!chosen || !layers.some((l) => l.name === chosen)) {
    throw new ConnectorError(
      'not_found',
      `${label} has no layer "${layer}"; its layers: ${layers.map((l) => l.name).join(', ') || 'none'}`,
      { layer, layers: layers.map((l) => l.name) },
      false,
    );
  }
  const filename = `${safeFilename(chosen)}.gpkg`;
  const out = path.join(ctx.workDir, filename);
  await rm(out, { force: true });
  // A file from the platform is a user's file: GDAL reads it in the sandbox, seeing only its folder.
  await runGdalWrite(
    'ogr2ogr',
    ['-f', 'GPKG', out, file, chosen, '-nln', chosen],
    { readable: [path.dirname(file)], writable: [path.resolve(ctx.workDir)], output: out },
    { what: label, signal: ctx.signal, maxBytes: ctx.maxBytes },
  ).catch((error: unknown) => {
    if (!(error instanceof GdalWriteFailed)) throw error;
    throw new ConnectorError('invalid_data', `${label}: layer ${chosen} could not be copied (${error.message})`, { layer: chosen }, false);
  });
  // The download's own folder (see localPathFor) goes; the work folder itself stays.
  if (path.dirname(file) !== path.resolve(ctx.workDir)) await rm(path.dirname(file), { recursive: true, force: true });
  return { file: out, filename, bytes: (await stat(out)).size };
}
