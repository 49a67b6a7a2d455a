import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { DomainError } from '../domain/errors.js';
import { safeFilename, stemOf, type DatasetRef } from './dataset-files.js';
import { formatCatalog, resolveOutputFormat, type FormatEntry } from './formats.js';
import { errorText, gdal, layerSrs, openDataset, scrubPaths, type Dataset, type Layer } from './gdal.js';
import { splitGeometryType } from './labels.js';
import { writeZip } from './zip.js';

export interface ConvertRequest {
  /** A driver id from GET /api/v1/formats (case-insensitive) or one of its extensions. */
  outputFormat: string;
  targetCrs?: string | null;
  /** Layers to convert (all when absent). */
  layers?: string[] | null;
  /** File name stem of the result (default: the input's name). */
  baseName?: string;
}

export interface ConvertResult {
  /** Driver id of the output format. */
  format: string;
  /** File name in outDir: the download. */
  filename: string;
  size: number;
  layers: string[];
  media_type: string;
}

const badParameter = (message: string, details: Record<string, unknown> = {}) => new DomainError('invalid_parameter', message, details);

/** Finds the writable format, or explains precisely why the name does not fit. */
function chooseFormat(name: string, kind: 'vector' | 'raster'): FormatEntry {
  const wanted = name.trim().toLowerCase().replace(/^\./, '');
  const details = { parameter: 'output_format', value: name };
  // resolveOutputFormat falls back to extensions: "OSM" (a read-only driver id) would otherwise
  // resolve to GPSBabel, which lists .osm. A driver named exactly wins.
  const exact = formatCatalog().find((f) => f.kind === kind && f.id.toLowerCase() === wanted);
  if (exact && !exact.write) throw badParameter(`${exact.name} can be read but not written; GET /api/v1/formats lists the writable formats`, details);
  const found = resolveOutputFormat(name, kind);
  if (found) return found;
  const matches = formatCatalog().filter((f) => f.id.toLowerCase() === wanted || f.extensions.includes(wanted));
  if (matches.some((f) => f.kind !== kind && f.write)) {
    throw badParameter(`${name} is a ${kind === 'vector' ? 'raster' : 'vector'} format and this dataset is ${kind}; GET /api/v1/formats lists the ${kind} formats`, details);
  }
  if (matches.length > 0) throw badParameter(`${matches[0]!.name} can be read but not written; GET /api/v1/formats lists the writable formats`, details);
  throw badParameter(`Unknown output_format ${JSON.stringify(name)}; GET /api/v1/formats lists the formats`, details);
}

/** Where GDAL's first extension is not the one people expect on a download. */
const preferredExtension: Record<string, string> = { GeoJSON: 'geojson', GeoJSONSeq: 'geojsonl' };

function primaryExtension(format: FormatEntry): string {
  if (preferredExtension[format.id]) return preferredExtension[format.id]!;
  const md = gdal.drivers.get(format.id).getMetadata() as Record<string, string>;
  return md.DMD_EXTENSION || format.extensions[0] || format.id.toLowerCase().replace(/[^a-z0-9]/g, '');
}

function checkCrs(targetCrs: string): void {
  try {
    gdal.SpatialReference.fromUserInput(targetCrs);
  } catch {
    throw badParameter(`target_crs ${JSON.stringify(targetCrs.slice(0, 80))} is not a coordinate reference system GDAL knows (try EPSG:4326)`, {
      parameter: 'target_crs',
    });
  }
}

async function filesIn(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(path.relative(dir, path.join(e.parentPath ?? e.path, e.name)));
  }
  return out.sort();
}

/** Polygons and lines are promoted to multi where single and multi parts cannot share a layer. */
function needsPromotion(layer: Layer, sourceDriver: string, target: string): boolean {
  const { base } = splitGeometryType(layer.geomType);
  const polyOrLine = [2, 3, 5, 6, 8, 9, 10, 11, 12].includes(base);
  if (target === 'ESRI Shapefile') return polyOrLine || base === 0 || base === 7;
  // A shapefile says "Polygon" for layers that also hold multipolygons.
  if ((target === 'FlatGeobuf' || target === 'GPKG') && sourceDriver === 'ESRI Shapefile') return polyOrLine;
  return false;
}

function conversionFailed(format: FormatEntry, err: unknown): DomainError {
  return badParameter(`The dataset cannot be written as ${format.name}: ${scrubPaths(errorText(err))}`, { parameter: 'output_format', value: format.id });
}

/**
 * Converts a dataset to another format, writing the download into outDir. Vector data goes
 * through one ogr2ogr-equivalent pass (gdal.vectorTranslateAsync) whenever the format allows, so
 * a plain conversion costs what ogr2ogr costs; raster data through gdal_translate (and gdalwarp
 * for a target CRS). Shapefiles, and several layers into a one-layer format, come back as one
 * ZIP. The input is only read.
 */
export async function convertDataset(input: DatasetRef, request: ConvertRequest, outDir: string): Promise<ConvertResult> {
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
    const format = chooseFormat(request.outputFormat, raster ? 'raster' : 'vector');
    const stem = stemOf(safeFilename(request.baseName || path.basename(input.path))) || 'output';
    const ext = primaryExtension(format);
    if (raster) {
      const produced = await convertRaster(ds, format, request, work, `${stem}.${ext}`);
      return await deliver(work, outDir, [produced], `${stem}.${ext}`, format, []);
    }
    let selected = layerNames;
    if (request.layers && request.layers.length > 0) {
      const unknown = request.layers.filter((l) => !layerNames.includes(l));
      if (unknown.length) throw badParameter(`No layer named ${unknown.map((u) => JSON.stringify(u)).join(', ')}; the layers are: ${layerNames.join(', ')}`, { parameter: 'layers', layers: layerNames });
      selected = layerNames.filter((l) => request.layers!.includes(l));
    }
    if (selected.length === 0) throw badParameter('The dataset has no layers to convert', { parameter: 'layers' });
    await convertVector(ds, input, format, request, selected, work, stem, ext);
    const files = await filesIn(work);
    return await deliver(work, outDir, files, `${stem}.${ext}`, format, selected, stem);
  } finally {
    ds.close();
    await rm(work, { recursive: true, force: true });
  }
}

async function convertVector(
  ds: Dataset,
  input: DatasetRef,
  format: FormatEntry,
  request: ConvertRequest,
  layers: string[],
  work: string,
  stem: string,
  ext: string,
): Promise<void> {
  const id = format.id;
  const sourceDriver = ds.driver.description;
  const common: string[] = ['-f', id];
  const layerObjects = layers.map((n) => ds.layers.get(n));
  const missingCrs = layerObjects.filter((l) => l.geomType !== gdal.wkbNone && !layerSrs(l));
  let target = request.targetCrs ?? null;
  // GPX is WGS 84 by definition; GDAL writes coordinates as they are, so reproject for it.
  if (!target && id === 'GPX') target = 'EPSG:4326';
  if (target) {
    if (missingCrs.length && !input.assumedCrs) {
      throw badParameter(`Layer ${missingCrs[0]!.name} has no coordinate reference system, so it cannot be reprojected to ${target}`, { parameter: 'target_crs' });
    }
    common.push('-t_srs', target);
    if (missingCrs.length && input.assumedCrs) common.push('-s_srs', input.assumedCrs);
  } else if (missingCrs.length && input.assumedCrs) {
    common.push('-a_srs', input.assumedCrs);
  }
  if (id === 'ESRI Shapefile') common.push('-lco', 'ENCODING=UTF-8');
  if (id === 'CSV') common.push('-lco', 'GEOMETRY=AS_WKT');
  if (id === 'GPX') common.push('-dsco', 'GPX_USE_EXTENSIONS=YES');

  const translate = async (dest: string, args: string[]) => {
    try {
      (await gdal.vectorTranslateAsync(dest, ds, args)).close();
    } catch (err) {
      throw conversionFailed(format, err);
    }
  };
  const promote = layerObjects.map((l) => needsPromotion(l, sourceDriver, id));

  if (id === 'ESRI Shapefile') {
    // One call per layer: whether to promote to multi is decided per layer.
    const dir = path.join(work, stem);
    await mkdir(dir);
    for (const [i, name] of layers.entries()) {
      await translate(dir, [...common, ...(promote[i] ? ['-nlt', 'PROMOTE_TO_MULTI'] : []), '-nln', safeFilename(name).replace(/\.shp$/i, ''), name]);
    }
    return;
  }
  if (format.multi_layer || layers.length === 1) {
    // The usual case, and the one whose speed matters: one pass, exactly ogr2ogr's work.
    const anyPromote = promote.some(Boolean);
    const args = [...common, ...(anyPromote && promote.every(Boolean) ? ['-nlt', 'PROMOTE_TO_MULTI'] : [])];
    if (anyPromote && !promote.every(Boolean)) {
      for (const [i, name] of layers.entries()) await translate(path.join(work, `${stem}.${ext}`), [...args, ...(i > 0 ? ['-update'] : []), ...(promote[i] ? ['-nlt', 'PROMOTE_TO_MULTI'] : []), name]);
      return;
    }
    if (!format.multi_layer) args.push('-nln', layers[0]!);
    await translate(path.join(work, `${stem}.${ext}`), [...args, ...layers]);
    return;
  }
  // Several layers into a one-layer format: one file per layer, zipped together.
  for (const [i, name] of layers.entries()) {
    await translate(path.join(work, `${safeFilename(name)}.${ext}`), [...common, ...(promote[i] ? ['-nlt', 'PROMOTE_TO_MULTI'] : []), '-nln', name, name]);
  }
}

async function convertRaster(ds: Dataset, format: FormatEntry, request: ConvertRequest, work: string, filename: string): Promise<string> {
  const md = gdal.drivers.get(format.id).getMetadata() as Record<string, string>;
  const supported = (md.DMD_CREATIONDATATYPES ?? '').split(/\s+/).filter(Boolean);
  const args = ['-of', format.id];
  const types = new Set<string>();
  ds.bands.forEach((b) => {
    types.add(b.dataType ?? 'Unknown');
  });
  // PNG, JPEG, WEBP take bytes: stretch other types to 0–255 rather than fail.
  if (supported.length && [...types].some((t) => !supported.includes(t))) args.push('-ot', 'Byte', '-scale');
  let source = ds;
  let warped: Dataset | null = null;
  try {
    if (request.targetCrs) {
      warped = await gdal.warpAsync(path.join(work, 'warped.vrt'), null, [ds], ['-of', 'VRT', '-t_srs', request.targetCrs]);
      source = warped;
    }
    const out = await gdal.translateAsync(path.join(work, filename), source, args);
    out.close();
  } catch (err) {
    throw conversionFailed(format, err);
  } finally {
    warped?.close();
  }
  return filename;
}

/** Moves the one produced file to outDir, or zips several into one download. */
async function deliver(work: string, outDir: string, files: string[], mainName: string, format: FormatEntry, layers: string[], stem?: string): Promise<ConvertResult> {
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
