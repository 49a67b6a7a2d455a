import { DomainError } from '../../domain/errors.js';
import { parseCrsInput } from '../crs.js';
import { checkPipeline } from '../crs-operations.js';
import { engineCreationOptions, isEngineOutput } from '../formats/catalog.js';
import type { WriteLimits } from '../gdal/translate.js';
import type { ProcessingWarning } from '../warnings.js';
import { formatCatalog, resolveOutputFormat, type FormatEntry } from './formats.js';
import { creationOptionArgs, type CreationOptions } from './output-fidelity.js';

/*
 * What a conversion is asked and answers, and the checks of a request that need no dataset
 * opened: the format, the target CRS, the layers, the creation options. The Workspace route and
 * Jobs run them before any work starts; convertDataset runs them again on the dataset itself.
 */

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

export const badParameter = (message: string, details: Record<string, unknown> = {}) => new DomainError('invalid_parameter', message, details);

export const conversionFailed = (message: string, details: Record<string, unknown>) => new DomainError('conversion_failed', message, details);

/**
 * The engine's formats (GeoParquet, PMTiles, MBTiles) have one list of options: those given as
 * dataset or layer creation options, as text.
 */
export function engineOptionsOf(options: CreationOptions | null | undefined): Record<string, string> {
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

export function checkCrs(targetCrs: string): void {
  parseCrsInput(targetCrs, 'target_crs');
}

export function checkLayers(wanted: string[], available: string[]): void {
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
