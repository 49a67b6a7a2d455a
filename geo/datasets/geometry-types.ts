import { gdal, openAs, type Dataset, type Layer } from '../gdal/gdal.js';
import { geometryTypeCode, geometryTypeLabel, splitGeometryType } from '../gdal/labels.js';
import { geometryColumnOf, sqlIdent } from './layer-sql.js';

/*
 * What geometry types a layer really holds, and what type an output layer must declare to hold
 * them. A layer's declared type is not always the truth: a shapefile says Polygon for polygons
 * and multipolygons alike, GEOMETRY says nothing, and operations change types (a buffer turns
 * some shapes into multipolygons). Strict writers (FlatGeobuf, Shapefile, FileGDB) refuse
 * features that do not match the layer type, and GeoPackage readers trust it.
 */

export interface GeometryMix {
  /** Distinct base types (1 point … 7 collection, see labels.ts); empty for an empty layer. */
  bases: number[];
  /** Some geometries have Z / M. */
  z: boolean;
  m: boolean;
  /** Every geometry has Z (when z is true). */
  allZ: boolean;
}

const baseByName: Record<string, number> = {
  POINT: 1,
  LINESTRING: 2,
  POLYGON: 3,
  MULTIPOINT: 4,
  MULTILINESTRING: 5,
  MULTIPOLYGON: 6,
  GEOMETRYCOLLECTION: 7,
  GEOMCOLLECTION: 7,
};

/**
 * Reads the distinct geometry types of a layer in one SQL pass: GeoPackage answers from each
 * geometry's header; other drivers go through GDAL's SQLite dialect.
 */
export async function measureGeometryTypes(ds: Dataset, layer: Layer): Promise<GeometryMix> {
  const geom = geometryColumnOf(layer);
  const table = sqlIdent(layer.name);
  const native = ds.driver.description === 'GPKG';
  const sql = native
    ? `SELECT DISTINCT ST_GeometryType(${geom}) AS t, ST_Is3D(${geom}) AS z, ST_IsMeasured(${geom}) AS m FROM ${table} WHERE ${geom} IS NOT NULL`
    : `SELECT DISTINCT GeometryType(${geom}) AS t FROM ${table} WHERE ${geom} IS NOT NULL`;
  const result = await ds.executeSQLAsync(sql, undefined, native ? undefined : 'SQLite');
  const bases = new Set<number>();
  let z = false;
  let m = false;
  let allZ = true;
  // The result set is released with the dataset.
  for (let f = await result.features.firstAsync(); f; f = await result.features.nextAsync()) {
    const text = String(f.fields.get('t') ?? '')
      .trim()
      .toUpperCase();
    // SpatiaLite spells dimensions as a suffix: "POLYGON Z", "POINT ZM".
    const [name = '', dims = ''] = text.split(/\s+/);
    const base = baseByName[name];
    if (base === undefined) continue;
    bases.add(base);
    const hasZ = native ? Number(f.fields.get('z')) === 1 : dims.includes('Z');
    const hasM = native ? Number(f.fields.get('m')) === 1 : dims.includes('M');
    z ||= hasZ;
    m ||= hasM;
    allZ &&= hasZ;
  }
  return { bases: [...bases].sort((a, b) => a - b), z, m, allZ: z && allZ };
}

/** The multi-part counterpart of a single-part base type (point → multipoint …). */
const multiOf: Record<number, number> = { 1: 4, 2: 5, 3: 6 };

export type OutputGeometry =
  /** Every geometry fits one type (single and multi parts of one kind are promoted to multi). */
  | { kind: 'uniform'; code: number }
  /** Several kinds (points and polygons, collections with others): only a GEOMETRY layer holds them. */
  | { kind: 'mixed'; labels: string[] }
  /** No geometry to go by (an empty layer): keep what the layer declares. */
  | { kind: 'unknown' };

/** The one type a layer must declare to hold a mix, as `ogr2ogr -nlt PROMOTE_TO_MULTI` would. */
export function outputGeometry(mix: GeometryMix): OutputGeometry {
  const dims = { z: mix.z, m: mix.m };
  if (mix.bases.length === 0) return { kind: 'unknown' };
  if (mix.bases.length === 1) return { kind: 'uniform', code: geometryTypeCode({ base: mix.bases[0]!, ...dims }) };
  // Only the two parts of one kind: [3, 6] is polygons and multipolygons.
  const [a, b] = mix.bases;
  if (mix.bases.length === 2 && multiOf[a!] === b) return { kind: 'uniform', code: geometryTypeCode({ base: b!, ...dims }) };
  return { kind: 'mixed', labels: mix.bases.map((base) => geometryTypeLabel(base)!) };
}

/** The -nlt spelling of a type code: MULTIPOLYGON, POINTZ, LINESTRINGZM. */
export function nltName(code: number): string {
  const { z, m } = splitGeometryType(code);
  const name = geometryTypeLabel(geometryTypeCode({ ...splitGeometryType(code), z: false, m: false }))!;
  return `${name}${z ? 'Z' : ''}${m ? 'M' : ''}`;
}

/** Equal types, whichever encoding (ISO 1003 or 2.5D 0x80000003) each code uses. */
export function sameGeometryType(a: number, b: number): boolean {
  const x = splitGeometryType(a);
  const y = splitGeometryType(b);
  return x.base === y.base && x.z === y.z && x.m === y.m;
}

/** Whether a declared type cannot be trusted to describe every geometry of the layer. */
export function declaredTypeIsVague(layer: Layer, driver: string): boolean {
  const { base } = splitGeometryType(layer.geomType);
  if (layer.geomType === gdal.wkbNone) return false;
  if (base === 0) return true;
  // A shapefile's Polygon and LineString also hold multi-part shapes.
  return driver === 'ESRI Shapefile' && (base === 2 || base === 3);
}

/**
 * Makes every layer of a GeoPackage we wrote declare what it holds: its one geometry type, or
 * GEOMETRY when single and multi parts or several kinds share it. Empty layers keep the type
 * they were created with. Only the declaration changes; the rows are not rewritten.
 */
export async function declareMeasuredTypes(gpkg: string): Promise<void> {
  const updates: { table: string; type: string; z: number; m: number }[] = [];
  const ds = await openAs('GPKG', gpkg);
  try {
    for (let i = 0; i < ds.layers.count(); i++) {
      const layer = ds.layers.get(i);
      if (layer.geomType === gdal.wkbNone) continue;
      const mix = await measureGeometryTypes(ds, layer);
      if (mix.bases.length === 0) continue;
      const single = mix.bases.length === 1;
      const code = geometryTypeCode({ base: single ? mix.bases[0]! : 0, z: mix.z, m: mix.m });
      if (sameGeometryType(code, layer.geomType)) continue;
      updates.push({
        table: layer.name,
        type: single ? geometryTypeLabel(geometryTypeCode({ base: mix.bases[0]!, z: false, m: false }))! : 'GEOMETRY',
        // GeoPackage: 0 prohibited, 1 mandatory, 2 optional.
        z: mix.z ? (mix.allZ ? 1 : 2) : 0,
        m: mix.m ? 2 : 0,
      });
    }
  } finally {
    ds.close();
  }
  if (updates.length === 0) return;
  const rw = await openAs('GPKG', gpkg, 'r+');
  try {
    for (const u of updates) {
      const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;
      await executeStatement(
        rw,
        `UPDATE gpkg_geometry_columns SET geometry_type_name = ${literal(u.type)}, z = ${u.z}, m = ${u.m} WHERE lower(table_name) = lower(${literal(u.table)})`,
      );
    }
  } finally {
    rw.close();
  }
}

/**
 * Runs a statement that returns no rows. GDAL answers it with no result set, which gdal-async
 * 3.12 reports as an Error without a message; a failed statement carries GDAL's message.
 */
async function executeStatement(ds: Dataset, statement: string): Promise<void> {
  try {
    await ds.executeSQLAsync(statement);
  } catch (error) {
    if (error instanceof Error && error.message === '') return;
    throw error;
  }
}
