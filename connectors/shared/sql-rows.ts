import { createWriteStream } from 'node:fs';
import { rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { once } from 'node:events';
import { gdal, openDataset } from '../../geo/datasets/gdal.js';
import type { ConnectorContext } from '../types.js';
import { ConnectorError } from './errors.js';
import { runOgr2ogr, transferFailure } from './ogr2ogr.js';
import { columnGeometryType, nltOf, type VectorInput } from './vector-input.js';

/*
 * Rows between a database driver and a GeoPackage, for the SQL types whose data GDAL cannot reach
 * itself (SQL Server through tedious, Oracle through node-oracledb in thin mode). A Source's rows
 * are written as CSV with a .csvt file that types every column (GDAL's CSV driver reads both,
 * and hex WKB as geometry), then ogr2ogr turns them into the GeoPackage the upload path opens:
 * streamed, so a table of any size passes through a bounded amount of memory. A Destination
 * reads the converted output back feature by feature, as values plus ISO WKB.
 */

/** What a column holds, in the terms both sides share (GDAL's field types). */
export type ColumnKind = 'integer' | 'real' | 'string' | 'boolean' | 'date' | 'datetime' | 'time' | 'binary';

export interface RowColumn {
  name: string;
  kind: ColumnKind;
}

/** GDAL's CSVT names of the kinds (binary values travel as hex text). */
const csvtType: Record<ColumnKind, string> = {
  integer: 'Integer64',
  real: 'Real',
  string: 'String',
  boolean: 'Integer(Boolean)',
  date: 'Date',
  datetime: 'DateTime',
  time: 'Time',
  binary: 'String',
};

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** One value as CSV text; null and undefined are an empty field (read back as null). */
export function csvValue(value: unknown, kind: ColumnKind): string {
  if (value === null || value === undefined) return '';
  let text: string;
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return '';
    text =
      kind === 'date'
        ? `${value.getUTCFullYear()}-${pad(value.getUTCMonth() + 1)}-${pad(value.getUTCDate())}`
        : kind === 'time'
          ? `${pad(value.getUTCHours())}:${pad(value.getUTCMinutes())}:${pad(value.getUTCSeconds())}.${pad(value.getUTCMilliseconds(), 3)}`
          : value.toISOString();
  } else if (Buffer.isBuffer(value)) {
    text = value.toString('hex').toUpperCase();
  } else if (typeof value === 'boolean') {
    text = value ? '1' : '0';
  } else if (typeof value === 'number' || typeof value === 'bigint') {
    if (typeof value === 'number' && !Number.isFinite(value)) return '';
    text = String(value);
  } else {
    text = String(value);
  }
  // Always quoted: separators, quotes and line breaks inside a value stay in it.
  return `"${text.replace(/"/g, '""')}"`;
}

export interface GeometrySpec {
  /** The layer's geometry column name. */
  name: string;
  /** The EPSG code of the data, when known. */
  epsg: number | null;
  /** An ogr2ogr -nlt value when the column's type is known (POINT, MULTIPOLYGON …). */
  nlt?: string;
}

export interface RowsToGeoPackage {
  file: string;
  layer: string;
  columns: RowColumn[];
  /** Null for a table without geometry. */
  geometry: GeometrySpec | null;
  /** Each row: the column values in order, then the geometry as WKB (or null) when there is a geometry. */
  rows: AsyncIterable<unknown[]>;
  /** Names the transfer in messages. */
  label: string;
}

/** Writes the rows as typed CSV beside the GeoPackage, then lets ogr2ogr build the GeoPackage; returns the rows read. */
export async function writeRowsAsGeoPackage(spec: RowsToGeoPackage, ctx: ConnectorContext): Promise<number> {
  const base = path.join(path.dirname(spec.file), `.rows-${path.basename(spec.file, path.extname(spec.file))}`);
  const csv = `${base}.csv`;
  const geometryColumn = spec.geometry ? freeName(spec.columns.map((c) => c.name), spec.geometry.name) : null;
  const header = [...spec.columns.map((c) => c.name), ...(geometryColumn ? [geometryColumn] : [])];
  await writeFile(`${base}.csvt`, `${[...spec.columns.map((c) => csvtType[c.kind]), ...(geometryColumn ? ['String'] : [])].join(',')}\n`);
  const out = createWriteStream(csv);
  let count = 0;
  let bytes = 0;
  const seen = new WkbTypes();
  try {
    out.write(`${header.map((h) => csvValue(h, 'string')).join(',')}\n`);
    for await (const row of spec.rows) {
      if (ctx.signal.aborted) throw new ConnectorError('timeout', `${spec.label}: stopped (deadline or cancellation)`);
      const fields = spec.columns.map((c, i) => csvValue(row[i], c.kind));
      if (geometryColumn) {
        const wkb = row[spec.columns.length];
        if (Buffer.isBuffer(wkb)) seen.add(wkb);
        fields.push(Buffer.isBuffer(wkb) && wkb.length ? wkb.toString('hex').toUpperCase() : '');
      }
      const line = `${fields.join(',')}\n`;
      bytes += line.length;
      // The CSV is about the size of the GeoPackage to come: hold it to the same limit.
      if (bytes > ctx.maxBytes) throw new ConnectorError('too_large', `${spec.label}: the data is larger than the limit of ${ctx.maxBytes} bytes`, { max_bytes: ctx.maxBytes }, false);
      count++;
      if (!out.write(line)) await once(out, 'drain');
      if (ctx.progress && count % 50_000 === 0) ctx.progress({ features: count });
    }
    out.end();
    await once(out, 'finish');
    await runOgr2ogr(
      {
        args: [
          '-f', 'GPKG', spec.file, csv,
          '-oo', 'AUTODETECT_TYPE=NO',
          '-oo', 'EMPTY_STRING_AS_NULL=YES',
          ...(geometryColumn ? ['-oo', `GEOM_POSSIBLE_NAMES=${geometryColumn}`, '-oo', 'KEEP_GEOM_COLUMNS=NO'] : []),
          '-nln', spec.layer,
          '-lco', `GEOMETRY_NAME=${spec.geometry?.name ?? 'geom'}`,
          '-lco', `FID=${freeName(header, 'fid')}`,
          ...(spec.geometry ? ['-a_srs', spec.geometry.epsg ? `EPSG:${spec.geometry.epsg}` : 'NONE', ...(spec.geometry.nlt ?? seen.nlt() ? ['-nlt', (spec.geometry.nlt ?? seen.nlt())!] : [])] : []),
        ],
        label: spec.label,
        limitFile: spec.file,
      },
      ctx,
      transferFailure([], spec.label, {}),
    );
    return count;
  } finally {
    out.destroy();
    await rm(csv, { force: true });
    await rm(`${base}.csvt`, { force: true });
  }
}

const wkbNames: Record<number, string> = { 1: 'POINT', 2: 'LINESTRING', 3: 'POLYGON', 4: 'MULTIPOINT', 5: 'MULTILINESTRING', 6: 'MULTIPOLYGON', 7: 'GEOMETRYCOLLECTION' };

/** The geometry type of a WKB value (ISO or EWKB flags): base code, Z, M. */
export function wkbType(wkb: Buffer): { base: number; z: boolean; m: boolean } | null {
  if (wkb.length < 5) return null;
  const raw = wkb[0] === 1 ? wkb.readUInt32LE(1) : wkb.readUInt32BE(1);
  const ewkbZ = (raw & 0x80000000) !== 0;
  const ewkbM = (raw & 0x40000000) !== 0;
  const code = raw & 0x0fffffff;
  const dims = Math.floor(code / 1000);
  return { base: code % 1000, z: ewkbZ || dims === 1 || dims === 3, m: ewkbM || dims === 2 || dims === 3 };
}

/** The geometry types seen in a column, as the one -nlt a GeoPackage layer gets (null when none was seen). */
export class WkbTypes {
  private names = new Set<string>();
  private z = false;
  private m = false;
  add(wkb: Buffer): void {
    const t = wkbType(wkb);
    if (!t) return;
    this.names.add(wkbNames[t.base] ?? 'GEOMETRY');
    this.z ||= t.z;
    this.m ||= t.m;
  }
  nlt(): string | undefined {
    if (!this.names.size) return undefined;
    return nltOf(columnGeometryType(0, [...this.names]), this.z, this.m);
  }
}

/** `preferred` unless a column already has that name (compared without case), else `preferred_1` … */
export function freeName(taken: string[], preferred: string): string {
  const lower = new Set(taken.map((t) => t.toLowerCase()));
  if (!lower.has(preferred.toLowerCase())) return preferred;
  for (let n = 1; ; n++) if (!lower.has(`${preferred}_${n}`.toLowerCase())) return `${preferred}_${n}`;
}

/** GDAL field types of a layer as kinds (lists and wide strings travel as text). */
export function kindOfField(type: string): ColumnKind {
  switch (type) {
    case gdal.OFTInteger:
    case gdal.OFTInteger64:
      return 'integer';
    case gdal.OFTReal:
      return 'real';
    case gdal.OFTDate:
      return 'date';
    case gdal.OFTDateTime:
      return 'datetime';
    case gdal.OFTTime:
      return 'time';
    case gdal.OFTBinary:
      return 'binary';
    default:
      return 'string';
  }
}

export interface LayerColumn extends RowColumn {
  /** Longest value in UTF-16 code units (strings), for a column width that fits the data … */
  maxLength: number;
  /** … and in UTF-8 bytes. */
  maxBytes: number;
}

interface GdalDateTime {
  year: number;
  month: number;
  day: number;
  hour?: number;
  minute?: number;
  second?: number;
  timezone?: number;
}

/**
 * A value read by gdal-async as what a driver binds: GDAL's date objects become Date (UTC; a
 * value with a time zone is shifted to UTC, one without is taken as UTC), the rest stays.
 */
export function driverValue(value: unknown, kind: ColumnKind): unknown {
  if (value === null || value === undefined) return null;
  if ((kind === 'date' || kind === 'datetime' || kind === 'time') && typeof value === 'object') {
    const v = value as GdalDateTime;
    const seconds = v.second ?? 0;
    const ms = Date.UTC(v.year ?? 1970, (v.month ?? 1) - 1, v.day ?? 1, v.hour ?? 0, v.minute ?? 0, Math.floor(seconds), Math.round((seconds % 1) * 1000));
    // GDAL's TZ flag: 100 is UTC, each step away is 15 minutes; 0 and 1 mean unknown / local.
    const offset = v.timezone && v.timezone > 1 ? (v.timezone - 100) * 15 : 0;
    return new Date(ms - offset * 60_000);
  }
  if (kind === 'boolean') return Boolean(value);
  return value;
}

/** The attribute columns of the delivered layer, with the longest string of each (one pass over the data). */
export async function layerColumns(input: VectorInput): Promise<LayerColumn[]> {
  const ds = await openDataset(input.ref);
  try {
    const layer = ds.layers.get(input.layer);
    const columns: LayerColumn[] = [];
    layer.fields.forEach((f) => {
      columns.push({ name: f.name, kind: kindOfField(f.type), maxLength: 0, maxBytes: 0 });
    });
    const strings = columns.filter((c) => c.kind === 'string');
    if (strings.length) {
      for await (const feature of layer.features) {
        for (const c of strings) {
          const v = feature.fields.get(c.name);
          if (typeof v === 'string' && v.length > c.maxLength) c.maxLength = v.length;
          if (typeof v === 'string' && v.length * 3 > c.maxBytes) c.maxBytes = Math.max(c.maxBytes, Buffer.byteLength(v));
        }
      }
    }
    return columns;
  } finally {
    ds.close();
  }
}

/** The delivered layer's features as [values…, ISO WKB or null], in the order of `columns`. */
export async function* layerRows(input: VectorInput, columns: RowColumn[]): AsyncGenerator<unknown[]> {
  const ds = await openDataset(input.ref);
  try {
    const layer = ds.layers.get(input.layer);
    for await (const feature of layer.features) {
      const row = columns.map((c) => driverValue(feature.fields.get(c.name), c.kind));
      const geometry = feature.getGeometry();
      row.push(geometry && !geometry.isEmpty() ? geometry.toWKB(gdal.wkbNDR, gdal.wkbVariantIso) : null);
      yield row;
    }
  } finally {
    ds.close();
  }
}

/** The delivered layer's extent (for a spatial index's bounds), or null when it has none. */
export async function layerExtent(input: VectorInput): Promise<{ minX: number; minY: number; maxX: number; maxY: number } | null> {
  const ds = await openDataset(input.ref);
  try {
    const e = ds.layers.get(input.layer).getExtent(true);
    return Number.isFinite(e.minX) ? { minX: e.minX, minY: e.minY, maxX: e.maxX, maxY: e.maxY } : null;
  } catch {
    return null;
  } finally {
    ds.close();
  }
}

/** Size of a file, 0 when absent. */
export const sizeOf = async (file: string) => (await stat(file).catch(() => null))?.size ?? 0;
