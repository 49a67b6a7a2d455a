import { mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { DomainError } from '../../domain/errors.js';
import type { DatasetRef } from '../gdal/gdal.js';
import { GdalWriteFailed, inputArgs, readableOf, runGdalWrite, type WriteLimits } from '../gdal/translate.js';
import { runEngineTool } from './engine.js';

/*
 * Vector tiles out (PMTiles, MBTiles): each layer is copied by the service's ogr2ogr into a
 * FlatGeobuf in WGS 84 longitude/latitude holding only the chosen attributes, then tippecanoe
 * (from the formats engine; docs/decisions.md, "vector tiles") cuts all layers into one tileset
 * with the zoom range and simplification asked for. Both run in the sandbox.
 */

export interface TileLayer {
  /** Layer name in the input dataset (also the tile layer's name). */
  name: string;
  /** Field names of the layer, to check ATTRIBUTES against. */
  fields: string[];
}

/** The tippecanoe arguments for the (checked) creation options; exported for the unit test. */
export function tilerArgs(options: Record<string, string>): string[] {
  // -r1: every feature at every zoom (tippecanoe otherwise thins points below the highest zoom by
  // a rate of 2.5 per level); tiles that grow too large are thinned only by DROP_DENSEST_AS_NEEDED.
  const args = ['-Z', options.MINZOOM ?? '0', '-z', options.MAXZOOM ?? '14', '-r1'];
  const s = Number(options.SIMPLIFICATION ?? '1');
  // tippecanoe's -S is a factor of its default tolerance (one tile pixel at each zoom); 0 is "none".
  if (s === 0) args.push('--no-line-simplification');
  else args.push('-S', String(s));
  if (options.SIMPLIFY_ONLY_LOW_ZOOMS === 'YES') args.push('--simplify-only-low-zooms');
  if ((options.DROP_DENSEST_AS_NEEDED ?? 'YES') === 'YES') args.push('--drop-densest-as-needed');
  return args;
}

/** The attributes asked for, checked against each layer (an attribute no layer has is a mistake). */
export function chosenAttributes(options: Record<string, string>, layers: TileLayer[]): string[] | null {
  const wanted = (options.ATTRIBUTES ?? '')
    .split(',')
    .map((a) => a.trim())
    .filter(Boolean);
  if (wanted.length === 0) return null;
  const known = new Set(layers.flatMap((l) => l.fields));
  const unknown = wanted.filter((a) => !known.has(a));
  if (unknown.length) {
    throw new DomainError('invalid_parameter', `ATTRIBUTES names ${unknown.map((u) => JSON.stringify(u)).join(', ')}, which no layer has`, {
      parameter: 'creation_options',
      option: 'ATTRIBUTES',
      fields: [...known],
    });
  }
  return wanted;
}

/**
 * Writes `output` (.pmtiles or .mbtiles) from the layers of `input`. `work` is a scratch folder
 * inside the output's folder.
 */
export async function writeVectorTiles(
  input: DatasetRef,
  layers: TileLayer[],
  output: string,
  options: Record<string, string>,
  work: string,
  limits: WriteLimits & { targetCrsNote?: string },
): Promise<void> {
  const attributes = chosenAttributes(options, layers);
  const stage = path.join(work, '.tiles');
  await mkdir(stage, { recursive: true });
  try {
    const readable = await readableOf(input);
    const files: { name: string; file: string }[] = [];
    for (const [i, layer] of layers.entries()) {
      const file = path.join(stage, `layer-${i}.fgb`);
      const keep = attributes ? layer.fields.filter((f) => attributes.includes(f)) : null;
      try {
        await runGdalWrite(
          'ogr2ogr',
          [
            '-f',
            'FlatGeobuf',
            '-lco',
            'SPATIAL_INDEX=NO',
            '-t_srs',
            'EPSG:4326',
            // Curves and 3D are not part of vector tiles: linear 2D geometries.
            '-dim',
            'XY',
            '-nlt',
            'CONVERT_TO_LINEAR',
            ...(keep ? ['-select', keep.join(',')] : []),
            '-nln',
            layer.name,
            file,
            ...inputArgs(input),
            layer.name,
          ],
          { readable: [readable], writable: [stage], output: file },
          { ...limits, what: 'The conversion' },
        );
      } catch (err) {
        if (err instanceof DomainError) throw err;
        const reason = err instanceof GdalWriteFailed ? err.errors.slice(0, 3).join('; ') || err.message : String(err);
        throw new DomainError('conversion_failed', `Layer ${JSON.stringify(layer.name)} cannot be prepared for vector tiles: ${reason}`, {
          layer: layer.name,
          reason,
        });
      }
      files.push({ name: layer.name, file });
    }
    const args = [
      '-q',
      '-f',
      '-o',
      output,
      '-t',
      stage,
      '-n',
      path.basename(output).replace(/\.[^.]+$/, ''),
      ...tilerArgs(options),
      ...files.flatMap((f) => ['-L', JSON.stringify({ file: f.file, layer: f.name })]),
    ];
    try {
      await runEngineTool('tippecanoe', args, { readable: [stage], writable: [path.dirname(output), stage] }, { ...limits, what: 'The conversion' });
    } catch (err) {
      if (err instanceof DomainError) throw err;
      throw new DomainError('conversion_failed', `The vector tiles cannot be written: ${(err as Error).message}`, { reason: (err as Error).message });
    }
  } finally {
    await rm(stage, { recursive: true, force: true });
  }
}
