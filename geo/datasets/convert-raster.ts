import path from 'node:path';
import { DomainError } from '../../domain/errors.js';
import { errorText, gdal, scrubPaths, type Dataset } from '../gdal/gdal.js';
import type { DatasetRef } from '../gdal/dataset-ref.js';
import { GdalWriteFailed, readableOf, runGdalWrite } from '../gdal/translate.js';
import type { ProcessingWarning } from '../warnings.js';
import { conversionFailed, type ConvertOptions, type ConvertRequest } from './convert-request.js';
import type { FormatEntry } from './formats.js';
import { creationOptionArgs, formatWarnings } from './output-fidelity.js';

/* A raster conversion: gdal_translate, through a warped VRT for a target CRS; bytes for formats that take only bytes. */

export async function convertRaster(
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
