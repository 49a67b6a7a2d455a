import { randomUUID } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { DomainError } from '../../domain/errors.js';
import { crsTextProblem } from '../crs.js';
import { datasetAt, safeFilename, stemOf, type DatasetRef } from './dataset-files.js';
import { formatCatalog, resolveOutputFormat, type FormatEntry } from './formats.js';
import { errorText, gdal, layerSrs, openAs, openDataset, scrubPaths, type Dataset, type Layer } from '../gdal/gdal.js';
import { crsLabel } from '../gdal/labels.js';
import { crsAssigned, parseCrsInput } from '../crs.js';
import { checkPipeline, coordinateOperations } from '../crs-operations.js';
import { ensureFreeSpace } from './disk.js';
import { GdalWriteFailed, inputArgs, readableOf, runGdalWrite, type WriteLimits } from '../gdal/translate.js';
import { declaredTypeIsVague, measureGeometryTypes, nltName, outputGeometry, sameGeometryType } from './geometry-types.js';
import { writeZip } from './zip.js';
import { creationOptionArgs, formatWarnings, outputStem, withoutOverridden, type CreationOptions } from './output-fidelity.js';
import { distinctWarnings, type ProcessingWarning } from '../warnings.js';
import { engineCreationOptions, isEngineOutput } from '../formats/catalog.js';
import { convertWithEngine } from './convert-engine.js';

export interface ConvertRequest {
  /** A driver id from GET /api/v1/formats (case-insensitive) or one of its extensions. */
  outputFormat: string;
  targetCrs?: string | null;
  /** Layers to convert (all when absent). */
  layers?: string[] | null;
  /** File name stem of the result (default: the input's name). */
  baseName?: string;
  /** Creation options, checked against the driver's lists (geo/datasets/output-fidelity.ts) or the engine's (geo/formats/catalog.ts). */
  creationOptions?: CreationOptions | null;
  /** A file name the download must not carry: the upload's own. */
  avoidFilename?: string | null;
  /** A PROJ pipeline to reproject with (target_crs), instead of the one PROJ chooses. */
  transformation?: string | null;
}

/** How a conversion reports its progress and how long and large its GDAL process may grow. */
export type ConvertOptions = WriteLimits;

export interface ConvertResult {
  /** Driver id of the output format. */
  format: string;
  /** File name in outDir: the download. */
  filename: string;
  size: number;
  layers: string[];
  media_type: string;
  /** What the format changed (field names, types, values, the CRS), with the mapping. */
  warnings: ProcessingWarning[];
}

const badParameter = (message: string, details: Record<string, unknown> = {}) => new DomainError('invalid_parameter', message, details);

/**
 * The engine's formats (GeoParquet, PMTiles, MBTiles) have one list of options: those given as
 * dataset or layer creation options, as text.
 */
function engineOptionsOf(options: CreationOptions | null | undefined): Record<string, string> {
  const all = { ...options?.dataset, ...options?.layer };
  return Object.fromEntries(Object.entries(all).map(([k, v]) => [k, String(v)]));
}

/** Finds the writable format, or explains precisely why the name does not fit. */
export function chooseOutputFormat(name: string, kind: 'vector' | 'raster'): FormatEntry {
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
    throw badParameter(
      `${name} is a ${kind === 'vector' ? 'raster' : 'vector'} format and this dataset is ${kind}; GET /api/v1/formats lists the ${kind} formats`,
      details,
    );
  }
  if (matches.length > 0) throw badParameter(`${matches[0]!.name} can be read but not written; GET /api/v1/formats lists the writable formats`, details);
  throw badParameter(`Unknown output_format ${JSON.stringify(name)}; GET /api/v1/formats lists the formats`, details);
}

/** Where GDAL's first extension is not the one people expect on a download. */
const preferredExtension: Record<string, string> = { GeoJSON: 'geojson', GeoJSONSeq: 'geojsonl' };

function primaryExtension(format: FormatEntry): string {
  if (preferredExtension[format.id]) return preferredExtension[format.id]!;
  if (format.kind === 'vector' && isEngineOutput(format.id)) return format.extensions[0]!;
  const md = gdal.drivers.get(format.id).getMetadata() as Record<string, string>;
  return md.DMD_EXTENSION || format.extensions[0] || format.id.toLowerCase().replace(/[^a-z0-9]/g, '');
}

function checkCrs(targetCrs: string): void {
  parseCrsInput(targetCrs, 'target_crs');
}

function checkLayers(wanted: string[], available: string[]): void {
  const unknown = wanted.filter((l) => !available.includes(l));
  if (unknown.length) {
    throw badParameter(`No layer named ${unknown.map((u) => JSON.stringify(u)).join(', ')}; the layers are: ${available.join(', ')}`, {
      parameter: 'layers',
      layers: available,
    });
  }
}

/**
 * Checks a convert request against what is known of the dataset before any work starts (the
 * Workspace route calls it with the inspection, so a bad target_crs or layer never starts a
 * conversion): the format, the target CRS, the layers. Answers the output format.
 */
export function checkConvertRequest(request: ConvertRequest, dataset: { kind: 'vector' | 'raster'; layers: string[] }): FormatEntry {
  const format = chooseOutputFormat(request.outputFormat, dataset.kind);
  if (request.targetCrs) checkCrs(request.targetCrs);
  if (request.transformation) {
    if (!request.targetCrs) throw badParameter('transformation applies to a reprojection: give target_crs too', { parameter: 'transformation' });
    checkPipeline(request.transformation, 'transformation', 'invalid_parameter');
  }
  if (request.layers?.length) checkLayers(request.layers, dataset.layers);
  checkCreationOptions(format, request.creationOptions);
  return format;
}

/** Creation options checked against the format's own list: the one check Workspace converts and Jobs share. */
export function checkCreationOptions(format: FormatEntry, options: CreationOptions | null | undefined): void {
  if (format.kind === 'vector' && isEngineOutput(format.id)) engineCreationOptions(format.id, engineOptionsOf(options));
  else creationOptionArgs(format, options);
}

function isWgs84(crs: string): boolean {
  if (crsTextProblem(crs)) return false;
  try {
    return gdal.SpatialReference.fromUserInput(crs).isSame(gdal.SpatialReference.fromEPSG(4326));
  } catch {
    return false;
  }
}

async function filesIn(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(path.relative(dir, path.join(e.parentPath ?? e.path, e.name)));
  }
  return out.sort();
}

/** `geom` (GDAL's and QGIS's default), unless a layer has an attribute of that name. */
function geometryColumnName(layers: Layer[]): string {
  const taken = new Set<string>();
  for (const layer of layers) layer.fields.forEach((f) => void taken.add(f.name.toLowerCase()));
  return ['geom', 'geometry', 'geom_'].find((n) => !taken.has(n)) ?? 'geom_0';
}

/** Formats whose layers hold one geometry type: mixed kinds cannot be written to them. */
const singleTypeFormats = new Set(['ESRI Shapefile', 'OpenFileGDB']);

const conversionFailed = (message: string, details: Record<string, unknown>) => new DomainError('conversion_failed', message, details);

/**
 * Converts a dataset to another format, writing the download into outDir. Vector data goes
 * through one ogr2ogr-equivalent pass (gdal.vectorTranslateAsync) whenever the format allows, so
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

/**
 * The -nlt a layer needs so that the output declares what it really holds (see
 * geometry-types.ts): nothing when the declared type can be trusted, else the measured type,
 * with single and multi parts of one kind promoted to multi. Mixed kinds stay a GEOMETRY layer,
 * which single-type formats cannot hold: a conversion_failed naming the layer and its kinds.
 */
async function geometryArgs(ds: Dataset, layer: Layer, format: FormatEntry): Promise<string[]> {
  if (!declaredTypeIsVague(layer, ds.driver.description)) return [];
  const output = outputGeometry(await measureGeometryTypes(ds, layer));
  if (output.kind === 'uniform') return sameGeometryType(output.code, layer.geomType) ? [] : ['-nlt', nltName(output.code)];
  if (output.kind === 'mixed' && singleTypeFormats.has(format.id)) {
    throw conversionFailed(
      `Layer ${JSON.stringify(layer.name)} holds ${output.labels.join(', ')} geometries, and ${format.name} holds one geometry type per layer: ` +
        'keep one kind (a filter on GeometryType(geometry)), or choose a format that mixes them (GeoPackage, GeoJSON, FlatGeobuf)',
      { layer: layer.name, format: format.id, geometry_types: output.labels },
    );
  }
  return [];
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
  options: ConvertOptions,
): Promise<ProcessingWarning[]> {
  const id = format.id;
  const warnings: ProcessingWarning[] = [];
  const layerObjects = layers.map((n) => ds.layers.get(n));
  // Layers without a CRS, and layers whose CRS was set on upload (source_crs), get the dataset's.
  const missingCrs = layerObjects.filter((l) => l.geomType !== gdal.wkbNone && (!layerSrs(l) || crsAssigned(l, input)));
  let target = request.targetCrs ?? null;
  // GPX is WGS 84 by definition; GDAL writes coordinates as they are, so reproject for it.
  if (!target && id === 'GPX') target = 'EPSG:4326';
  if (target && missingCrs.length && !input.assumedCrs) {
    throw badParameter(`Layer ${missingCrs[0]!.name} has no coordinate reference system, so it cannot be reprojected to ${target}`, {
      parameter: 'target_crs',
    });
  }
  // Layers without a CRS get the assumed one (CSV coordinates are WGS 84 by convention).
  const assumed = missingCrs.length && input.assumedCrs ? [target ? '-s_srs' : '-a_srs', input.assumedCrs] : [];
  const pipeline = target && request.transformation ? checkPipeline(request.transformation, 'transformation', 'invalid_parameter') : null;
  const reproject = target ? ['-t_srs', target, ...(pipeline ? ['-ct', pipeline] : [])] : [];
  if (target) warnings.push(...(await reprojectionNotes(layerObjects, input, target, pipeline)));
  const output: string[] = ['-f', id];
  if (id === 'ESRI Shapefile') output.push('-lco', 'ENCODING=UTF-8');
  if (id === 'CSV') output.push('-lco', 'GEOMETRY=AS_WKT');
  // One geometry column name in every GeoPackage we write, pipeline or not (docs/decisions.md).
  if (id === 'GPKG') output.push('-lco', `GEOMETRY_NAME=${geometryColumnName(layerObjects)}`);
  if (id === 'GPX') output.push('-dsco', 'GPX_USE_EXTENSIONS=YES');
  // GeoJSON is RFC 7946 (WGS 84 longitude/latitude; GDAL reprojects) unless another CRS is
  // asked for, which gives the 2008 form with a "crs" member (docs/decisions.md).
  if (id === 'GeoJSON' && (!target || isWgs84(target))) output.push('-lco', 'RFC7946=YES');
  // The caller's creation options, checked against the driver's lists; theirs win over our defaults.
  const asked = creationOptionArgs(format, request.creationOptions);
  const chosen = withoutOverridden(withoutOverridden(output, '-lco', asked.layer), '-dsco', asked.dataset);
  output.splice(0, output.length, ...chosen, ...asked.dataset, ...asked.layer);
  if (!request.targetCrs && (target || output.includes('RFC7946=YES'))) warnings.push(...forcedWgs84(layerObjects, format, input));
  // CSV's X/Y columns hold points only: GDAL leaves other geometries out without a word.
  if (id === 'CSV' && asked.layer.some((a) => /^GEOMETRY=AS_(XY|YX|XYZ)$/i.test(a))) {
    for (const layer of layerObjects) {
      if (layer.geomType === gdal.wkbNone || /point/i.test(gdal.Geometry.getName(layer.geomType) ?? '')) continue;
      warnings.push({
        code: 'geometry_dropped',
        message: `CSV X/Y columns hold points only: the geometries of layer ${layer.name} are left out (use GEOMETRY=AS_WKT, or centroid first)`,
        layer: layer.name,
        details: { option: 'GEOMETRY' },
      });
    }
  }
  const common = [...output, ...reproject, ...assumed];

  const extra: string[][] = [];
  for (const layer of layerObjects) extra.push(await geometryArgs(ds, layer, format));

  const readable = [await readableOf(input)];
  /** One ogr2ogr process: options, then the layers to copy (geo/gdal/translate.ts says why not in-process). */
  const translate = async (dest: string, args: string[], names: string[], from: DatasetRef = input, output = dest) => {
    try {
      const written = await runGdalWrite(
        'ogr2ogr',
        [...args, dest, ...inputArgs(from), ...names],
        { readable: from === input ? readable : [await readableOf(from)], writable: [work], output },
        { ...options, what: 'The conversion' },
      );
      warnings.push(...formatWarnings(written.warnings, format, names.length === 1 ? names[0] : undefined));
    } catch (err) {
      throw explainFailure(err, { format, names });
    }
  };

  if (id === 'ESRI Shapefile') {
    // One call per layer, each with its own geometry type.
    const dir = path.join(work, stem);
    await mkdir(dir);
    for (const [i, name] of layers.entries()) {
      await translate(dir, [...common, ...extra[i]!, '-nln', safeFilename(name).replace(/\.shp$/i, '')], [name], input, dir);
    }
    return warnings;
  }
  if (format.multi_layer || layers.length === 1) {
    const dest = path.join(work, `${stem}.${ext}`);
    if (extra.every((e) => e.join('\0') === extra[0]!.join('\0'))) {
      // The usual case, and the one whose speed matters: one pass, exactly ogr2ogr's work.
      await translate(dest, [...common, ...extra[0]!, ...(format.multi_layer ? [] : ['-nln', layers[0]!])], layers);
      if (id === 'FlatGeobuf') await refuseDroppedRows(layerObjects[0]!, dest, format);
      return warnings;
    }
    if (id === 'GPKG' || id === 'SQLite') {
      for (const [i, name] of layers.entries()) await translate(dest, [...common, ...(i > 0 ? ['-update'] : []), ...extra[i]!], [name]);
      return warnings;
    }
    // Layers needing different geometry types, into a format that cannot be appended to (KML,
    // GML…): each gets its type in a GeoPackage first, which then goes over in one pass.
    const plan = layers.map((name, i) => ({ name, nlt: extra[i]!, assignCrs: missingCrs.includes(layerObjects[i]!) ? (input.assumedCrs ?? null) : null }));
    const stageDir = path.join(work, '.stage');
    await mkdir(stageDir);
    try {
      const staged = path.join(stageDir, 'staged.gpkg');
      for (const [i, layer] of plan.entries()) {
        const crs = layer.assignCrs ? ['-a_srs', layer.assignCrs] : [];
        await translate(staged, ['-f', 'GPKG', ...(i > 0 ? ['-update'] : []), ...layer.nlt, ...crs], [layer.name]);
      }
      await translate(dest, [...output, ...reproject], layers, datasetAt(staged));
    } finally {
      await rm(stageDir, { recursive: true, force: true });
    }
    return warnings;
  }
  // Several layers into a one-layer format: one file per layer, zipped together.
  for (const [i, name] of layers.entries()) {
    const dest = path.join(work, `${safeFilename(name)}.${ext}`);
    await translate(dest, [...common, ...extra[i]!, '-nln', name], [name]);
    if (id === 'FlatGeobuf') await refuseDroppedRows(layerObjects[i]!, dest, format);
  }
  return warnings;
}

/** The coordinate operation each reprojected layer goes through: the one given, or PROJ's choice for the layer's CRS pair. */
async function reprojectionNotes(layers: Layer[], input: DatasetRef, target: string, pipeline: string | null): Promise<ProcessingWarning[]> {
  const out: ProcessingWarning[] = [];
  for (const layer of layers) {
    if (layer.geomType === gdal.wkbNone) continue;
    const srs = crsAssigned(layer, input) ? gdal.SpatialReference.fromUserInput(input.assumedCrs!) : layerSrs(layer);
    if (!srs) continue;
    const from = crsLabel(srs) ?? srs.toWKT();
    const answer = pipeline ? null : await coordinateOperations(from, target, null).catch(() => null);
    const used = pipeline ? { name: 'the transformation given', accuracy_m: null, pipeline } : answer?.operations[0];
    if (!used) continue;
    out.push({
      code: 'crs_operation',
      message: `${layer.name} to ${target}: ${pipeline ? 'with the transformation given' : `PROJ uses "${used.name}" (${used.accuracy_m === null ? 'accuracy unknown' : `accuracy ${used.accuracy_m} m`})`}`,
      layer: layer.name,
      details: {
        chosen_by: pipeline ? 'request' : 'proj',
        name: used.name,
        accuracy_m: used.accuracy_m,
        pipeline: used.pipeline,
        alternatives: answer?.operations.slice(1) ?? [],
        unavailable: answer?.unavailable ?? [],
      },
    });
  }
  return out;
}

/** GeoJSON (RFC 7946) and GPX are WGS 84 by definition: layers in another CRS are reprojected, and say so. */
function forcedWgs84(layers: Layer[], format: FormatEntry, input: DatasetRef): ProcessingWarning[] {
  const out: ProcessingWarning[] = [];
  for (const layer of layers) {
    if (layer.geomType === gdal.wkbNone) continue;
    const srs = crsAssigned(layer, input) ? null : layerSrs(layer);
    const label = srs ? (crsLabel(srs) ?? 'its CRS') : (input.assumedCrs ?? null);
    if (!label || isWgs84(srs ? srs.toWKT() : label)) continue;
    out.push({
      code: 'crs_changed',
      message: `${format.name} is WGS 84 longitude/latitude by definition: layer ${layer.name} is reprojected from ${label.length > 40 ? 'its CRS' : label} to EPSG:4326`,
      layer: layer.name,
      details: { from: label.length > 200 ? null : label, to: 'EPSG:4326' },
    });
  }
  return out;
}

/**
 * GDAL 3.6's FlatGeobuf writer skips features without geometry and says nothing: a conversion
 * that loses rows is refused instead (the counts are in both files' headers, so this is cheap).
 */
async function refuseDroppedRows(source: Layer, written: string, format: FormatEntry): Promise<void> {
  const expected = await source.features.countAsync(false);
  if (expected < 0) return;
  const out = await openAs('FlatGeobuf', written);
  let count: number;
  try {
    count = await out.layers.get(0).features.countAsync(true);
  } finally {
    out.close();
  }
  if (count < expected) {
    throw conversionFailed(
      `Layer ${JSON.stringify(source.name)} has ${expected - count} rows without geometry, which ${format.name} cannot store: ` +
        'filter them out first ({"type": "filter", "where": "geometry IS NOT NULL"}) or choose another format (GeoPackage)',
      { layer: source.name, format: format.id, rows_without_geometry: expected - count },
    );
  }
}

/**
 * A failed translation as conversion_failed, naming the layer and GDAL's reasons (the ogr2ogr
 * process's own error lines, which say more than its closing "Terminating translation
 * prematurely"). Running out of time, memory or disk keeps its own code.
 */
function explainFailure(err: unknown, context: { format: FormatEntry; names: string[] }): DomainError {
  if (err instanceof DomainError) return err;
  const errors = err instanceof GdalWriteFailed ? err.errors : [scrubPaths(errorText(err))];
  const named = errors.map((e) => /translation of layer (.+?) \(use -skipfailures/.exec(e)?.[1]).find(Boolean);
  const layer = named ?? (context.names.length === 1 ? context.names[0]! : null);
  const reasons = errors.filter((r) => !/Terminating translation prematurely|^Unable to write feature/i.test(r));
  const reason = (reasons.length ? reasons : errors).slice(0, 3).join('; ') || errorText(err);
  const what = layer ? `Layer ${JSON.stringify(layer)}` : 'The dataset';
  return conversionFailed(`${what} cannot be written as ${context.format.name}: ${reason}`, {
    format: context.format.id,
    ...(layer ? { layer } : {}),
    reason,
  });
}

async function convertRaster(
  input: DatasetRef,
  ds: Dataset,
  format: FormatEntry,
  request: ConvertRequest,
  work: string,
  filename: string,
  options: ConvertOptions,
): Promise<ProcessingWarning[]> {
  const md = gdal.drivers.get(format.id).getMetadata() as Record<string, string>;
  const supported = (md.DMD_CREATIONDATATYPES ?? '').split(/\s+/).filter(Boolean);
  const args = ['-of', format.id];
  const types = new Set<string>();
  ds.bands.forEach((b) => {
    types.add(b.dataType ?? 'Unknown');
  });
  // PNG, JPEG, WEBP take bytes: stretch other types to 0–255 rather than fail.
  if (supported.length && [...types].some((t) => !supported.includes(t))) args.push('-ot', 'Byte', '-scale');
  const readable = [await readableOf(input)];
  const dest = path.join(work, filename);
  const limits = { ...options, what: 'The conversion' };
  try {
    let source = input.path;
    if (request.targetCrs) {
      // A warped VRT (a description, no pixels), then one write in the wanted format.
      source = path.join(work, 'warped.vrt');
      await runGdalWrite('gdalwarp', ['-of', 'VRT', '-t_srs', request.targetCrs, input.path, source], { readable, writable: [work], output: source }, limits);
    }
    const written = await runGdalWrite(
      'gdal_translate',
      [...args, ...creationOptionArgs(format, request.creationOptions).dataset, source, dest],
      { readable, writable: [work], output: dest },
      limits,
    );
    return formatWarnings(written.warnings, format, undefined);
  } catch (err) {
    if (err instanceof DomainError) throw err;
    const reason = err instanceof GdalWriteFailed ? err.errors.slice(0, 3).join('; ') || err.message : scrubPaths(errorText(err));
    throw conversionFailed(`The raster cannot be written as ${format.name}: ${reason}`, { format: format.id, reason });
  }
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
