import { gdal, type SpatialReference } from './gdal.js';

/*
 * How GDAL's numbers and objects are named in our JSON: geometry types in WKT spelling
 * (POINT, MULTIPOLYGON Z — the labels PostGIS and data previews use too), field types in OGR's
 * spelling (Integer, String), CRSs as AUTHORITY:CODE when one is known.
 */

const baseGeometryNames: Record<number, string> = {
  0: 'GEOMETRY',
  1: 'POINT',
  2: 'LINESTRING',
  3: 'POLYGON',
  4: 'MULTIPOINT',
  5: 'MULTILINESTRING',
  6: 'MULTIPOLYGON',
  7: 'GEOMETRYCOLLECTION',
  8: 'CIRCULARSTRING',
  9: 'COMPOUNDCURVE',
  10: 'CURVEPOLYGON',
  11: 'MULTICURVE',
  12: 'MULTISURFACE',
  13: 'CURVE',
  14: 'SURFACE',
  15: 'POLYHEDRALSURFACE',
  16: 'TIN',
  17: 'TRIANGLE',
  101: 'LINEARRING',
};

const baseGeometryCodes: Record<string, number> = Object.fromEntries(Object.entries(baseGeometryNames).map(([code, name]) => [name, Number(code)]));

/** The WKT name of a base geometry code (1 → POINT), or undefined for a code without one. */
export const baseGeometryName = (base: number): string | undefined => baseGeometryNames[base];

/** The base code of a WKT geometry name (POLYGON → 3; dimensions such as " Z" are ignored), or undefined. */
export const baseGeometryCode = (name: string): number | undefined => baseGeometryCodes[name.replace(/\s*(ZM|Z|M)$/i, '').toUpperCase()];

export interface GeometryTypeParts {
  /** ISO base code without dimensions: 1 point … 7 collection, 0 unknown, 100 none. */
  base: number;
  z: boolean;
  m: boolean;
}

/** Splits an OGR geometry type code (2.5D bit or ISO 1000/2000/3000 offsets) into base and dimensions. */
export function splitGeometryType(code: number): GeometryTypeParts {
  let t = code;
  let z = false;
  let m = false;
  if (t < 0 || t >= 0x80000000) {
    t = (t >>> 0) & 0x7fffffff;
    z = true;
  }
  if (t === 100 || t === 101) return { base: t, z, m };
  if (t >= 3000) {
    t -= 3000;
    z = m = true;
  } else if (t >= 2000) {
    t -= 2000;
    m = true;
  } else if (t >= 1000) {
    t -= 1000;
    z = true;
  }
  return { base: t, z, m };
}

/** OGR code for base + dimensions, in ISO form (what GDAL accepts everywhere since 2.1). */
export function geometryTypeCode(parts: GeometryTypeParts): number {
  if (parts.base === 100) return gdal.wkbNone;
  return parts.base + (parts.z && parts.m ? 3000 : parts.z ? 1000 : parts.m ? 2000 : 0);
}

/** `POINT`, `MULTIPOLYGON Z`, `LINESTRING ZM`; null for "no geometry". */
export function geometryTypeLabel(code: number): string | null {
  const { base, z, m } = splitGeometryType(code);
  if (base === 100) return null;
  const name = baseGeometryNames[base] ?? 'GEOMETRY';
  const dims = z && m ? ' ZM' : z ? ' Z' : m ? ' M' : '';
  return name + dims;
}

const fieldTypeNames: Record<string, string> = {
  integer: 'Integer',
  integer64: 'Integer64',
  real: 'Real',
  string: 'String',
  date: 'Date',
  time: 'Time',
  dateTime: 'DateTime',
  binary: 'Binary',
  integerList: 'IntegerList',
  integer64List: 'Integer64List',
  realList: 'RealList',
  stringList: 'StringList',
  wideString: 'String',
  wideStringList: 'StringList',
};

/** OGR's name for a gdal-async field type (`integer` → `Integer`). */
export function fieldTypeLabel(type: string): string {
  return fieldTypeNames[type] ?? type.charAt(0).toUpperCase() + type.slice(1);
}

/** The gdal-async spelling of an OGR field type name (`Integer64` → `integer64`). */
export function gdalFieldType(label: string): string {
  for (const [k, v] of Object.entries(fieldTypeNames)) if (v === label) return k;
  return 'string';
}

/**
 * A short, reusable name for a CRS: AUTHORITY:CODE when the definition carries or matches one
 * (Shapefile .prj files usually don't carry it), else its WKT, which is still valid input for
 * target_crs.
 */
export function crsLabel(srs: SpatialReference | null | undefined): string | null {
  if (!srs) return null;
  const direct = authorityOf(srs);
  if (direct) return direct;
  try {
    const clone = srs.clone();
    clone.autoIdentifyEPSG();
    const found = authorityOf(clone);
    if (found) return found;
  } catch {
    // not identifiable: fall through to WKT
  }
  try {
    return srs.toWKT();
  } catch {
    return null;
  }
}

function authorityOf(srs: SpatialReference): string | null {
  try {
    const name = srs.getAuthorityName(null);
    const code = srs.getAuthorityCode(null);
    return name && code ? `${name}:${code}` : null;
  } catch {
    return null;
  }
}

/** A CRS as PROJ and SpatiaLite accept it: AUTHORITY:CODE when known, else WKT. */
export function crsDefinition(srs: SpatialReference): string {
  return authorityOf(srs) ?? srs.toWKT();
}
