import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { DomainError } from '../../domain/errors.js';
import type { DatasetRef, ParquetInspection, ParquetOrigin, ReadOptions } from '../gdal/dataset-ref.js';
import { EngineRefusal, runEngine, type EngineLimits } from './engine.js';

/*
 * GeoParquet in: what the file holds is read from its footers (row counts, the `geo` metadata's
 * CRS, geometry types and bbox, the covering column's statistics) without reading rows; then the
 * rows are copied once into a GeoPackage that the service's GDAL 3.6 reads, so previews, the
 * pipeline, every conversion and every Destination work on it unchanged (docs/decisions.md,
 * "GeoParquet in"). GeoParquet out: the engine reads the layer with its own GDAL and writes
 * GeoParquet 1.1.
 */

const MAGIC = 'PAR1';

/** Whether a file starts (and ends) like Parquet. */
export function isParquetFile(file: string): boolean {
  try {
    const st = statSync(file);
    if (!st.isFile() || st.size < 12) return false;
    const fd = openSync(file, 'r');
    try {
      const head = Buffer.alloc(4);
      const tail = Buffer.alloc(4);
      readSync(fd, head, 0, 4, 0);
      readSync(fd, tail, 0, 4, st.size - 4);
      return head.toString('latin1') === MAGIC && tail.toString('latin1') === MAGIC;
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}

/** A dataset path GDAL 3.6 cannot open but the engine reads: a .parquet file, or a folder of them (a partitioned dataset). */
export async function isParquetDataset(p: string): Promise<boolean> {
  const st = statSync(p, { throwIfNoEntry: false });
  if (!st) return false;
  if (st.isFile()) return /\.(geo)?parquet$/i.test(p) || isParquetFile(p);
  if (!st.isDirectory()) return false;
  // A folder of parts (a partitioned dataset), not a folder of shapefiles that happens to hold one.
  const entries = await readdir(p, { recursive: true, withFileTypes: true });
  return entries.some((e) => e.isFile() && /\.(geo)?parquet$/i.test(e.name)) && !entries.some((e) => /\.shp$/i.test(e.name));
}

/** The engine's reading options of a plain Parquet file, from the caller's reading options (geo/datasets/read-options.ts). */
function openOptionsOf(read: ReadOptions | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (read?.geometryColumn) out.GEOMETRY_COLUMN = read.geometryColumn;
  if (read?.xColumn && read.yColumn) Object.assign(out, { X_COLUMN: read.xColumn, Y_COLUMN: read.yColumn });
  if (read?.sourceCrs) out.CRS = read.sourceCrs;
  return out;
}

const unreadable = (message: string) => new DomainError('invalid_source', message, { format: 'GeoParquet' });

/** The layer name of a Parquet dataset: its file or folder name without the extension. */
export function parquetLayerName(p: string): string {
  return path.basename(p).replace(/\.(geo)?parquet$/i, '') || 'layer';
}

/**
 * A (Geo)Parquet upload made readable by the service's GDAL: inspected from its footers, then its
 * rows copied (streamed, in the sandbox) into `<workDir>/<name>.gpkg`. The answer opens that
 * GeoPackage and carries the Parquet's own inspection for inspectDataset.
 */
export async function prepareParquet(
  ref: DatasetRef,
  workDir: string,
  read?: ReadOptions,
  limits: Omit<EngineLimits, 'what'> = {},
): Promise<DatasetRef & { parquet: ParquetOrigin }> {
  const name = parquetLayerName(ref.path);
  const gpkg = path.join(workDir, `${name}.gpkg`);
  await mkdir(workDir, { recursive: true });
  let inspection: ParquetInspection;
  try {
    // One process reads the footers, then copies the rows (the interpreter starts once).
    ({ inspection } = await runEngine<{ inspection: ParquetInspection }>(
      'prepare',
      { paths: [ref.path], open_options: openOptionsOf(read), layer_name: name, output: gpkg },
      { readable: [ref.path], writable: [workDir] },
      { ...limits, what: 'Reading the GeoParquet file' },
    ));
  } catch (err) {
    if (err instanceof EngineRefusal) throw unreadable(`The Parquet file cannot be read: ${err.message}`);
    if (err instanceof DomainError) throw err;
    throw unreadable(`The Parquet file cannot be read: ${(err as Error).message}`);
  }
  return {
    path: gpkg,
    openOptions: [],
    warnings: [...ref.warnings, ...inspection.warnings],
    parquet: { paths: [ref.path], inspection },
  };
}

export interface GeoParquetWrite {
  /** A file or folder GDAL 3.12 opens, and its layer. */
  source: DatasetRef;
  layer: string;
  output: string;
  options: Record<string, string>;
}

/** Writes one layer as GeoParquet 1.1 (the options are engineCreationOptions('GeoParquet', …)). */
export async function writeGeoParquet(job: GeoParquetWrite, readable: string, limits: EngineLimits): Promise<{ features: number }> {
  const o = job.options;
  const request = {
    source: job.source.path,
    layer: job.layer,
    open_options: job.source.openOptions,
    output: job.output,
    compression: (o.COMPRESSION ?? 'ZSTD').toLowerCase() === 'none' ? 'none' : (o.COMPRESSION ?? 'ZSTD').toLowerCase(),
    compression_level: o.COMPRESSION_LEVEL ? Number(o.COMPRESSION_LEVEL) : null,
    // Empty: the engine's default, 65,536 rows or fewer for wide ones (a row group is held whole before it is written).
    row_group_size: o.ROW_GROUP_SIZE ? Number(o.ROW_GROUP_SIZE) : null,
    sort: (o.SORT ?? 'HILBERT').toLowerCase(),
    geometry_column: o.GEOMETRY_NAME || 'geometry',
  };
  try {
    return await runEngine<{ features: number }>('write-geoparquet', request, { readable: [readable], writable: [path.dirname(job.output)] }, limits);
  } catch (err) {
    if (err instanceof EngineRefusal) {
      throw new DomainError('conversion_failed', `Layer ${JSON.stringify(job.layer)} cannot be written as GeoParquet: ${err.message}`, {
        format: 'GeoParquet',
        layer: job.layer,
        reason: err.message,
      });
    }
    throw err;
  }
}
