import { gdal, uploadDrivers } from '../gdal/gdal.js';
import { engineFormats } from '../formats/catalog.js';
import { engineAvailable } from '../formats/engine.js';

/**
 * The format catalog, read from the GDAL build at start: one entry per file format and kind,
 * saying whether an upload can be read with it and whether convert can write it. A driver that
 * does both vector and raster (GPKG) appears once per kind. Database and web-service drivers
 * (PostgreSQL, MySQL, Carto, WMS…) and in-memory ones are not file formats: they are absent.
 */
export interface FormatEntry {
  id: string;
  name: string;
  kind: 'vector' | 'raster';
  read: boolean;
  write: boolean;
  extensions: string[];
  media_type: string | null;
  multi_layer: boolean;
}

/** Media types GDAL does not publish for common drivers. */
const knownMediaTypes: Record<string, string> = {
  GPKG: 'application/geopackage+sqlite3',
  GeoJSON: 'application/geo+json',
  GeoJSONSeq: 'application/geo+json-seq',
  FlatGeobuf: 'application/flatgeobuf',
  'ESRI Shapefile': 'application/zip',
  KML: 'application/vnd.google-earth.kml+xml',
  LIBKML: 'application/vnd.google-earth.kml+xml',
  GPX: 'application/gpx+xml',
  GML: 'application/gml+xml',
  CSV: 'text/csv',
  XLSX: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  GTiff: 'image/tiff',
  COG: 'image/tiff; application=geotiff; profile=cloud-optimized',
  PNG: 'image/png',
  JPEG: 'image/jpeg',
  PDF: 'application/pdf',
  Parquet: 'application/vnd.apache.parquet',
};

/** Drivers that are not files at all: they hold data in memory or describe another dataset. */
const notFiles = new Set(['Memory', 'MEM', 'VRT', 'OGR_VRT', 'WMS', 'WMTS', 'PostGISRaster', 'GNMFile', 'GNMDatabase']);

/**
 * Vector writers GDAL lists that cannot turn an ordinary layer into a usable file, with the
 * reason. test/geo/datasets/formats.int.spec.ts converts a point and a polygon layer to every vector
 * output this catalog lists, so a driver that fails there belongs here.
 */
const notVectorOutputs: Record<string, string> = {
  FITS: 'a raster format; its tables fail to close',
  netCDF: 'a raster format; writing vector layers crashes GDAL 3.6',
  PCIDSK: 'a raster format whose vector segments no other tool reads',
  PDS4: 'planetary raster labels; vector layers become plain tables',
  PDF: 'a map document, not a data format',
  'Interlis 2': 'needs an INTERLIS model file',
  WAsP: 'elevation contour lines only',
  Selafin: 'mesh points only',
  Geoconcept: 'needs a Geoconcept type configuration',
  GeoRSS: 'news feeds in WGS 84 only',
  VDV: 'public transport tables',
  MVT: 'a folder of tiles that needs a tiling scheme',
};

/**
 * Raster writers that cannot write an ordinary raster (they need fixed sizes, band layouts or
 * file names, or are datum-shift grids), with the reason; the same test proves the rest.
 */
const notRasterOutputs: Record<string, string> = {
  ADRG: 'needs 3 bands and an ADRG file name',
  BLX: 'needs sizes in multiples of 128',
  BYN: 'a geoid model grid',
  CTable2: 'a datum shift grid',
  DTED: 'needs a geographic one-degree tile',
  GTX: 'a vertical datum grid',
  ILWIS: 'writes a map list whose files it names itself',
  LCP: 'needs 5 to 10 fuel model bands',
  Leveller: 'needs height ranges as creation options',
  NGW: 'a web service',
  NTv2: 'a datum shift grid',
  ROI_PAC: 'needs ROI_PAC file names',
  SRTMHGT: 'needs a 1201×1201 or 3601×3601 one-degree tile',
  Terragen: 'needs terrain spans as creation options',
};

/**
 * CAD drawings: GDAL says they hold several layers, but they read as one layer of entities and
 * write one (without attributes); several layers become several files.
 */
const oneLayerDrawings = new Set(['DGN', 'DXF']);

/** "Comma Separated Value (.csv)" → "Comma Separated Value": clients show extensions themselves. */
function cleanName(longName: string): string {
  return longName.replace(/\s*\((?:\.[\w-]+(?:,\s*|\s+)?)+\)\s*$/, '').trim() || longName;
}

function canWrite(md: Record<string, string>, id: string, kind: 'vector' | 'raster'): boolean {
  if (kind === 'vector') {
    // vectorTranslate creates a dataset, then its layers: both capabilities are needed.
    return md.DCAP_CREATE === 'YES' && md.DCAP_CREATE_LAYER === 'YES' && !(id in notVectorOutputs);
  }
  return (md.DCAP_CREATE === 'YES' || md.DCAP_CREATECOPY === 'YES') && !(id in notRasterOutputs);
}

let cached: FormatEntry[] | undefined;

export function formatCatalog(): FormatEntry[] {
  if (cached) return cached;
  const readable = new Set(uploadDrivers());
  const entries: FormatEntry[] = [];
  gdal.drivers.forEach((driver) => {
    const id = driver.description;
    const md = driver.getMetadata() as Record<string, string>;
    if (notFiles.has(id) || md.DMD_CONNECTION_PREFIX) return;
    const read = md.DCAP_OPEN === 'YES' && readable.has(id);
    const extensions = (md.DMD_EXTENSIONS ?? md.DMD_EXTENSION ?? '').split(/\s+/).filter(Boolean);
    for (const kind of ['vector', 'raster'] as const) {
      if (md[kind === 'vector' ? 'DCAP_VECTOR' : 'DCAP_RASTER'] !== 'YES') continue;
      const write = canWrite(md, id, kind);
      if (!read && !write) continue;
      entries.push({
        id,
        name: cleanName(md.DMD_LONGNAME ?? id),
        kind,
        read,
        write,
        extensions,
        media_type: md.DMD_MIMETYPE ?? knownMediaTypes[id] ?? null,
        multi_layer: kind === 'vector' ? md.DCAP_MULTIPLE_VECTOR_LAYERS === 'YES' && !oneLayerDrawings.has(id) : md.DMD_SUBDATASETS === 'YES',
      });
    }
  });
  // GeoParquet in and out, vector tiles out: the formats engine's (geo/formats/catalog.ts).
  if (engineAvailable()) {
    for (const f of engineFormats) {
      const { creation_options: _options, ...entry } = f;
      const gdalEntry = entries.findIndex((e) => e.id === f.id && e.kind === 'vector');
      if (gdalEntry >= 0) entries[gdalEntry] = { ...entries[gdalEntry]!, write: true, multi_layer: f.multi_layer };
      else entries.push({ ...entry, kind: 'vector' });
    }
  }
  cached = entries.sort((a, b) => a.id.localeCompare(b.id) || a.kind.localeCompare(b.kind));
  return cached;
}

/**
 * Finds an output format by driver id (case-insensitive) or by extension, for the given kind.
 * ogr2ogr users type `GPKG`; others type `gpkg` or `shp`: both work.
 */
export function resolveOutputFormat(name: string, kind: 'vector' | 'raster'): FormatEntry | undefined {
  const wanted = name.trim().toLowerCase().replace(/^\./, '');
  // A driver named exactly wins over extensions: "OSM" (read-only) must not fall back to GPSBabel's .osm.
  const exact = formatCatalog().find((f) => f.kind === kind && f.id.toLowerCase() === wanted);
  if (exact) return exact.write ? exact : undefined;
  const candidates = formatCatalog().filter((f) => f.kind === kind && f.write);
  return (
    candidates.find((f) => f.id.toLowerCase() === wanted) ??
    candidates.find((f) => f.extensions.includes(wanted)) ??
    (wanted === 'shapefile' ? candidates.find((f) => f.id === 'ESRI Shapefile') : undefined)
  );
}

export function gdalSummary() {
  const all = formatCatalog();
  return {
    version: gdal.version,
    drivers: {
      total: gdal.drivers.count(),
      vector: all.filter((f) => f.kind === 'vector').length,
      raster: all.filter((f) => f.kind === 'raster').length,
    },
  };
}
