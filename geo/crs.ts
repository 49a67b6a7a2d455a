import { z } from 'zod';

/*
 * Which CRS texts a user may give (a convert's target_crs, a reproject's, a box's CRS). GDAL's
 * SetFromUserInput, which reads them, also takes a file name (it reads the file), an http URL
 * (it fetches it) and a /vsi… path (/vsicurl/ fetches, /vsizip/ reads a file): a CRS text could
 * make the server read its own files or reach an address the outbound policy refuses. So only
 * the forms that name a CRS by itself pass, checked before GDAL sees the text:
 *   - an authority code: EPSG:2056, ESRI:102100, OGC:CRS84, IGNF:LAMB93, IAU_2015:49900 …
 *   - an OGC URN: urn:ogc:def:crs:EPSG::4326
 *   - WKT (1 or 2): PROJCS[…], GEOGCRS[…] …
 *   - PROJJSON: {"type": "ProjectedCRS", …}
 *   - a PROJ string: +proj=utm +zone=32 +datum=WGS84, without file or URL values (+nadgrids=@null is fine)
 */

const authorityCode = /^[A-Za-z][A-Za-z0-9_]*\s*:\s*[A-Za-z0-9_.-]+$/;
/** Prefixes that look like an authority code but are schemes GDAL would open. */
const schemes = /^(https?|ftp|file|vsi[a-z0-9_]*|data)\s*:/i;
const urn = /^urn:ogc:def:crs:[A-Za-z0-9_.:-]+$/i;
const wkt = /^[A-Za-z_]+\s*\[/;
const projString = /^\+?proj=/;

export const CRS_FORMS = 'an authority code (EPSG:4326), an OGC URN, WKT, PROJJSON or a PROJ string (+proj=…)';

/** Why a CRS text is refused, or null when it is one of the accepted forms. */
export function crsTextProblem(text: string): string | null {
  const t = text.trim();
  if (!t) return 'is empty';
  if (t.includes('\u0000')) return 'contains a NUL character';
  if (t.startsWith('/') || t.startsWith('.') || t.startsWith('~') || /^[A-Za-z]:\\/.test(t)) return `looks like a file path; give ${CRS_FORMS}`;
  if (schemes.test(t) || /^\/vsi/i.test(t)) return `looks like a URL or a GDAL virtual file; give ${CRS_FORMS}`;
  if (authorityCode.test(t) || urn.test(t) || wkt.test(t)) return null;
  if (t.startsWith('{')) {
    try {
      const parsed = JSON.parse(t) as unknown;
      return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? null : 'is not a PROJJSON object';
    } catch {
      return 'is not valid JSON (PROJJSON)';
    }
  }
  if (projString.test(t)) {
    // PROJ reads grids and init files by name from its own search path; a path or URL names something else.
    if (/[/\\]|\b(https?|ftp|file):|vsi/i.test(t))
      return "names a file or URL in a PROJ string; only grid names from PROJ's own data may appear (e.g. +nadgrids=@null)";
    return null;
  }
  return `is not a form accepted here; give ${CRS_FORMS}`;
}

/** A CRS text in a request body: one of the accepted forms, refused with the reason otherwise. */
export const crsText = (description: string) =>
  z
    .string()
    .min(1)
    .max(2000)
    .superRefine((value, ctx) => {
      const problem = crsTextProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: `the CRS ${problem}` });
    })
    .describe(description);
