import { existsSync } from 'node:fs';
import path from 'node:path';
import { DomainError } from '../../domain/errors.js';
import type { DatasetRef } from '../dataset-files.js';
import { gdal, layerSrs, withDataset, type SpatialReference } from '../gdal.js';
import { runGdalTool } from '../gdal-tool.js';
import { datasetBytes, CHEAP_SCAN_BYTES } from '../inspect.js';
import { crsDefinition, fieldTypeLabel, gdalFieldType, geometryTypeCode, splitGeometryType } from '../labels.js';
import { checkSqlExpression, quoteIdent, quoteString } from '../sql-guard.js';
import { refuseGeometryOperations } from '../pipeline-check.js';
import { type ValidatedOperation } from './catalog.js';

/*
 * Runs the catalog's operations on one layer. Each operation becomes a SELECT in GDAL's SQLite
 * dialect (SpatiaLite functions) wrapped around the previous one, so a whole chain is one query
 * and one pass over the data, executed by ogr2ogr in the sandbox. Only explode_multipart needs
 * ogr2ogr's -explodecollections, which ends a stage: the chain then continues from that stage's
 * GeoPackage. The output layer is created beforehand with the schema the chain implies, because
 * GDAL would otherwise guess a computed column's type from its first row (NULL → String).
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
interface Source {
  ref: DatasetRef;
  table: string;
  geomColumn: string | null;
}

interface Relation {
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

export interface OperationRun {
  input: DatasetRef;
  layer: string;
  /** GeoPackage receiving the result (created if missing) and the layer name to write. */
  output: { path: string; layer: string };
  /** Folder for intermediate GeoPackages; also the only folder the sandbox may write. */
  workDir: string;
  /** Read only the first n features (transform previews). */
  sampleFeatures?: number;
  timeoutMs?: number;
}

const invalid = (message: string, details: Record<string, unknown> = {}) => new DomainError('invalid_transformation', message, details);

const metresPer: Record<string, number> = { meters: 1, kilometers: 1000, feet: 0.3048, miles: 1609.344 };
const familyCode: Record<Family, number> = { point: 1, line: 2, polygon: 3, collection: 7 };

function geometryFromCode(code: number): GeometrySpec | null {
  const { base, z, m } = splitGeometryType(code);
  if (base === 100) return null;
  const families: Record<number, Family> = { 1: 'point', 2: 'line', 3: 'polygon', 4: 'point', 5: 'line', 6: 'polygon', 7: 'collection', 8: 'line', 9: 'line', 10: 'polygon', 11: 'line', 12: 'polygon', 17: 'polygon' };
  return { family: families[base] ?? null, z, m };
}

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
  try {
    return gdal.SpatialReference.fromUserInput(input);
  } catch {
    throw invalid(`${what}: ${JSON.stringify(input.slice(0, 80))} is not a coordinate reference system GDAL knows (try EPSG:4326)`);
  }
}

function openOptionArgs(ref: DatasetRef): string[] {
  return ref.openOptions.flatMap((o) => ['-oo', o]);
}

/** Reads what the SQL needs to know about the layer: columns, geometry, CRS and extent. */
async function describeSource(ref: DatasetRef, layerName: string, sample?: number): Promise<Relation> {
  const cheap = (await datasetBytes(ref.path)) <= CHEAP_SCAN_BYTES;
  return withDataset(ref, async (ds) => {
    let layer;
    try {
      layer = ds.layers.get(layerName);
    } catch {
      layer = null;
    }
    if (!layer) throw invalid(`No layer named ${JSON.stringify(layerName)}`);
    const fields: FieldSpec[] = [];
    layer.fields.forEach((f) => {
      fields.push({ name: f.name, type: fieldTypeLabel(f.type), width: f.width, precision: f.precision });
    });
    const geom = geometryFromCode(layer.geomType);
    const srs = geom ? (layerSrs(layer) ?? (ref.assumedCrs ? parseCrs(ref.assumedCrs, 'assumed CRS') : null)) : null;
    const crs = srs ? crsSpecOf(srs) : null;
    let extentLonLat: Relation['extentLonLat'] = null;
    if (geom && srs) {
      for (const force of cheap ? [false, true] : [false]) {
        try {
          const e = layer.getExtent(force);
          extentLonLat = toLonLat([e.minX, e.minY, e.maxX, e.maxY], srs);
          break;
        } catch {
          // not available cheaply, or empty
        }
      }
    }
    const source: Source = { ref, table: layer.name, geomColumn: geom ? layer.geomColumn || 'GEOMETRY' : null };
    // `geometry`, as the previews label it, so SQL and expressions use the name users see.
    const geomName = pickName(['geometry', 'geom', 'geometry_', '_geometry'], fields);
    const columns = fields.map((f) => quoteIdent(f.name));
    if (geom) columns.push(`${quoteIdent(source.geomColumn!)} AS ${quoteIdent(geomName)}`);
    const sql = `SELECT ${columns.join(', ') || 'NULL AS "_empty"'} FROM ${quoteIdent(layer.name)}${sample ? ` LIMIT ${Math.floor(sample)}` : ''}`;
    return { source, sql, fields, geomName, geom, crs, extentLonLat };
  });
}

function pickName(candidates: string[], fields: FieldSpec[]): string {
  const taken = new Set(fields.map((f) => f.name.toLowerCase()));
  return candidates.find((c) => !taken.has(c.toLowerCase())) ?? `geom_${fields.length}`;
}

function toLonLat(extent: [number, number, number, number], srs: SpatialReference): [number, number, number, number] | null {
  if (!extent.every(Number.isFinite) || extent[0] > extent[2]) return null;
  if (srs.isGeographic()) return extent;
  try {
    const ct = new gdal.CoordinateTransformation(srs, srs.cloneGeogCS());
    const xs: number[] = [];
    const ys: number[] = [];
    const [x0, y0, x1, y1] = extent;
    for (const [x, y] of [[x0, y0], [x1, y0], [x0, y1], [x1, y1], [(x0 + x1) / 2, (y0 + y1) / 2]] as const) {
      const p = ct.transformPoint(x, y);
      xs.push(p.x);
      ys.push(p.y);
    }
    return [Math.min(...xs), Math.min(...ys), Math.max(...xs), Math.max(...ys)];
  } catch {
    return null;
  }
}

/** Finds a column by exact name, else by a unique case-insensitive match (SQLite names are case-insensitive). */
function findColumn(rel: Relation, name: string, op: string): FieldSpec {
  const exact = rel.fields.find((f) => f.name === name);
  if (exact) return exact;
  const loose = rel.fields.filter((f) => f.name.toLowerCase() === name.toLowerCase());
  if (loose.length === 1) return loose[0]!;
  throw invalid(`${op}: no column named ${JSON.stringify(name)}; the columns are: ${rel.fields.map((f) => f.name).join(', ') || '(none)'}`, {
    column: name,
    columns: rel.fields.map((f) => f.name),
  });
}

function wrap(rel: Relation, select: string[], tail = ''): string {
  return `SELECT ${select.join(', ') || 'NULL AS "_empty"'} FROM (${rel.sql})${tail}`;
}

function selectAll(rel: Relation, replace: Map<string, string> = new Map(), geometry?: string): string[] {
  const cols = rel.fields.map((f) => (replace.has(f.name) ? `${replace.get(f.name)} AS ${quoteIdent(f.name)}` : quoteIdent(f.name)));
  if (rel.geom) cols.push(`${geometry ?? quoteIdent(rel.geomName)} AS ${quoteIdent(rel.geomName)}`);
  return cols;
}

function requireCrs(rel: Relation, op: string): CrsSpec {
  if (!rel.crs) throw invalid(`${op}: the layer has no coordinate reference system; assign one or use units "source"`);
  return rel.crs;
}

/**
 * Wraps a distance-based SpatiaLite call so its distance is in metres, whatever the CRS:
 * geographic data goes through an azimuthal-equidistant projection centred on the layer (or on
 * each feature when the layer spans more than 10°), projected data has the distance converted to
 * its unit.
 */
function metricCall(rel: Relation, op: string, units: string, distance: number, call: (geom: string, d: number) => string): string {
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
function castExpression(column: string, to: string): { sql: string; type: string } {
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

function densifiedBox([x0, y0, x1, y1]: number[]): string {
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

type Compiled = { rel: Relation; explode?: boolean };

interface Probe {
  (rel: Relation, sql: string): Promise<string | null>;
}

async function apply(op: ValidatedOperation, rel: Relation, probe: Probe): Promise<Compiled> {
  const g = quoteIdent(rel.geomName);
  switch (op.type) {
    case 'rename_column': {
      const from = findColumn(rel, op.from as string, op.type);
      const to = String(op.to);
      if (rel.fields.some((f) => f !== from && f.name.toLowerCase() === to.toLowerCase())) throw invalid(`rename_column: a column named ${JSON.stringify(to)} already exists`);
      if (rel.geom && to.toLowerCase() === rel.geomName.toLowerCase()) throw invalid(`rename_column: ${JSON.stringify(to)} is the name of the geometry column`);
      const select = rel.fields.map((f) => (f === from ? `${quoteIdent(f.name)} AS ${quoteIdent(to)}` : quoteIdent(f.name)));
      if (rel.geom) select.push(g);
      return { rel: { ...rel, sql: wrap(rel, select), fields: rel.fields.map((f) => (f === from ? { ...f, name: to } : f)) } };
    }
    case 'select_columns': {
      const keep = (op.columns as string[]).map((c) => findColumn(rel, c, op.type));
      const unique = [...new Set(keep)];
      const next = { ...rel, fields: unique };
      return { rel: { ...next, sql: wrap(rel, selectAll(next)) } };
    }
    case 'drop_columns': {
      const drop = new Set((op.columns as string[]).map((c) => findColumn(rel, c, op.type)));
      const next = { ...rel, fields: rel.fields.filter((f) => !drop.has(f)) };
      return { rel: { ...next, sql: wrap(rel, selectAll(next)) } };
    }
    case 'cast_column': {
      const col = findColumn(rel, op.column as string, op.type);
      const cast = castExpression(col.name, op.to as string);
      const fields = rel.fields.map((f) => (f === col ? { name: f.name, type: cast.type, width: 0, precision: 0 } : f));
      return { rel: { ...rel, fields, sql: wrap(rel, selectAll(rel, new Map([[col.name, cast.sql]]))) } };
    }
    case 'compute_column': {
      const expr = checkSqlExpression(op.expression as string, 'compute_column expression');
      const name = String(op.column);
      if (rel.geom && name.toLowerCase() === rel.geomName.toLowerCase()) throw invalid(`compute_column: ${JSON.stringify(name)} is the name of the geometry column`);
      const typeName = await probe(rel, `SELECT typeof(v) AS t FROM (SELECT ${expr} AS v FROM (${rel.sql})) WHERE v IS NOT NULL LIMIT 1`);
      const type = typeName === 'integer' ? 'Integer64' : typeName === 'real' ? 'Real' : typeName === 'blob' ? 'Binary' : 'String';
      const existing = rel.fields.find((f) => f.name.toLowerCase() === name.toLowerCase());
      const spec: FieldSpec = { name: existing?.name ?? name, type, width: 0, precision: 0 };
      const fields = existing ? rel.fields.map((f) => (f === existing ? spec : f)) : [...rel.fields, spec];
      const next = { ...rel, fields };
      const select = fields.map((f) => (f === spec ? `${expr} AS ${quoteIdent(f.name)}` : quoteIdent(f.name)));
      if (rel.geom) select.push(g);
      return { rel: { ...next, sql: wrap(rel, select) } };
    }
    case 'filter': {
      const where = checkSqlExpression(op.where as string, 'filter condition');
      // Run the condition once now, so a wrong column is reported as such rather than mid-convert.
      await probe(rel, `SELECT 1 AS t FROM (${rel.sql}) WHERE ${where} LIMIT 1`);
      return { rel: { ...rel, sql: wrap(rel, selectAll(rel), ` WHERE ${where}`) } };
    }
    case 'reproject': {
      const from = requireCrs(rel, op.type);
      const target = parseCrs(op.target_crs as string, 'reproject');
      const to = crsSpecOf(target);
      const call = `ST_Transform(${g}, ST_SRID(${g}), NULL, ${quoteString(from.definition)}, ${quoteString(to.definition)})`;
      return { rel: { ...rel, crs: to, sql: wrap(rel, selectAll(rel, new Map(), call)) } };
    }
    case 'buffer': {
      const distance = op.distance as number;
      const segments = op.segments as number;
      const call = metricCall(rel, op.type, op.units as string, distance, (geom, d) => `ST_Buffer(${geom}, ${d}, ${segments})`);
      return { rel: { ...rel, geom: { ...rel.geom!, family: 'polygon' }, sql: wrap(rel, selectAll(rel, new Map(), call)) } };
    }
    case 'simplify': {
      const fn = op.preserve_topology ? 'SimplifyPreserveTopology' : 'ST_Simplify';
      const call = metricCall(rel, op.type, op.units as string, op.tolerance as number, (geom, d) => `${fn}(${geom}, ${d})`);
      return { rel: { ...rel, sql: wrap(rel, selectAll(rel, new Map(), call)) } };
    }
    case 'make_valid': {
      const fam = rel.geom!.family;
      // Repair can turn a polygon into a polygon plus stray lines: keep the layer's own kind.
      const call = fam === 'line' || fam === 'polygon' ? `CollectionExtract(ST_MakeValid(${g}), ${familyCode[fam]})` : `ST_MakeValid(${g})`;
      return { rel: { ...rel, sql: wrap(rel, selectAll(rel, new Map(), call)) } };
    }
    case 'centroid':
    case 'point_on_surface': {
      const fn = op.type === 'centroid' ? 'ST_Centroid' : 'ST_PointOnSurface';
      return { rel: { ...rel, geom: { family: 'point', z: false, m: false }, sql: wrap(rel, selectAll(rel, new Map(), `${fn}(${g})`)) } };
    }
    case 'explode_multipart':
      return { rel: { ...rel, geom: { ...rel.geom!, family: rel.geom!.family === 'collection' ? null : rel.geom!.family } }, explode: true };
    case 'promote_to_multi':
      return { rel: { ...rel, sql: wrap(rel, selectAll(rel, new Map(), `CastToMulti(${g})`)) } };
    case 'force_2d':
      return { rel: { ...rel, geom: { ...rel.geom!, z: false, m: false }, sql: wrap(rel, selectAll(rel, new Map(), `CastToXY(${g})`)) } };
    case 'dissolve': {
      const by = [...new Set((op.by as string[]).map((c) => findColumn(rel, c, op.type)))];
      const union = `CastToMulti(ST_Union(${g}))`;
      const keys = by.map((f) => quoteIdent(f.name));
      const inner = `SELECT ${[...keys, `${union} AS ${g}`, 'COUNT(*) AS "_n"'].join(', ')} FROM (${rel.sql})${keys.length ? ` GROUP BY ${keys.join(', ')}` : ''}`;
      const next: Relation = { ...rel, fields: by };
      // Without GROUP BY an empty layer still yields one row: drop it.
      return { rel: { ...next, sql: `SELECT ${[...keys, g].join(', ')} FROM (${inner}) WHERE "_n" > 0` } };
    }
    case 'clip_bbox': {
      const bbox = op.bbox as number[];
      if (!(bbox[0]! < bbox[2]! && bbox[1]! < bbox[3]!)) throw invalid('clip_bbox: the box must be [min_x, min_y, max_x, max_y] with min < max');
      let wkt = densifiedBox(bbox);
      if (rel.crs) {
        const boxSrs = parseCrs(op.crs as string, 'clip_bbox');
        const geometry = gdal.Geometry.fromWKT(wkt, boxSrs);
        try {
          geometry.transformTo(gdal.SpatialReference.fromWKT(rel.crs.wkt));
        } catch {
          throw invalid('clip_bbox: the box cannot be transformed to the layer CRS');
        }
        wkt = geometry.toWKT();
      }
      const env = gdal.Geometry.fromWKT(wkt).getEnvelope();
      const box = `SetSRID(GeomFromText(${quoteString(wkt)}), ST_SRID(${g}))`;
      const fam = rel.geom!.family;
      const cut = fam && fam !== 'collection' ? `CollectionExtract(ST_Intersection(${g}, ${box}), ${familyCode[fam]})` : `ST_Intersection(${g}, ${box})`;
      const where = ` WHERE MbrIntersects(${g}, BuildMbr(${env.minX}, ${env.minY}, ${env.maxX}, ${env.maxY})) AND ST_Intersects(${g}, ${box}) = 1`;
      const clipped = wrap(rel, selectAll(rel, new Map(), cut), where);
      return { rel: { ...rel, sql: `SELECT * FROM (${clipped}) WHERE ${g} IS NOT NULL` } };
    }
    default:
      throw invalid(`Unknown operation ${op.type}`);
  }
}

/** Creates the output layer with the schema the chain implies (see the module comment). */
async function createOutputLayer(target: { path: string; layer: string }, rel: Relation): Promise<void> {
  // gdal-async's async create needs explicit raster sizes even for a vector dataset.
  const ds = existsSync(target.path) ? await gdal.openAsync(target.path, 'r+') : await gdal.drivers.get('GPKG').createAsync(target.path, 0, 0, 0, 'Unknown');
  try {
    const fid = pickName(['fid', 'ogc_fid', 'gpkg_fid'], rel.fields);
    const srs = rel.geom && rel.crs ? gdal.SpatialReference.fromWKT(rel.crs.wkt) : null;
    const options = [`FID=${fid}`, ...(rel.geom ? [`GEOMETRY_NAME=${rel.geomName}`] : [])];
    // GEOMETRY: geo/geometry-types declares the type the rows turn out to have once written.
    const type = rel.geom ? geometryTypeCode({ base: 0, z: rel.geom.z, m: rel.geom.m }) : gdal.wkbNone;
    const layer = await ds.layers.createAsync(target.layer, srs, type, options);
    for (const f of rel.fields) {
      const defn = new gdal.FieldDefn(f.name, gdalFieldType(f.type));
      if (f.width > 0) defn.width = f.width;
      if (f.precision > 0) defn.precision = f.precision;
      layer.fields.add(defn);
    }
  } finally {
    ds.close();
  }
}

async function runStage(rel: Relation, target: { path: string; layer: string }, run: OperationRun, explode: boolean): Promise<void> {
  await createOutputLayer(target, rel);
  await runGdalTool(
    'ogr2ogr',
    [
      '--config', 'OGR_SQLITE_SYNCHRONOUS', 'OFF',
      '-update', '-append', '-f', 'GPKG',
      target.path, rel.source.ref.path, ...openOptionArgs(rel.source.ref),
      '-dialect', 'SQLite', '-sql', rel.sql,
      '-nln', target.layer,
      ...(explode ? ['-explodecollections'] : []),
    ],
    { readable: [rel.source.ref.path], writable: [run.workDir], ...(run.timeoutMs ? { timeoutMs: run.timeoutMs } : {}) },
    `The transformation of layer ${run.layer} failed`,
  );
}

/** Starts a new relation from a stage's output layer. */
function continueFrom(rel: Relation, stagePath: string, table: string): Relation {
  const source: Source = { ref: { path: stagePath, openOptions: [], warnings: [] }, table, geomColumn: rel.geom ? rel.geomName : null };
  return { ...rel, source, sql: `SELECT ${selectAll(rel).join(', ') || 'NULL AS "_empty"'} FROM ${quoteIdent(table)}` };
}

/**
 * Applies validated operations, in order, to one layer of the input and writes the result as a
 * layer of the output GeoPackage. The input is only read.
 */
export async function runOperations(operations: ValidatedOperation[], run: OperationRun): Promise<void> {
  let rel = await describeSource(run.input, run.layer, run.sampleFeatures);
  refuseGeometryOperations(operations, { name: run.layer, has_geometry: rel.geom !== null });
  const probe: Probe = async (current, sql) => {
    const { stdout } = await runGdalTool(
      'ogrinfo',
      ['-ro', '-q', current.source.ref.path, ...openOptionArgs(current.source.ref), '-dialect', 'SQLite', '-sql', sql],
      { readable: [current.source.ref.path], writable: [], timeoutMs: run.timeoutMs ?? 5 * 60_000 },
      'The expression failed',
    );
    return /\bt \([A-Za-z0-9]+\) = (\w+)/.exec(stdout)?.[1] ?? null;
  };
  let stage = 0;
  for (const op of operations) {
    const compiled = await apply(op, rel, probe);
    if (compiled.explode) {
      stage++;
      const stagePath = path.join(run.workDir, `stage-${stage}-${Date.now().toString(36)}.gpkg`);
      await runStage(rel, { path: stagePath, layer: 'stage' }, run, true);
      rel = continueFrom(compiled.rel, stagePath, 'stage');
    } else {
      rel = compiled.rel;
    }
  }
  await runStage(rel, run.output, run, false);
}

export interface SqlRun extends OperationRun {
  /** Checked SQL (geo/sql-guard checkSelectSql) against the relation `source`. */
  sql: string;
}

/**
 * Runs the user's SELECT against `source` (the chosen layer, geometry column named geometry) and
 * writes its result as the output layer. Column types follow GDAL's rules for SQL results.
 */
export async function runUserSql(run: SqlRun): Promise<void> {
  const rel = await describeSource(run.input, run.layer, run.sampleFeatures);
  const cte = `source AS (${rel.sql})`;
  const m = /^WITH(\s+RECURSIVE)?\s+/i.exec(run.sql);
  const sql = m ? `WITH${m[1] ?? ''} ${cte}, ${run.sql.slice(m[0].length)}` : `WITH ${cte} ${run.sql}`;
  const args = [
    '--config', 'OGR_SQLITE_SYNCHRONOUS', 'OFF',
    ...(existsSync(run.output.path) ? ['-update'] : []),
    '-f', 'GPKG', run.output.path, run.input.path, ...openOptionArgs(run.input),
    '-dialect', 'SQLite', '-sql', sql,
    '-nln', run.output.layer,
    '-lco', 'GEOMETRY_NAME=geometry',
  ];
  // A geometry passed through keeps its CRS; GDAL cannot always tell it from the SQL result.
  if (rel.crs) args.push('-a_srs', rel.crs.wkt);
  await runGdalTool('ogr2ogr', args, { readable: [run.input.path], writable: [run.workDir], ...(run.timeoutMs ? { timeoutMs: run.timeoutMs } : {}) }, `The SQL on layer ${run.layer} failed`);
}
