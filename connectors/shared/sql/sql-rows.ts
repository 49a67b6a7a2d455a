import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { gdal, openDataset } from '../../../geo/gdal/gdal.js';
import { baseGeometryName } from '../../../geo/gdal/labels.js';
import type { ConnectorContext } from '../../types.js';
import { csvToGeoPackage, freeName, kindOfField, RowsCsv, type ColumnKind, type CsvGeometry } from './table-csv.js';
import { columnGeometryType, nltOf, type VectorInput } from '../files/vector-input.js';

/*
 * Rows between a database driver and a GeoPackage, for the SQL types whose data GDAL cannot reach
 * itself (SQL Server through tedious, Oracle through node-oracledb in thin mode). A Source's rows
 * go through the warehouses' CSV (connectors/shared/sql/table-csv.ts), with the geometry as hex WKB,
 * which GDAL's CSV driver reads as geometry: streamed, so a table of any size passes through a
 * bounded amount of memory. A Destination reads the converted output back feature by feature, as
 * values plus ISO WKB.
 */

export interface RowColumn {
  name: string;
  kind: ColumnKind;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** One driver value as CSV text for its kind; null (an empty field, read back as null) for null, NaN and invalid dates. */
export function csvText(value: unknown, kind: ColumnKind): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return null;
    if (kind === 'date') return `${value.getUTCFullYear()}-${pad(value.getUTCMonth() + 1)}-${pad(value.getUTCDate())}`;
    if (kind === 'time') return `${pad(value.getUTCHours())}:${pad(value.getUTCMinutes())}:${pad(value.getUTCSeconds())}.${pad(value.getUTCMilliseconds(), 3)}`;
    return value.toISOString();
  }
  if (Buffer.isBuffer(value)) return value.toString('hex').toUpperCase();
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  return String(value);
}

export interface RowsToGeoPackage {
  file: string;
  layer: string;
  columns: RowColumn[];
  /** Null for a table without geometry; `nlt` when the column's type is known, else the types seen decide. */
  geometry: CsvGeometry | null;
  /** Each row: the column values in order, then the geometry as WKB (or null) when there is a geometry. */
  rows: AsyncIterable<unknown[]>;
  /** Names the transfer in messages. */
  label: string;
}

/** Writes the rows as typed CSV beside the GeoPackage, then lets ogr2ogr build the GeoPackage; returns the rows read. */
export async function writeRowsAsGeoPackage(spec: RowsToGeoPackage, ctx: ConnectorContext): Promise<number> {
  const csv = path.join(path.dirname(spec.file), `.rows-${path.basename(spec.file, path.extname(spec.file))}.csv`);
  const geometryColumn = spec.geometry
    ? freeName(
        spec.columns.map((c) => c.name),
        spec.geometry.name,
      )
    : null;
  const writer = new RowsCsv(csv, [...spec.columns, ...(geometryColumn ? [{ name: geometryColumn, kind: 'wkb' as const }] : [])], ctx, spec.label);
  const seen = new WkbTypes();
  let closed = false;
  try {
    for await (const row of spec.rows) {
      const fields = spec.columns.map((c, i) => csvText(row[i], c.kind));
      if (geometryColumn) {
        const wkb = row[spec.columns.length];
        if (Buffer.isBuffer(wkb)) seen.add(wkb);
        fields.push(Buffer.isBuffer(wkb) && wkb.length ? wkb.toString('hex').toUpperCase() : null);
      }
      await writer.row(fields);
      if (ctx.progress && writer.rows % 50_000 === 0) ctx.progress({ features: writer.rows });
    }
    await writer.close();
    closed = true;
    await csvToGeoPackage(writer, spec.file, spec.layer, spec.geometry && { ...spec.geometry, nlt: spec.geometry.nlt ?? seen.nlt() }, ctx, spec.label);
    return writer.rows;
  } finally {
    if (!closed) await writer.destroy();
    await rm(csv, { force: true });
    await rm(writer.csvt, { force: true });
  }
}

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
    // The simple features' names (WKB codes 1-7); anything else loads as GEOMETRY.
    this.names.add((t.base <= 7 && baseGeometryName(t.base)) || 'GEOMETRY');
    this.z ||= t.z;
    this.m ||= t.m;
  }
  nlt(): string | undefined {
    if (!this.names.size) return undefined;
    return nltOf(columnGeometryType(0, [...this.names]), this.z, this.m);
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
