import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { gdal, openDataset } from '../gdal/gdal.js';
import { engineCreationOptions, isEngineOutput } from '../formats/catalog.js';
import { distinctWarnings } from '../warnings.js';
import { convertWithEngine } from './convert-engine.js';
import { convertRaster } from './convert-raster.js';
import {
  badParameter,
  checkCrs,
  checkLayers,
  chooseOutputFormat,
  engineOptionsOf,
  type ConvertOptions,
  type ConvertRequest,
  type ConvertResult,
} from './convert-request.js';
import { convertVector } from './convert-vector.js';
import { safeFilename, stemOf, type DatasetRef } from './dataset-files.js';
import { ensureFreeSpace } from './disk.js';
import type { FormatEntry } from './formats.js';
import { outputStem } from './output-fidelity.js';
import { writeZip } from './zip.js';

export { checkConvertRequest, checkCreationOptions, chooseOutputFormat } from './convert-request.js';
export type { ConvertOptions, ConvertRequest, ConvertResult } from './convert-request.js';

/**
 * Converts a dataset to another format, writing the download into outDir. Vector data goes
 * through one ogr2ogr pass (a child process: geo/gdal/translate.ts) whenever the format allows, so
 * a plain conversion costs what ogr2ogr costs; raster data through gdal_translate (and gdalwarp
 * for a target CRS). Shapefiles, and several layers into a one-layer format, come back as one
 * ZIP. The input is only read.
 */
export async function convertDataset(input: DatasetRef, request: ConvertRequest, outDir: string, options: ConvertOptions = {}): Promise<ConvertResult> {
  if (request.targetCrs) checkCrs(request.targetCrs);
  await mkdir(outDir, { recursive: true });
  const work = path.join(outDir, `.convert-${randomUUID()}`);
  await mkdir(work);
  const ds = await openDataset(input);
  try {
    const layerNames: string[] = [];
    ds.layers.forEach((l) => {
      layerNames.push(l.name);
    });
    const raster = layerNames.length === 0 && ds.bands.count() > 0;
    const format = chooseOutputFormat(request.outputFormat, raster ? 'raster' : 'vector');
    const ext = primaryExtension(format);
    const wanted = stemOf(safeFilename(request.baseName || path.basename(input.path))) || 'output';
    // Before anything is written: a full disk fails here, clearly, not halfway through the file.
    await ensureFreeSpace(outDir, input, format, 'The conversion');
    if (raster) {
      const stem = outputStem(wanted, [`${wanted}.${ext}`], request.avoidFilename, format);
      const warnings = await convertRaster(input, ds, format, request, work, `${stem}.${ext}`, options);
      // Every file the driver wrote: ENVI's .hdr, EHdr's .hdr and .prj belong to the download.
      return { ...(await deliver(work, outDir, await filesIn(work), `${stem}.${ext}`, format, [])), warnings };
    }
    let selected = layerNames;
    if (request.layers && request.layers.length > 0) {
      checkLayers(request.layers, layerNames);
      selected = layerNames.filter((l) => request.layers!.includes(l));
    }
    if (selected.length === 0) throw badParameter('The dataset has no layers to convert', { parameter: 'layers' });
    // The name the download will have: a ZIP for a Shapefile, or for several layers of a one-layer format.
    const zipped = format.id === 'ESRI Shapefile' || (!format.multi_layer && selected.length > 1);
    const stem = outputStem(wanted, [zipped ? `${wanted}.zip` : `${wanted}.${ext}`], request.avoidFilename, format);
    if (isEngineOutput(format.id)) {
      const creation = engineCreationOptions(format.id, engineOptionsOf(request.creationOptions));
      await convertWithEngine({ ds, input, format, request: { ...request, layers: selected }, creation, work, stem, ext, limits: options });
      return { ...(await deliver(work, outDir, await filesIn(work), `${stem}.${ext}`, format, selected, stem)), warnings: [] };
    }
    const warnings = await convertVector(ds, input, format, request, selected, work, stem, ext, options);
    const files = await filesIn(work);
    return { ...(await deliver(work, outDir, files, `${stem}.${ext}`, format, selected, stem)), warnings: distinctWarnings(warnings) };
  } finally {
    ds.close();
    await rm(work, { recursive: true, force: true });
  }
}

/** Where GDAL's first extension is not the one people expect on a download. */
const preferredExtension: Record<string, string> = { GeoJSON: 'geojson', GeoJSONSeq: 'geojsonl' };

function primaryExtension(format: FormatEntry): string {
  if (preferredExtension[format.id]) return preferredExtension[format.id]!;
  if (format.kind === 'vector' && isEngineOutput(format.id)) return format.extensions[0]!;
  const md = gdal.drivers.get(format.id).getMetadata() as Record<string, string>;
  return md.DMD_EXTENSION || format.extensions[0] || format.id.toLowerCase().replace(/[^a-z0-9]/g, '');
}

async function filesIn(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(path.relative(dir, path.join(e.parentPath ?? e.path, e.name)));
  }
  return out.sort();
}

/** Moves the one produced file to outDir, or zips several into one download. */
async function deliver(
  work: string,
  outDir: string,
  files: string[],
  mainName: string,
  format: FormatEntry,
  layers: string[],
  stem?: string,
): Promise<Omit<ConvertResult, 'warnings'>> {
  // The warp step's VRT and GDAL's .aux.xml side files (PAM statistics) are not part of the
  // download; anything else a driver writes (a GML's .xsd, ENVI's .hdr) is.
  const wanted = files.filter((f) => f !== 'warped.vrt' && !(format.kind === 'raster' && f.endsWith('.aux.xml')));
  let filename: string;
  let mediaType: string;
  if (wanted.length === 1 && format.id !== 'ESRI Shapefile') {
    filename = path.basename(wanted[0]!);
    await rename(path.join(work, wanted[0]!), path.join(outDir, filename));
    mediaType = format.media_type ?? 'application/octet-stream';
  } else {
    filename = `${stem ?? path.parse(mainName).name}.zip`;
    // A shapefile's parts sit in a folder named after the dataset; the ZIP keeps them at its root.
    const prefix = format.id === 'ESRI Shapefile' && stem ? `${stem}/` : '';
    await writeZip(
      path.join(outDir, filename),
      wanted.map((f) => ({ path: path.join(work, f), name: prefix && f.startsWith(prefix) ? f.slice(prefix.length) : f })),
    );
    mediaType = 'application/zip';
  }
  const { size } = await stat(path.join(outDir, filename));
  return { format: format.id, filename, size, layers, media_type: mediaType };
}
