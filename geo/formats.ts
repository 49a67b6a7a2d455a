import gdal from 'gdal-async';

/**
 * The format catalog, read from the GDAL build at start (never hard-coded): one entry per
 * driver and kind, with what it can read and write. A driver that does both vector and raster
 * (GPKG) appears once per kind.
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

let cached: FormatEntry[] | undefined;

export function formatCatalog(): FormatEntry[] {
  if (cached) return cached;
  const entries: FormatEntry[] = [];
  gdal.drivers.forEach((driver) => {
    const md = driver.getMetadata() as Record<string, string>;
    const read = md.DCAP_OPEN === 'YES';
    const write = md.DCAP_CREATE === 'YES' || md.DCAP_CREATECOPY === 'YES';
    const extensions = (md.DMD_EXTENSIONS ?? md.DMD_EXTENSION ?? '').split(/\s+/).filter(Boolean);
    for (const kind of ['vector', 'raster'] as const) {
      if (md[kind === 'vector' ? 'DCAP_VECTOR' : 'DCAP_RASTER'] !== 'YES') continue;
      entries.push({
        id: driver.description,
        name: md.DMD_LONGNAME ?? driver.description,
        kind,
        read,
        write,
        extensions,
        media_type: md.DMD_MIMETYPE ?? knownMediaTypes[driver.description] ?? null,
        multi_layer: kind === 'vector' ? md.DCAP_MULTIPLE_VECTOR_LAYERS === 'YES' : md.DMD_SUBDATASETS === 'YES',
      });
    }
  });
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
