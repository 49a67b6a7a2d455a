import { z } from 'zod';
import { DomainError } from '../domain/errors.js';
import { gdal, layerSrs, type DatasetRef, type Layer, type SpatialReference } from './gdal/gdal.js';
import { crsLabel } from './gdal/labels.js';

/*
 * Coordinate reference systems as users give them and as the API shows them. Users give an
 * authority code (EPSG:2056, ESRI:102100, an OGC URN), WKT, PROJJSON or a PROJ string; GDAL's
 * SetFromUserInput would also take a file name or a URL and read or fetch it, so anything else
 * is refused before GDAL sees it.
 */

const WKT_WORDS = [
  'GEOGCS',
  'PROJCS',
  'GEOCCS',
  'VERT_CS',
  'COMPD_CS',
  'LOCAL_CS',
  'FITTED_CS',
  'GEOGCRS',
  'GEOGRAPHICCRS',
  'GEODCRS',
  'GEODETICCRS',
  'PROJCRS',
  'PROJECTEDCRS',
  'VERTCRS',
  'VERTICALCRS',
  'COMPOUNDCRS',
  'ENGCRS',
  'ENGINEERINGCRS',
  'BOUNDCRS',
  'DERIVEDPROJCRS',
  'BASEGEOGCRS',
];
const WKT_KEYWORDS = new RegExp(`^(${WKT_WORDS.join('|')})\\s*[[(]`, 'i');

/** Which of the accepted shapes `input` has, or null. */
export function crsInputKind(input: string): 'code' | 'urn' | 'wkt' | 'projjson' | 'proj' | null {
  const text = input.trim();
  if (/^[A-Za-z][A-Za-z0-9_-]{0,31}:[A-Za-z0-9_.-]{1,32}(\+[A-Za-z0-9_.-]{1,32})?$/.test(text) && !/^(file|https?|ftp|vsi\w*):/i.test(text)) return 'code';
  if (/^urn:ogc:def:crs(,crs)?:[A-Za-z0-9:.,_-]+$/i.test(text)) return 'urn';
  if (WKT_KEYWORDS.test(text)) return 'wkt';
  if (text.startsWith('{') && text.endsWith('}')) return 'projjson';
  // PROJ strings: +key=value tokens; values naming files (grids, init files) are not accepted.
  if (/^\+proj=/.test(text) && text.split(/\s+/).every((t) => /^\+[A-Za-z_][A-Za-z0-9_]*(=[^\s/\\@]*)?$/.test(t))) return 'proj';
  return null;
}

export const CRS_FORMS = 'an authority code (EPSG:4326), an OGC URN, WKT, PROJJSON or a PROJ string (+proj=…)';

/** Why a CRS text is refused (a URL, a file path, another shape), or null when it has an accepted shape. */
export function crsTextProblem(input: string): string | null {
  if (crsInputKind(input)) return null;
  const text = input.trim();
  if (/^(https?|ftp|file|data)\s*:/i.test(text) || /^\/vsi/i.test(text))
    return `looks like a URL or a GDAL virtual file, which GDAL would fetch or read; give ${CRS_FORMS}`;
  if (/^[/.~]/.test(text) || /^[A-Za-z]:\\/.test(text)) return `looks like a file path, which GDAL would read; give ${CRS_FORMS}`;
  if (/^\+proj=/.test(text))
    return 'names a file, a URL or a grid in a PROJ string (a value with /, \\ or @); give the PROJ string without it, or an authority code';
  return `is not a shape accepted here; give ${CRS_FORMS}`;
}

/** `word` matched in any case by a pattern without flags (JSON Schema patterns have none). */
const anyCase = (word: string) => word.replace(/[A-Za-z]/g, (c) => `[${c.toUpperCase()}${c.toLowerCase()}]`);

/** An authority code and an OGC URN as pattern text (crsInputKind's first two shapes). */
const CODE_SHAPES = [
  '[A-Za-z][A-Za-z0-9_-]{0,31}:[A-Za-z0-9_.-]{1,32}(?:\\+[A-Za-z0-9_.-]{1,32})?',
  `${anyCase('urn:ogc:def:crs')}(?:,${anyCase('crs')})?:[A-Za-z0-9:.,_-]+`,
];

/** An authority code or an OGC URN, what GET /crs/{code} looks up. */
export const CRS_CODE_PATTERN = `^\\s*(?:${CODE_SHAPES.join('|')})\\s*$`;

/**
 * The accepted shapes as one JSON Schema pattern, so the OpenAPI document says what the server
 * checks (crsInputKind, which also refuses `http:`/`file:`/`vsi…:` authority names).
 */
export const CRS_PATTERN = [
  '^\\s*(?:',
  [
    ...CODE_SHAPES,
    `(?:${WKT_WORDS.map(anyCase).join('|')})\\s*[[(][\\s\\S]*`,
    '\\{[\\s\\S]*\\}',
    '\\+proj=[^\\s/\\\\@]*(?:\\s+\\+[A-Za-z_][A-Za-z0-9_]*(?:=[^\\s/\\\\@]*)?)*',
  ].join('|'),
  ')\\s*$',
].join('');

/** A CRS text in a request body (an operation's parameter): an accepted shape, refused with the reason otherwise. */
export const crsText = (description: string) =>
  z
    .string()
    .min(1)
    .max(2000)
    .superRefine((value, ctx) => {
      const problem = crsTextProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: `the CRS ${problem}` });
    })
    .meta({ description, pattern: CRS_PATTERN });

/**
 * A CRS from user input, or invalid_parameter (invalid_transformation inside an operation) that
 * says what is accepted. `what` names the parameter (target_crs, source_crs, assign_crs.crs).
 */
export function parseCrsInput(input: string, what: string, code: 'invalid_parameter' | 'invalid_transformation' = 'invalid_parameter'): SpatialReference {
  const shown = JSON.stringify(input.trim().slice(0, 80));
  const refuse = (message: string) => new DomainError(code, message, { parameter: what });
  const problem = crsTextProblem(input);
  if (problem) throw refuse(`${what}: ${shown} ${problem}`);
  try {
    const srs = gdal.SpatialReference.fromUserInput(input.trim());
    srs.validate();
    return srs;
  } catch {
    throw refuse(`${what}: ${shown} is not a coordinate reference system GDAL knows (try EPSG:4326)`);
  }
}

/** The CRS as a client is shown it: its code, name and unit, besides the reusable label. */
export interface CrsDescription {
  /** AUTHORITY:CODE when known, else null. */
  code: string | null;
  name: string | null;
  /** The unit of its coordinates: degree, metre, US survey foot, … */
  unit: string | null;
  geographic: boolean;
}

export function describeCrs(srs: SpatialReference | null): CrsDescription | null {
  if (!srs) return null;
  const label = crsLabel(srs);
  const geographic = srs.isGeographic();
  let name: string | null = null;
  try {
    name = srs.getAttrValue(geographic ? 'GEOGCS' : srs.isProjected() ? 'PROJCS' : srs.isCompound() ? 'COMPD_CS' : 'LOCAL_CS') ?? null;
  } catch {
    name = null;
  }
  let unit: string | null = null;
  try {
    const u = geographic ? srs.getAngularUnits() : srs.getLinearUnits();
    unit = normaliseUnit(u.units);
  } catch {
    unit = null;
  }
  return { code: label && /^[A-Za-z]+:\S+$/.test(label) ? label : null, name, unit, geographic };
}

function normaliseUnit(unit: string | undefined): string | null {
  if (!unit) return null;
  const u = unit.toLowerCase();
  if (u === 'metre' || u === 'meter') return 'metre';
  if (u === 'degree' || u === 'degree (supplier to define representation)') return 'degree';
  return unit;
}

/** A CRS label with its name and unit, for messages: `EPSG:2263 (NAD83 / New York Long Island (ftUS), US survey foot)`. */
export function crsTitle(srs: SpatialReference | null): string {
  const d = describeCrs(srs);
  if (!d) return 'no CRS';
  const about = [d.name, d.unit].filter(Boolean).join(', ');
  return d.code ? `${d.code}${about ? ` (${about})` : ''}` : about || 'a custom CRS';
}

/** Whether the dataset's own CRS choice (source_crs on upload) applies to the layer instead of the file's. */
export function crsAssigned(layer: Layer, ref: DatasetRef): boolean {
  if (layer.geomType === gdal.wkbNone || !ref.assumedCrs) return false;
  return ref.crsOverride === true || !layerSrs(layer);
}

/** The CRS a layer's coordinates are in: the one set on upload, the file's, or the assumed one (CSV). */
export function sourceSrs(layer: Layer, ref: DatasetRef): SpatialReference | null {
  if (layer.geomType === gdal.wkbNone) return null;
  if (crsAssigned(layer, ref)) return gdal.SpatialReference.fromUserInput(ref.assumedCrs!);
  return layerSrs(layer);
}
