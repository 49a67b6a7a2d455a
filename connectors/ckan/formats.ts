import path from 'node:path';

/*
 * CKAN's names for resource formats. CKAN stores a format as its short name after looking what was
 * typed up in ckan/config/resource_formats.json (ckan.lib.helpers.unified_resource_format: the
 * short name, the description, the media type and the alternatives all lead to the short name:
 * "csv" → "CSV", "Shapefile" → "SHP"); a resource saved without a format gets one guessed from
 * its URL's file name (ckan.logic.validators.if_empty_guess_format). Portals that predate this,
 * harvesters and hand-edited records keep whatever was typed. A selector and a resource are
 * therefore compared by the short name both lead to. The rows are the geodata and tabular ones of
 * CKAN's table, with GeoPackage, FlatGeobuf and GeoParquet added (CKAN has no row for them).
 */

/** [short name, description, media type, alternatives] as in CKAN's table. */
const ROWS: [string, string, string | null, string[]][] = [
  ['CSV', 'Comma Separated Values File', 'text/csv', ['text/comma-separated-values']],
  ['TSV', 'Tab Separated Values File', 'text/tab-separated-values', ['text/tsv']],
  ['dBase', 'dBase Database', 'application/x-dbf', ['dbf']],
  ['GeoJSON', 'Geographic JavaScript Object Notation', 'application/geo+json', ['geojson']],
  ['JSON', 'JavaScript Object Notation', 'application/json', []],
  ['KML', 'KML File', 'application/vnd.google-earth.kml+xml', []],
  ['KMZ', 'KMZ File', 'application/vnd.google-earth.kmz+xml', ['application/vnd.google-earth.kmz']],
  ['SHP', 'Shapefile', null, ['esri shapefile', 'zipped shapefile']],
  ['ZIP', 'Zip File', 'application/zip', ['zip', 'application/x-zip-compressed']],
  ['XLS', 'Excel Document', 'application/vnd.ms-excel', ['excel']],
  ['XLSX', 'Excel OOXML Spreadsheet', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', []],
  ['XML', 'XML File', 'application/xml', ['text/xml']],
  ['TIFF', 'TIFF Image File', 'image/tiff', ['tif', 'geotiff']],
  ['GML', 'Geography Markup Language', 'application/gml+xml', []],
  ['GPX', 'GPS Exchange Format', 'application/gpx+xml', []],
  ['GPKG', 'GeoPackage', 'application/geopackage+sqlite3', ['geopackage']],
  ['FGB', 'FlatGeobuf', 'application/flatgeobuf', ['flatgeobuf']],
  ['Parquet', 'Apache Parquet', 'application/vnd.apache.parquet', ['geoparquet']],
];

const SHORT_NAMES = new Map<string, string>();
for (const [short, description, media, alternatives] of ROWS)
  for (const name of [short, description, media, ...alternatives]) if (name) SHORT_NAMES.set(name.toLowerCase(), short);

/** File extensions that name another row than their own spelling. */
const EXTENSIONS: Record<string, string> = { tif: 'TIFF', tiff: 'TIFF', htm: 'HTML', jpg: 'JPEG', yml: 'YAML' };

/** The short name CKAN gives `format` ("csv", ".csv", "text/csv" → "CSV"; "Shapefile" → "SHP"); unknown names as typed, trimmed. */
export function ckanFormat(format: string): string {
  const typed = format.trim().replace(/^\./, '');
  return SHORT_NAMES.get(typed.toLowerCase()) ?? typed;
}

/** The format CKAN guesses for a resource without one, from its URL's file name; null without an extension. */
export function guessedFormat(url: string | null | undefined): string | null {
  let name = '';
  try {
    name = path.posix.basename(new URL(url ?? '', 'http://x/').pathname);
  } catch {
    return null;
  }
  const extension = path.posix.extname(name).slice(1).toLowerCase();
  if (!extension) return null;
  return EXTENSIONS[extension] ?? SHORT_NAMES.get(extension) ?? extension.toUpperCase();
}

/** Whether a resource's format (or, without one, the format guessed from its URL) is the `wanted` one. */
export function sameFormat(format: string | null | undefined, wanted: string, url?: string | null): boolean {
  const have = format?.trim() ? format : guessedFormat(url);
  if (!have) return false;
  return ckanFormat(have).toLowerCase() === ckanFormat(wanted).toLowerCase();
}
