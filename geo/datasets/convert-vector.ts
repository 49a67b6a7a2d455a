import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { DomainError } from '../../domain/errors.js';
import { crsAssigned, crsTextProblem } from '../crs.js';
import { checkPipeline, coordinateOperations, withinArea } from '../crs-operations.js';
import { errorText, gdal, layerSrs, openAs, scrubPaths, type Dataset, type Layer, type SpatialReference } from '../gdal/gdal.js';
import { crsLabel, splitGeometryType } from '../gdal/labels.js';
import { GdalWriteFailed, inputArgs, readableOf, runGdalWrite } from '../gdal/translate.js';
import type { ProcessingWarning } from '../warnings.js';
import { badParameter, conversionFailed, type ConvertOptions, type ConvertRequest } from './convert-request.js';
import { datasetAt, safeFilename, type DatasetRef } from './dataset-files.js';
import type { FormatEntry } from './formats.js';
import { declaredTypeIsVague, measureGeometryTypes, nltName, outputGeometry, sameGeometryType } from './geometry-types.js';
import { splitAtAntimeridian } from './antimeridian.js';
import { holdsOnlyPoints } from './layer-sql.js';
import { countOutsideArea, layerLonLatExtent } from './lon-lat-extent.js';
import { creationOptionArgs, formatWarnings, withoutOverridden } from './output-fidelity.js';

/*
 * A vector conversion: one ogr2ogr pass whenever the format allows (what ogr2ogr costs), with the
 * options each format needs, geometry types declared as they are, the coordinate operation of a
 * reprojection reported, and GDAL's failures explained per layer.
 */

export async function convertVector(
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
  // A reprojection can fold a valid ring over itself (Russia in polar stereographic touches
  // itself along the antimeridian): -makevalid repairs what comes out invalid (issue 34). Points
  // cannot come out invalid, and GEOS would see each of them for nothing.
  const pointsOnly = layerObjects.every(holdsOnlyPoints);
  const reproject = target
    ? [
        '-t_srs',
        target,
        ...(pipeline ? ['-ct', forGdalAxisOrder(pipeline, sourceSrsOf(layerObjects, input), target)] : []),
        ...(pointsOnly ? [] : ['-makevalid']),
      ]
    : [];
  if (target) warnings.push(...(await reprojectionNotes(ds, layerObjects, input, target, pipeline)));
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
  // RFC 7946 GeoJSON cuts geometries at 180°: the file written is compared with the layer (antimeridian.ts).
  const cutsAt180 = id === 'GeoJSON' && output.some((a) => /^RFC7946=(YES|TRUE|ON|1)$/i.test(a));
  const reportSplit = async (layer: Layer, written: string) => {
    if (!cutsAt180) return;
    const srs =
      crsAssigned(layer, input) || !layerSrs(layer) ? (input.assumedCrs ? gdal.SpatialReference.fromUserInput(input.assumedCrs) : null) : layerSrs(layer);
    const split = await splitAtAntimeridian(ds, layer, srs, written);
    if (split) warnings.push(split);
  };

  const extra: string[][] = [];
  for (const layer of layerObjects) extra.push(await geometryArgs(ds, layer, format, target !== null));

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
      if (layers.length === 1) await reportSplit(layerObjects[0]!, dest);
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
    await reportSplit(layerObjects[i]!, dest);
  }
  return warnings;
}

/**
 * The -nlt a layer needs so that the output declares what it really holds (see
 * geometry-types.ts): nothing when the declared type can be trusted, else the measured type,
 * with single and multi parts of one kind promoted to multi. Mixed kinds stay a GEOMETRY layer,
 * which single-type formats cannot hold: a conversion_failed naming the layer and its kinds.
 */
async function geometryArgs(ds: Dataset, layer: Layer, format: FormatEntry, madeValid: boolean): Promise<string[]> {
  if (!declaredTypeIsVague(layer, ds.driver.description)) {
    // -makevalid can turn a multipolygon into one polygon: kept to the multi type the layer declares.
    return madeValid && isMulti(layer.geomType) ? ['-nlt', nltName(layer.geomType)] : [];
  }
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

/** Formats whose layers hold one geometry type: mixed kinds cannot be written to them. */
const singleTypeFormats = new Set(['ESRI Shapefile', 'OpenFileGDB']);

/** `geom` (GDAL's and QGIS's default), unless a layer has an attribute of that name. */
function geometryColumnName(layers: Layer[]): string {
  const taken = new Set<string>();
  for (const layer of layers) layer.fields.forEach((f) => void taken.add(f.name.toLowerCase()));
  return ['geom', 'geometry', 'geom_'].find((n) => !taken.has(n)) ?? 'geom_0';
}

/** The CRS a layer's coordinates are in as the conversion reads them: the one set on upload, else its own. */
function sourceSrsOf(layers: Layer[], input: DatasetRef): SpatialReference | null {
  const layer = layers.find((l) => l.geomType !== gdal.wkbNone);
  if (!layer) return null;
  if (crsAssigned(layer, input) || !layerSrs(layer)) return input.assumedCrs ? gdal.SpatialReference.fromUserInput(input.assumedCrs) : null;
  return layerSrs(layer);
}

/**
 * A transformation as ogr2ogr -ct needs it. The pipelines reported (crs_operation) and taken
 * here are in longitude/easting-first order, as the reproject operation runs them; GDAL hands
 * -ct the coordinates in each CRS's own axis order (latitude first for EPSG:4326, northing first
 * for EPSG:2193), so an axis swap goes before and after where the CRSs want it. Without it a
 * pipeline from EPSG:4326 reads latitudes as longitudes and writes wrong places without a word.
 */
export function forGdalAxisOrder(pipeline: string, source: SpatialReference | null, target: string): string {
  const swapped = (srs: SpatialReference | null) => !!srs && (srs.EPSGTreatsAsLatLong() || srs.EPSGTreatsAsNorthingEasting());
  const swap = '+step +proj=axisswap +order=2,1';
  let text = pipeline;
  // Before the first step: the pipeline's global options (+ellps …) stay where they are.
  if (swapped(source)) text = text.replace(/(^|\s)\+step(?=\s|$)/, `$1${swap} +step`);
  let targetSrs: SpatialReference | null = null;
  try {
    targetSrs = gdal.SpatialReference.fromUserInput(target);
  } catch {
    targetSrs = null;
  }
  if (swapped(targetSrs)) text = `${text} ${swap}`;
  return text;
}

function isWgs84(crs: string): boolean {
  if (crsTextProblem(crs)) return false;
  try {
    return gdal.SpatialReference.fromUserInput(crs).isSame(gdal.SpatialReference.fromEPSG(4326));
  } catch {
    return false;
  }
}

/**
 * The coordinate operation each reprojected layer goes through (the one given, or PROJ's choice
 * for the layer's CRS pair over its extent), and how many of its features lie outside the target
 * CRS's area of use: what the reproject operation reports too.
 */
async function reprojectionNotes(ds: Dataset, layers: Layer[], input: DatasetRef, target: string, pipeline: string | null): Promise<ProcessingWarning[]> {
  const out: ProcessingWarning[] = [];
  for (const layer of layers) {
    if (layer.geomType === gdal.wkbNone) continue;
    const srs = crsAssigned(layer, input) ? gdal.SpatialReference.fromUserInput(input.assumedCrs!) : layerSrs(layer);
    if (!srs) continue;
    const from = crsLabel(srs) ?? srs.toWKT();
    const extent = layerLonLatExtent(layer, srs);
    const answer = await coordinateOperations(from, target, extent).catch(() => null);
    const used = pipeline ? { name: 'the transformation given', accuracy_m: null, pipeline } : answer?.operations[0];
    if (used) {
      out.push({
        code: 'crs_operation',
        message: `${layer.name} to ${target}: ${pipeline ? 'with the transformation given' : `PROJ uses "${used.name}" (${used.accuracy_m === null ? 'accuracy unknown' : `accuracy ${used.accuracy_m} m`})`}`,
        layer: layer.name,
        details: {
          chosen_by: pipeline ? 'request' : 'proj',
          name: used.name,
          accuracy_m: used.accuracy_m,
          pipeline: used.pipeline,
          alternatives: (pipeline ? answer?.operations : answer?.operations.slice(1)) ?? [],
          unavailable: answer?.unavailable ?? [],
        },
      });
    }
    const area = answer?.target_area;
    // The extent inside the area settles it without reading a feature.
    if (!area || (extent && withinArea(extent, area))) continue;
    const count = await countOutsideArea(ds, layer, srs, area);
    if (count === 0) continue;
    const what =
      count === null
        ? `its extent reaches outside the area of use (${area.name.replace(/\.$/, '')}; features not counted in a layer this large)`
        : `${count} feature${count === 1 ? ' lies' : 's lie'} partly or wholly outside its area of use (${area.name.replace(/\.$/, '')})`;
    out.push({
      code: 'crs_outside_area',
      message: `${layer.name} to ${target}: ${what}, where its coordinates are not reliable`,
      layer: layer.name,
      details: { features: count, target_crs: target, area_of_use: area },
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

/** Whether a declared type is a multi-part one (MultiPoint, MultiLineString, MultiPolygon, with Z or M too). */
function isMulti(code: number): boolean {
  return [4, 5, 6].includes(splitGeometryType(code).base);
}
