import { DomainError } from '../../domain/errors.js';
import type { DatasetRef } from '../datasets/dataset-files.js';
import type { SpatialReference } from '../gdal/gdal.js';
import { crsDefinition } from '../gdal/labels.js';
import type { ProcessingWarning } from '../warnings.js';
import { parseCrsInput } from '../crs.js';
import { quoteIdent } from './sql-guard.js';

/*
 * What an operation compiles against: a relation (a SELECT in GDAL's SQLite dialect, with the
 * columns, geometry and CRS it yields) and the SQL pieces the catalogue's operations build their
 * SELECT from. Pure text building, apart from reading CRS definitions.
 */

export interface FieldSpec {
  name: string;
  /** OGR type label: Integer, Integer64, Real, String, Date, DateTime, … */
  type: string;
  width: number;
  precision: number;
}

export type Family = 'point' | 'line' | 'polygon' | 'collection';

/**
 * What the SQL of a chain needs to know of its geometries: their kind (clipping and repairs keep
 * it) and dimensions. The type the output declares is measured once it is written.
 */
export interface GeometrySpec {
  /** null when mixed or unknown. */
  family: Family | null;
  z: boolean;
  m: boolean;
}

export interface CrsSpec {
  wkt: string;
  /** AUTHORITY:CODE or WKT, as PROJ (and SpatiaLite's ST_Transform) read it. */
  definition: string;
  geographic: boolean;
  /** Metres per unit of a projected CRS. */
  metresPerUnit: number | null;
}

/** A layer as the SQL of a stage reads it. */
export interface Source {
  ref: DatasetRef;
  table: string;
  geomColumn: string | null;
}

export interface Relation {
  source: Source;
  /** A SELECT producing exactly `fields` and, when geom is set, the geometry column `geomName`. */
  sql: string;
  fields: FieldSpec[];
  geomName: string;
  geom: GeometrySpec | null;
  crs: CrsSpec | null;
  /** Layer extent in degrees (longitude/latitude), for centring metric projections. */
  extentLonLat: [number, number, number, number] | null;
}

/**
 * Metric work on longitude/latitude that SQL cannot do right across the antimeridian and the
 * poles: run by geo/operations/geo_step.py on the stage written so far (distances in metres).
 */
export type GeoStep =
  | { kind: 'buffer'; distance: number; segments: number }
  | { kind: 'simplify'; tolerance: number; preserve_topology: boolean }
  | { kind: 'densify'; max_segment: number }
  | { kind: 'measure'; column: string; measure: 'area' | 'length' | 'perimeter'; factor: number };

/**
 * What compiling one operation gives: the next relation, whether the stage ends there
 * (-explodecollections, or a geo step that works on the stage's output), and whether its output
 * may hold geometries it could not repair (checked on the written output, reported as
 * geometry_invalid).
 */
export type Compiled = { rel: Relation; explode?: boolean; geoStep?: GeoStep; checkValidity?: boolean };

/** Runs a probe query against the relation (ogrinfo in the sandbox); answers the value of its column t. */
export type Probe = (rel: Relation, sql: string) => Promise<string | null>;

/** Another layer an operation reads (a clip layer, a join table), copied for the stage in the relation's CRS. */
export interface AttachedLayer {
  /** The table as the SQL over the relation answered with it names it (quoted). */
  table: string;
  name: string;
  fields: FieldSpec[];
  /** Its geometry column (null for a table). */
  geomName: string | null;
  geom: GeometrySpec | null;
}

/** What an operation may ask of the engine while it compiles. */
export interface CompileContext {
  /** The layer the pipeline applies to, as its dataset names it. */
  layer: string;
  probe: Probe;
  /**
   * Other layers of the same dataset, or of another Workspace of the caller (workspaceId), ready
   * to be read by SQL over the relation answered with them (the relation so far, written out with
   * those layers beside it), reprojected to the relation's CRS when they have another.
   */
  attach: (rel: Relation, layers: string[], workspaceId: string | undefined, op: string) => Promise<{ rel: Relation; layers: AttachedLayer[] }>;
  /** Records a warning for the result (the engine adds the layer). */
  warn: (warning: Omit<ProcessingWarning, 'layer'>) => void;
}

export const invalid = (message: string, details: Record<string, unknown> = {}) => new DomainError('invalid_transformation', message, details);

const metresPer: Record<string, number> = { meters: 1, kilometers: 1000, feet: 0.3048, miles: 1609.344 };
export const familyCode: Record<Family, number> = { point: 1, line: 2, polygon: 3, collection: 7 };

export function crsSpecOf(srs: SpatialReference): CrsSpec {
  let metresPerUnit: number | null = null;
  const geographic = srs.isGeographic();
  if (!geographic) {
    try {
      const u = srs.getLinearUnits();
      metresPerUnit = typeof u.value === 'number' && u.value > 0 ? u.value : null;
    } catch {
      metresPerUnit = null;
    }
  }
  return { wkt: srs.toWKT(), definition: crsDefinition(srs), geographic, metresPerUnit };
}

export function parseCrs(input: string, what: string): SpatialReference {
  return parseCrsInput(input, what, 'invalid_transformation');
}

export function pickName(candidates: string[], fields: FieldSpec[]): string {
  const taken = new Set(fields.map((f) => f.name.toLowerCase()));
  return candidates.find((c) => !taken.has(c.toLowerCase())) ?? `geom_${fields.length}`;
}

export function findColumn(rel: Relation, name: string, op: string): FieldSpec {
  const exact = rel.fields.find((f) => f.name === name);
  if (exact) return exact;
  const loose = rel.fields.filter((f) => f.name.toLowerCase() === name.toLowerCase());
  if (loose.length === 1) return loose[0]!;
  throw invalid(`${op}: no column named ${JSON.stringify(name)}; the columns are: ${rel.fields.map((f) => f.name).join(', ') || '(none)'}`, {
    column: name,
    columns: rel.fields.map((f) => f.name),
  });
}

/**
 * A SELECT of `select` over the relation. `once`: the relation's columns are computed once per
 * row, where SQLite would otherwise fold the inner SELECT into this one and compute an
 * expression as often as `select` names its column (a reprojection three times for a validity
 * test, its repair and the geometry kept); a window function keeps it from folding.
 */
export function wrap(rel: Relation, select: string[], tail = '', once = false): string {
  const from = once ? `SELECT *, ROW_NUMBER() OVER () AS "_once" FROM (${rel.sql})` : rel.sql;
  return `SELECT ${select.join(', ') || 'NULL AS "_empty"'} FROM (${from})${tail}`;
}

export function selectAll(rel: Relation, replace: Map<string, string> = new Map(), geometry?: string): string[] {
  const cols = rel.fields.map((f) => (replace.has(f.name) ? `${replace.get(f.name)} AS ${quoteIdent(f.name)}` : quoteIdent(f.name)));
  if (rel.geom) cols.push(`${geometry ?? quoteIdent(rel.geomName)} AS ${quoteIdent(rel.geomName)}`);
  return cols;
}

export function requireCrs(rel: Relation, op: string): CrsSpec {
  if (!rel.crs) {
    throw invalid(`${op}: the layer has no coordinate reference system: set one first ({"type": "assign_crs", "crs": "EPSG:…"}), or use units "source"`);
  }
  return rel.crs;
}

/** A distance as an operation applies it: in the layer's own unit, or metres on longitude/latitude (a geo step). */
export type Distance = { on: 'layer'; value: number } | { on: 'lonlat'; metres: number };

/** Degrees from which a `source` distance on longitude/latitude is doubted (about 55 km), and refused. */
export const DEGREES_WARN = 0.5;
export const DEGREES_MAX = 20;

/**
 * The distance an operation works with. Metric units (the default) are honoured on any CRS:
 * converted to a projected CRS's unit, or kept in metres for longitude/latitude, which the geo
 * step handles per feature. `source` takes the layer's unit as it is; on longitude/latitude that
 * is degrees, so a large one warns, and one no sensible user means is refused, naming the unit.
 */
export function distanceOf(rel: Relation, op: string, what: string, units: string, value: number, ctx: Pick<CompileContext, 'warn'>): Distance {
  if (units === 'source') {
    if (rel.crs?.geographic) {
      const km = Math.round(Math.abs(value) * 111.32);
      const unit = `degrees (units "source" on ${crsName(rel.crs)}, a longitude/latitude CRS)`;
      if (Math.abs(value) > DEGREES_MAX) {
        throw invalid(`${op}: ${what} ${value} is in ${unit}, about ${km} km; give it in metres: {"units": "meters"}`, { [what]: value, unit: 'degree' });
      }
      if (Math.abs(value) >= DEGREES_WARN) {
        ctx.warn({
          code: 'units_degrees',
          message: `${op}: ${what} ${value} is in ${unit}, about ${km} km at the equator; for a distance on the ground use {"units": "meters"}`,
          details: { operation: op, [what]: value, unit: 'degree', approx_km: km },
        });
      }
    }
    return { on: 'layer', value };
  }
  const metres = value * metresPer[units]!;
  const crs = requireCrs(rel, op);
  if (crs.geographic) return { on: 'lonlat', metres };
  if (!crs.metresPerUnit) throw invalid(`${op}: the layer CRS has no linear unit; use units "source"`);
  return { on: 'layer', value: metres / crs.metresPerUnit };
}

/** A CRS as messages name it: its authority code, else "the layer CRS". */
function crsName(crs: CrsSpec): string {
  return /^[A-Z]+:\d+$/.test(crs.definition) ? crs.definition : 'the layer CRS';
}

/** SQLite text that is an integer / a decimal number (sign, digits, one dot, optional exponent). */
function numericTests(v: string): { isInt: string; isReal: string } {
  const s = `trim(${v})`;
  const u = `(CASE WHEN substr(${s}, 1, 1) IN ('+', '-') THEN substr(${s}, 2) ELSE ${s} END)`;
  const isInt = `(${u} <> '' AND ${u} NOT GLOB '*[^0-9]*')`;
  const isReal =
    `(${u} <> '' AND ${u} NOT GLOB '*[^0-9.eE+-]*' AND ${u} GLOB '*[0-9]*' AND ${u} NOT GLOB '*.*.*' ` +
    `AND ${u} NOT GLOB '*[eE]*[eE]*' AND ${u} NOT GLOB '[eE]*' AND ${u} NOT GLOB '*[eE]*.*' AND ${u} NOT GLOB '*[eE]' ` +
    `AND ${u} NOT GLOB '*[eE][+-]' AND ${u} NOT GLOB '*[+-]*[+-]*' AND (${u} NOT GLOB '*[+-]*' OR ${u} GLOB '*[eE][+-][0-9]*'))`;
  return { isInt, isReal };
}

/** A CAST that yields NULL for values that do not convert (SQLite's CAST would give 0 or a prefix). */
export function castExpression(column: string, to: string): { sql: string; type: string } {
  const c = quoteIdent(column);
  const { isInt, isReal } = numericTests(c);
  const textIs = (test: string) => `typeof(${c}) = 'text' AND ${test}`;
  const toInteger =
    `(CASE WHEN typeof(${c}) = 'integer' THEN ${c} WHEN typeof(${c}) = 'real' THEN CAST(${c} AS INTEGER) ` +
    `WHEN ${textIs(isInt)} THEN CAST(trim(${c}) AS INTEGER) WHEN ${textIs(isReal)} THEN CAST(CAST(trim(${c}) AS REAL) AS INTEGER) END)`;
  switch (to) {
    case 'integer':
      return { sql: `(CASE WHEN ${toInteger} BETWEEN -2147483648 AND 2147483647 THEN ${toInteger} END)`, type: 'Integer' };
    case 'integer64':
      return { sql: toInteger, type: 'Integer64' };
    case 'real':
      return {
        sql: `(CASE WHEN typeof(${c}) IN ('integer', 'real') THEN CAST(${c} AS REAL) WHEN ${textIs(`(${isInt} OR ${isReal})`)} THEN CAST(trim(${c}) AS REAL) END)`,
        type: 'Real',
      };
    case 'string':
      return { sql: `(CASE WHEN typeof(${c}) IN ('null', 'blob') THEN NULL ELSE CAST(${c} AS TEXT) END)`, type: 'String' };
    case 'date':
      return { sql: `(CASE WHEN typeof(${c}) = 'text' THEN date(replace(trim(${c}), '/', '-')) END)`, type: 'Date' };
    case 'datetime': {
      const t = `replace(trim(${c}), '/', '-')`;
      const formatted = `strftime('%Y-%m-%dT%H:%M:%f', ${t})`;
      // strftime turns an offset into UTC; keep saying so with Z.
      const hasZone = `(${t} GLOB '*[Zz]' OR ${t} GLOB '*[+-][0-9][0-9]:[0-9][0-9]' OR ${t} GLOB '*[+-][0-9][0-9][0-9][0-9]')`;
      return {
        sql: `(CASE WHEN typeof(${c}) = 'text' AND ${formatted} IS NOT NULL THEN ${formatted} || (CASE WHEN ${hasZone} AND length(${t}) > 10 THEN 'Z' ELSE '' END) END)`,
        type: 'DateTime',
      };
    }
    default:
      throw invalid(`cast_column: unknown type ${to}`);
  }
}

export function densifiedBox([x0, y0, x1, y1]: number[]): string {
  const n = 32;
  const pts: string[] = [];
  const edge = (ax: number, ay: number, bx: number, by: number) => {
    for (let i = 0; i < n; i++) pts.push(`${ax + ((bx - ax) * i) / n} ${ay + ((by - ay) * i) / n}`);
  };
  edge(x0!, y0!, x1!, y0!);
  edge(x1!, y0!, x1!, y1!);
  edge(x1!, y1!, x0!, y1!);
  edge(x0!, y1!, x0!, y0!);
  pts.push(`${x0} ${y0}`);
  return `POLYGON ((${pts.join(',')}))`;
}
