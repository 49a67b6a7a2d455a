import { DomainError } from '../../domain/errors.js';
import { crsTextProblem } from '../crs.js';
import type { DatasetRef } from '../datasets/dataset-files.js';
import { gdal, type SpatialReference } from '../datasets/gdal.js';
import { crsDefinition } from '../datasets/labels.js';
import { quoteIdent, quoteString } from './sql-guard.js';

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
  /** PROJ.4 form, used to build local azimuthal-equidistant projections on the same datum. */
  proj4: string;
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

/** What compiling one operation gives: the next relation, and whether the stage ends there (-explodecollections). */
export type Compiled = { rel: Relation; explode?: boolean };

/** Runs a probe query against the relation (ogrinfo in the sandbox); answers the value of its column t. */
export type Probe = (rel: Relation, sql: string) => Promise<string | null>;

/** What an operation may ask of the engine while it compiles. */
export interface CompileContext {
  probe: Probe;
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
  let proj4 = '';
  try {
    proj4 = srs.toProj4();
  } catch {
    proj4 = '';
  }
  return { wkt: srs.toWKT(), definition: crsDefinition(srs), proj4, geographic, metresPerUnit };
}

export function parseCrs(input: string, what: string): SpatialReference {
  const problem = crsTextProblem(input);
  if (problem) throw invalid(`${what}: the CRS ${problem}`);
  try {
    return gdal.SpatialReference.fromUserInput(input);
  } catch {
    throw invalid(`${what}: ${JSON.stringify(input.slice(0, 80))} is not a coordinate reference system GDAL knows (try EPSG:4326)`);
  }
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

export function wrap(rel: Relation, select: string[], tail = ''): string {
  return `SELECT ${select.join(', ') || 'NULL AS "_empty"'} FROM (${rel.sql})${tail}`;
}

export function selectAll(rel: Relation, replace: Map<string, string> = new Map(), geometry?: string): string[] {
  const cols = rel.fields.map((f) => (replace.has(f.name) ? `${replace.get(f.name)} AS ${quoteIdent(f.name)}` : quoteIdent(f.name)));
  if (rel.geom) cols.push(`${geometry ?? quoteIdent(rel.geomName)} AS ${quoteIdent(rel.geomName)}`);
  return cols;
}

export function requireCrs(rel: Relation, op: string): CrsSpec {
  if (!rel.crs) throw invalid(`${op}: the layer has no coordinate reference system; assign one or use units "source"`);
  return rel.crs;
}

/**
 * Wraps a distance-based SpatiaLite call so its distance is in metres, whatever the CRS:
 * geographic data goes through an azimuthal-equidistant projection centred on the layer (or on
 * each feature when the layer spans more than 10°), projected data has the distance converted to
 * its unit.
 */
export function metricCall(rel: Relation, op: string, units: string, distance: number, call: (geom: string, d: number) => string): string {
  const g = quoteIdent(rel.geomName);
  if (units === 'source') return call(g, distance);
  const metres = distance * metresPer[units]!;
  const crs = requireCrs(rel, op);
  if (!crs.geographic) {
    if (!crs.metresPerUnit) throw invalid(`${op}: the layer CRS has no linear unit; use units "source"`);
    return call(g, metres / crs.metresPerUnit);
  }
  const from = crs.proj4 || '+proj=longlat +datum=WGS84 +no_defs';
  const datum = (from.match(/\+(?:datum|ellps|a|b|rf|f|R|towgs84)=\S+/g) ?? ['+datum=WGS84']).join(' ');
  const e = rel.extentLonLat;
  let aeqd: string;
  if (e && e[2] - e[0] <= 10 && e[3] - e[1] <= 10) {
    const lon = ((e[0] + e[2]) / 2).toFixed(6);
    const lat = ((e[1] + e[3]) / 2).toFixed(6);
    aeqd = quoteString(`+proj=aeqd +lat_0=${lat} +lon_0=${lon} +x_0=0 +y_0=0 ${datum} +units=m +no_defs`);
  } else {
    // Per-feature centre, rounded so consecutive features reuse SpatiaLite's cached transformation.
    const lat = `round((MbrMinY(${g}) + MbrMaxY(${g})) / 2, 1)`;
    const lon = `round((MbrMinX(${g}) + MbrMaxX(${g})) / 2, 1)`;
    aeqd = `('+proj=aeqd +lat_0=' || ${lat} || ' +lon_0=' || ${lon} || ${quoteString(` +x_0=0 +y_0=0 ${datum} +units=m +no_defs`)})`;
  }
  const src = quoteString(from);
  const projected = `ST_Transform(${g}, ST_SRID(${g}), NULL, ${src}, ${aeqd})`;
  return `ST_Transform(${call(projected, metres)}, ST_SRID(${g}), NULL, ${aeqd}, ${src})`;
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
