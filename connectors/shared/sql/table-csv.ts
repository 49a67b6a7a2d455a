import { createWriteStream, type WriteStream } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import { gdal, layerSrs, openDataset, type CoordinateTransformation } from '../../../geo/gdal/gdal.js';
import type { ConnectorContext } from '../../types.js';
import { ConnectorError } from '../../../domain/transfers.js';
import { runOgr2ogr, transferFailure } from '../files/ogr2ogr.js';
import type { VectorInput } from '../files/vector-input.js';

/*
 * CSV as the bulk format between a database and GDAL. The cloud warehouses (BigQuery, Snowflake)
 * load CSV files (a BigQuery load job, a Snowflake PUT + COPY INTO); every database Source whose
 * rows GDAL cannot read itself (the warehouses, SQL Server through tedious, Oracle through
 * node-oracledb) hands its rows over as CSV with a .csvt of GDAL types:
 *   deliver  the output layer → one CSV whose first column is the geometry as WKT, dates and
 *            times in ISO 8601 (GDAL's CSV driver writes 2024/01/02, which neither loader takes),
 *            plus the column kinds the target's table is declared with;
 *   extract  rows of a query result → a CSV with a .csvt (`RowsCsv`) → a GeoPackage
 *            (`csvToGeoPackage`, ogr2ogr), streamed, so a table of any size passes through a
 *            bounded amount of memory and the import is prepared and inspected like an upload.
 */

/**
 * What a column holds, in the terms of GDAL's field types, which every side shares (a database's
 * DECIMAL/NUMERIC arrives as real: GDAL has no decimal field).
 */
export type ColumnKind = 'integer' | 'real' | 'string' | 'boolean' | 'date' | 'datetime' | 'time' | 'binary';

export interface TableColumn {
  name: string;
  kind: ColumnKind;
}

export interface LayerCsv {
  /** The attribute columns, in file order after the geometry column. */
  columns: TableColumn[];
  /** Whether the first column is a geometry (WKT). */
  geometry: boolean;
  /** The EPSG code of the written geometries (the target's when reprojected). */
  epsg: number | null;
  rows: number;
  bytes: number;
}

/** A CSV field: quoted when it holds a separator, a quote, a line break or leading/trailing space. */
export function csvField(value: string | null): string {
  if (value === null) return '';
  if (value === '') return '""';
  return /[",\r\n]|^\s|\s$/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** GDAL field types → column kinds (gdal-async exposes no field subtypes: booleans arrive as integers; lists travel as text). */
export function kindOfField(type: string): ColumnKind {
  switch (type) {
    case gdal.OFTInteger:
    case gdal.OFTInteger64:
      return 'integer';
    case gdal.OFTReal:
      return 'real';
    case gdal.OFTDate:
      return 'date';
    // 'dateTime' in gdal-async: compared with the constants, not with spellings of them.
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

/** A GDAL field value as the text a warehouse loader reads (null for null). */
function textOf(kind: ColumnKind, value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (kind === 'boolean') return value ? 'true' : 'false';
  if (kind === 'binary') return Buffer.isBuffer(value) ? value.toString('base64') : String(value);
  if (typeof value === 'object' && value && 'year' in value) {
    const d = value as { year: number; month: number; day: number; hour?: number; minute?: number; second?: number; timezone?: number };
    const date = `${pad(d.year, 4)}-${pad(d.month)}-${pad(d.day)}`;
    if (kind === 'date') return date;
    const seconds = d.second ?? 0;
    const time = `${pad(d.hour ?? 0)}:${pad(d.minute ?? 0)}:${seconds % 1 ? seconds.toFixed(3).padStart(6, '0') : pad(seconds)}`;
    // GDAL's tz flag: 100 is UTC, every step of 1 is 15 minutes; 0/1 unknown/local: written without an offset.
    const tz = d.timezone ?? 0;
    const offset =
      tz >= 100 ? (tz === 100 ? 'Z' : `${tz > 100 ? '+' : '-'}${pad(Math.floor(Math.abs(tz - 100) / 4))}:${pad((Math.abs(tz - 100) % 4) * 15)}`) : '';
    return `${date}T${time}${offset}`;
  }
  if (kind === 'time' && typeof value === 'object' && value) {
    const t = value as { hour: number; minute: number; second: number };
    return `${pad(t.hour)}:${pad(t.minute)}:${pad(Math.floor(t.second))}`;
  }
  return String(value);
}

/** Waits for a write stream's buffer to drain when it asks to. */
const drained = (out: WriteStream) =>
  new Promise<void>((resolve, reject) => {
    const onError = (error: Error) => {
      out.off('drain', onDrain);
      reject(error);
    };
    const onDrain = () => {
      out.off('error', onError);
      resolve();
    };
    out.once('drain', onDrain);
    out.once('error', onError);
  });

/**
 * Writes the delivery's layer as CSV (header row, geometry as WKT first when the layer has one),
 * reprojected to `targetEpsg` when given. Reads with GDAL in this process, yielding to the event
 * loop every thousand features so heartbeats go on.
 */
export async function writeLayerCsv(
  input: VectorInput,
  file: string,
  options: { targetEpsg?: number; geometryName: string },
  ctx: ConnectorContext,
): Promise<LayerCsv> {
  const columns = await layerColumns(input);
  const geometry = input.base !== 100;
  // Numbers and text only, opened without options: GDAL's CSV writer is exact for those and
  // several times faster than a loop here (1,000,000 points in seconds).
  if (columns.every((c) => ['integer', 'real', 'string'].includes(c.kind)) && input.ref.openOptions.length === 0) {
    const reproject = geometry && options.targetEpsg !== undefined && input.epsg !== options.targetEpsg;
    const label = 'Writing the load file';
    await runOgr2ogr(
      {
        args: [
          '-f',
          'CSV',
          file,
          input.ref.path,
          input.layer,
          '-lco',
          'LINEFORMAT=LF',
          ...(geometry ? ['-lco', 'GEOMETRY=AS_WKT'] : []),
          ...(reproject ? ['-t_srs', `EPSG:${options.targetEpsg}`] : []),
        ],
        label,
      },
      ctx,
      transferFailure([], label, {}),
    );
    return { columns, geometry, epsg: reproject ? options.targetEpsg! : input.epsg, rows: input.features ?? 0, bytes: (await stat(file)).size };
  }
  return writeLayerCsvByFeature(input, file, options, ctx);
}

async function layerColumns(input: VectorInput): Promise<TableColumn[]> {
  const ds = await openDataset(input.ref);
  try {
    const columns: TableColumn[] = [];
    ds.layers.get(input.layer).fields.forEach((f) => {
      columns.push({ name: f.name, kind: kindOfField(f.type) });
    });
    return columns;
  } finally {
    ds.close();
  }
}

async function writeLayerCsvByFeature(
  input: VectorInput,
  file: string,
  options: { targetEpsg?: number; geometryName: string },
  ctx: ConnectorContext,
): Promise<LayerCsv> {
  const ds = await openDataset(input.ref);
  const out = createWriteStream(file, { encoding: 'utf8' });
  const closed = new Promise<void>((resolve, reject) => {
    out.once('close', resolve);
    out.once('error', reject);
  });
  try {
    const layer = ds.layers.get(input.layer);
    const columns: TableColumn[] = [];
    layer.fields.forEach((f) => {
      columns.push({ name: f.name, kind: kindOfField(f.type) });
    });
    const geometry = input.base !== 100;
    let transform: CoordinateTransformation | null = null;
    let epsg = input.epsg;
    if (geometry && options.targetEpsg && input.epsg !== options.targetEpsg) {
      const from = layerSrs(layer);
      if (!from) throw new ConnectorError('invalid_data', `The layer has no CRS, so it cannot be reprojected to EPSG:${options.targetEpsg}`, {}, false);
      const to = gdal.SpatialReference.fromEPSG(options.targetEpsg);
      // Longitude first, as WKT and the warehouses' loaders expect (EPSG:4326 is latitude first by the book).
      (to as unknown as { setAxisMappingStrategy?: (s: number) => void }).setAxisMappingStrategy?.(0);
      transform = new gdal.CoordinateTransformation(from, to);
      epsg = options.targetEpsg;
    }
    const header = [...(geometry ? [options.geometryName] : []), ...columns.map((c) => c.name)];
    out.write(`${header.map(csvField).join(',')}\n`);
    let rows = 0;
    let bytes = 0;
    for (let f = layer.features.first(); f; f = layer.features.next()) {
      if (ctx.signal.aborted) throw new ConnectorError('timeout', 'Writing the load file: stopped (deadline or cancellation)');
      const values: (string | null)[] = [];
      if (geometry) {
        const g = f.getGeometry();
        if (g && transform) g.transform(transform);
        values.push(g && !g.isEmpty() ? g.toWKT() : null);
      }
      const fields = f.fields;
      for (let i = 0; i < columns.length; i++) values.push(textOf(columns[i]!.kind, fields.get(i)));
      const line = `${values.map(csvField).join(',')}\n`;
      bytes += Buffer.byteLength(line);
      rows++;
      if (!out.write(line)) await drained(out);
      if (rows % 1000 === 0) {
        ctx.progress?.({ features: rows });
        await new Promise((r) => setImmediate(r));
      }
    }
    out.end();
    await closed;
    return { columns, geometry, epsg, rows, bytes };
  } catch (error) {
    closed.catch(() => undefined);
    out.destroy();
    throw error;
  } finally {
    ds.close();
  }
}

/**
 * A column of an extract's CSV: an attribute of a kind, or the geometry as WKT (the warehouses'
 * text) or as hex WKB (what the SQL drivers hand over; found by name, see `csvToGeoPackage`).
 */
export type CsvColumnKind = ColumnKind | 'wkt' | 'wkb';

/** GDAL CSVT types of the column kinds (the extract direction; binary travels as text). */
const csvtOf: Record<CsvColumnKind, string> = {
  integer: 'Integer64',
  real: 'Real',
  string: 'String',
  boolean: 'Integer(Boolean)',
  date: 'Date',
  datetime: 'DateTime',
  time: 'Time',
  binary: 'String',
  wkt: 'WKT',
  wkb: 'String',
};

/** Rows of a query result written as CSV + CSVT for GDAL, held to the size limit while written. */
export class RowsCsv {
  private readonly out: WriteStream;
  private readonly closed: Promise<void>;
  bytes = 0;
  rows = 0;

  constructor(
    readonly file: string,
    readonly columns: readonly { name: string; kind: CsvColumnKind }[],
    private readonly ctx: ConnectorContext,
    /** Names the transfer in messages. */
    private readonly label = 'Reading the data',
  ) {
    this.out = createWriteStream(file, { encoding: 'utf8' });
    this.closed = new Promise((resolve, reject) => {
      this.out.once('close', resolve);
      this.out.once('error', reject);
    });
    this.write(`${columns.map((c) => csvField(c.name)).join(',')}\n`);
  }

  private write(line: string): boolean {
    this.bytes += Buffer.byteLength(line);
    if (this.bytes > this.ctx.maxBytes) {
      throw new ConnectorError(
        'too_large',
        `${this.label}: the data is larger than the limit of ${this.ctx.maxBytes} bytes`,
        { max_bytes: this.ctx.maxBytes },
        false,
      );
    }
    return this.out.write(line);
  }

  /** One row, as text per column (null for null). */
  async row(values: (string | null)[]): Promise<void> {
    if (this.ctx.signal.aborted) throw new ConnectorError('timeout', `${this.label}: stopped (deadline or cancellation)`);
    this.rows++;
    if (!this.write(`${values.map(csvField).join(',')}\n`)) await drained(this.out);
  }

  /** The .csvt beside the CSV, which GDAL reads the column types from. */
  get csvt(): string {
    return this.file.replace(/\.csv$/, '.csvt');
  }

  async close(): Promise<void> {
    this.out.end();
    await this.closed;
    await writeFile(this.csvt, `${this.columns.map((c) => csvtOf[c.kind]).join(',')}\n`);
  }

  /**
   * Stops writing and resolves once the file is closed: a stream destroyed before its file was
   * even opened still opens (creates) it afterwards, so a caller that removes the file must wait
   * for this first, or the file comes back after its removal.
   */
  async destroy(): Promise<void> {
    // Writes still queued fail once the stream is gone; nobody waits for them any more.
    this.closed.catch(() => undefined);
    const closed = new Promise<void>((resolve) => (this.out.closed ? resolve() : this.out.once('close', () => resolve())));
    this.out.destroy();
    await closed;
  }
}

export interface CsvGeometry {
  /** The layer's geometry column name in the GeoPackage. */
  name: string;
  /** The EPSG code of the data, when known. */
  epsg: number | null;
  /** An ogr2ogr -nlt value when the type is known (POINT, MULTIPOLYGON …); GEOMETRY otherwise. */
  nlt?: string | undefined;
}

/**
 * The CSV of an extract as one GeoPackage layer: types from the .csvt, the WKT column (or the hex
 * WKB column, found by its name) as the geometry named `geometry.name`, in its EPSG code. An empty
 * field is null: CSV cannot tell an empty text from a missing one, and nulls are the common case.
 * The feature ids get a name no column has.
 */
export async function csvToGeoPackage(
  rows: RowsCsv,
  gpkg: string,
  layer: string,
  geometry: CsvGeometry | null,
  ctx: ConnectorContext,
  label: string,
): Promise<void> {
  const names = rows.columns.map((c) => c.name);
  const wkb = rows.columns.find((c) => c.kind === 'wkb');
  await runOgr2ogr(
    {
      args: [
        '-f',
        'GPKG',
        gpkg,
        rows.file,
        '-nln',
        layer,
        '-oo',
        'AUTODETECT_TYPE=NO',
        '-oo',
        'KEEP_GEOM_COLUMNS=NO',
        '-oo',
        'EMPTY_STRING_AS_NULL=YES',
        ...(wkb ? ['-oo', `GEOM_POSSIBLE_NAMES=${wkb.name}`] : []),
        '-lco',
        `FID=${freeName(names, 'fid')}`,
        ...(geometry
          ? [
              '-lco',
              `GEOMETRY_NAME=${geometry.name}`,
              '-a_srs',
              geometry.epsg ? `EPSG:${geometry.epsg}` : 'NONE',
              ...(geometry.nlt ? ['-nlt', geometry.nlt] : []),
            ]
          : []),
      ],
      label,
      limitFile: gpkg,
    },
    ctx,
    transferFailure([], label, {}),
  );
}

/** `preferred` unless a column already has that name (compared without case), else `preferred_1` … */
export function freeName(taken: string[], preferred: string): string {
  const lower = new Set(taken.map((t) => t.toLowerCase()));
  if (!lower.has(preferred.toLowerCase())) return preferred;
  for (let n = 1; ; n++) if (!lower.has(`${preferred}_${n}`.toLowerCase())) return `${preferred}_${n}`;
}
