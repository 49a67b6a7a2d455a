import { DomainError } from '../../domain/errors.js';

/*
 * The formats the service reads or writes through the formats engine (geo/formats/engine.ts)
 * rather than its own GDAL 3.6: GeoParquet in and out, vector tiles (PMTiles, MBTiles) out. They
 * join GDAL's drivers in GET /api/v1/formats (geo/datasets/formats.ts) with the same fields, and
 * their creation options are checked here, before any work starts.
 */

export interface CreationOption {
  name: string;
  description: string;
  /** The values allowed, when they are a list. */
  values?: string[];
  /** Inclusive range for numbers. */
  min?: number;
  max?: number;
  /** Whole numbers only. */
  integer?: boolean;
  default: string;
}

export interface EngineFormat {
  id: string;
  name: string;
  read: boolean;
  write: boolean;
  extensions: string[];
  media_type: string;
  multi_layer: boolean;
  creation_options: CreationOption[];
}

export const GEOPARQUET_OPTIONS: CreationOption[] = [
  {
    name: 'COMPRESSION',
    description: 'Parquet page compression',
    values: ['ZSTD', 'SNAPPY', 'GZIP', 'LZ4', 'BROTLI', 'NONE'],
    default: 'ZSTD',
  },
  {
    name: 'COMPRESSION_LEVEL',
    description: 'Level for ZSTD (1–22), GZIP (1–9) or BROTLI (0–11); empty for the codec default',
    min: 0,
    max: 22,
    integer: true,
    default: '',
  },
  {
    name: 'ROW_GROUP_SIZE',
    description:
      'Rows per row group: smaller groups prune finer with the bbox statistics, larger ones compress better; empty for 65,536, fewer for wide rows (about 32 MB of data a group)',
    min: 1000,
    max: 10_000_000,
    integer: true,
    default: '',
  },
  {
    name: 'SORT',
    description: 'Row order: HILBERT writes rows along a Hilbert curve of their bbox centres so each row group covers a small area; NONE keeps the input order',
    values: ['HILBERT', 'NONE'],
    default: 'HILBERT',
  },
  { name: 'GEOMETRY_NAME', description: 'Name of the geometry column', default: 'geometry' },
];

export const TILE_OPTIONS: CreationOption[] = [
  { name: 'MINZOOM', description: 'Lowest zoom level written', min: 0, max: 22, integer: true, default: '0' },
  { name: 'MAXZOOM', description: 'Highest zoom level written', min: 0, max: 22, integer: true, default: '14' },
  {
    name: 'SIMPLIFICATION',
    description:
      'Simplification tolerance in tile pixels (of a 4096-unit tile at each zoom, so the tolerance in ground units halves at each zoom in); 0 keeps every vertex',
    min: 0,
    max: 100,
    default: '1',
  },
  {
    name: 'SIMPLIFY_ONLY_LOW_ZOOMS',
    description: 'YES keeps every vertex at MAXZOOM and simplifies below it',
    values: ['YES', 'NO'],
    default: 'NO',
  },
  {
    name: 'ATTRIBUTES',
    description: 'Comma-separated attributes kept in the tiles (all when empty); fewer attributes make smaller tiles',
    default: '',
  },
  {
    name: 'DROP_DENSEST_AS_NEEDED',
    description: 'YES drops the points closest to others in tiles that would exceed 500 kB; NO fails such a tile instead',
    values: ['YES', 'NO'],
    default: 'YES',
  },
];

export const engineFormats: EngineFormat[] = [
  {
    id: 'GeoParquet',
    name: 'GeoParquet 1.1',
    read: true,
    write: true,
    extensions: ['parquet', 'geoparquet'],
    media_type: 'application/vnd.apache.parquet',
    multi_layer: false,
    creation_options: GEOPARQUET_OPTIONS,
  },
  {
    id: 'PMTiles',
    name: 'PMTiles vector tiles',
    read: false,
    write: true,
    extensions: ['pmtiles'],
    media_type: 'application/vnd.pmtiles',
    multi_layer: true,
    creation_options: TILE_OPTIONS,
  },
  {
    // GDAL 3.6 writes vector MBTiles too, more slowly and without dropping (docs/decisions.md): the engine's tiler replaces it.
    id: 'MBTiles',
    name: 'MBTiles',
    read: true,
    write: true,
    extensions: ['mbtiles'],
    media_type: 'application/vnd.mapbox-vector-tile',
    multi_layer: true,
    creation_options: TILE_OPTIONS,
  },
];

/** Formats whose vector output the engine writes. */
export const isEngineOutput = (id: string): boolean => id === 'GeoParquet' || id === 'PMTiles' || id === 'MBTiles';

const invalid = (message: string, details: Record<string, unknown>) =>
  new DomainError('invalid_parameter', message, { parameter: 'creation_options', ...details });

/**
 * The creation options of an engine format, checked and completed with defaults. Unknown names and
 * bad values are an invalid_parameter naming what is allowed.
 */
export function engineCreationOptions(formatId: string, given: Record<string, string> | null | undefined): Record<string, string> {
  const format = engineFormats.find((f) => f.id === formatId);
  const allowed = format?.creation_options ?? [];
  const out: Record<string, string> = Object.fromEntries(allowed.map((o) => [o.name, o.default]));
  for (const [rawName, rawValue] of Object.entries(given ?? {})) {
    const name = rawName.trim().toUpperCase();
    const value = String(rawValue).trim();
    const option = allowed.find((o) => o.name === name);
    if (!option) {
      throw invalid(`${formatId} has no creation option ${JSON.stringify(rawName)}; its options are: ${allowed.map((o) => o.name).join(', ') || 'none'}`, {
        option: rawName,
        allowed: allowed.map((o) => o.name),
      });
    }
    if (option.values && !option.values.includes(value.toUpperCase())) {
      throw invalid(`${name} must be one of ${option.values.join(', ')}`, { option: name, allowed: option.values });
    }
    if (option.min !== undefined && value !== '') {
      const n = Number(value);
      if (!Number.isFinite(n) || n < option.min || n > (option.max ?? Infinity) || (option.integer && !Number.isInteger(n))) {
        throw invalid(`${name} must be ${option.integer ? 'a whole number' : 'a number'} from ${option.min} to ${option.max}`, {
          option: name,
          min: option.min,
          max: option.max,
        });
      }
    }
    if (name === 'GEOMETRY_NAME' && !/^[\p{L}_][\p{L}\p{N}_]{0,62}$/u.test(value)) {
      throw invalid('GEOMETRY_NAME must be a letter or _ followed by letters, digits or _ (at most 63)', { option: name });
    }
    out[name] = option.values ? value.toUpperCase() : value;
  }
  if (out.MINZOOM !== undefined && Number(out.MINZOOM) > Number(out.MAXZOOM)) {
    throw invalid(`MINZOOM (${out.MINZOOM}) is above MAXZOOM (${out.MAXZOOM})`, { option: 'MINZOOM' });
  }
  if (out.COMPRESSION_LEVEL && out.COMPRESSION) {
    const level = Number(out.COMPRESSION_LEVEL);
    const range: Record<string, [number, number]> = { ZSTD: [1, 22], GZIP: [1, 9], BROTLI: [0, 11] };
    const r = range[out.COMPRESSION];
    if (!r) throw invalid(`COMPRESSION_LEVEL applies to ZSTD, GZIP and BROTLI, not ${out.COMPRESSION}`, { option: 'COMPRESSION_LEVEL' });
    if (level < r[0] || level > r[1]) throw invalid(`COMPRESSION_LEVEL for ${out.COMPRESSION} is ${r[0]}–${r[1]}`, { option: 'COMPRESSION_LEVEL' });
  }
  return out;
}
