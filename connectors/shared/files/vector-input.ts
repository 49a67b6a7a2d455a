import path from 'node:path';
import { withCrsInFile } from '../../../geo/datasets/crs-in-file.js';
import { prepareUpload, type DatasetRef } from '../../../geo/datasets/dataset-files.js';
import { errorText, layerSrs, openDataset, scrubPaths, type Layer } from '../../../geo/gdal/gdal.js';
import { inProcessDataset, RasterDataset } from '../../../geo/isolation/index.js';
import { declaredTypeIsVague } from '../../../geo/datasets/geometry-types.js';
import { baseGeometryCode, baseGeometryName, crsLabel, splitGeometryType } from '../../../geo/gdal/labels.js';
import { DomainError } from '../../../domain/errors.js';
import type { DeliverInput } from '../../types.js';
import { ConnectorError } from '../../../domain/transfers.js';

/*
 * The converted output of a Workspace or Run, as one layer a database target can load: which file
 * GDAL opens (a .zip is unpacked), which layer, and the geometry type the table gets. Database
 * tables hold one geometry type, so the type is decided from the data, not only from what the
 * file declares: a shapefile says "Polygon" for layers holding multipolygons too, and GeoJSON says
 * "Unknown" for a mix. Parts of one family (Polygon + MultiPolygon) are promoted to the multi
 * type; unrelated families (points and polygons) get a generic geometry column.
 */

export interface VectorInput {
  ref: DatasetRef;
  layer: string;
  /** Flat base geometry code of the column to create (0 = generic, 100 = no geometry) … */
  base: number;
  z: boolean;
  m: boolean;
  /** … and the same as an ogr2ogr -nlt value (MULTIPOLYGON, POINTZ, GEOMETRY, NONE). */
  nlt: string;
  /**
   * Whether some features have no geometry (a spatial index that needs NOT NULL cannot be built);
   * null when nobody asked (`{ nullGeometries: true }`) and finding out would cost a scan.
   */
  nullGeometries: boolean | null;
  /** The layer's EPSG code, when its CRS is or matches one. */
  epsg: number | null;
  /** Features in the layer, when GDAL knows it cheaply. */
  features: number | null;
  /** The layer's attribute names. */
  fields: string[];
}

/**
 * A column name for what the loader adds (the geometry, the key) that no attribute of the layer
 * already has: `preferred`, else the alternatives, else `preferred_1`, `_2`… Compared without
 * case, as GDAL's drivers do.
 */
export function freeColumnName(fields: string[], preferred: string, ...alternatives: string[]): string {
  const taken = new Set(fields.map((f) => f.toLowerCase()));
  for (const name of [preferred, ...alternatives]) if (!taken.has(name.toLowerCase())) return name;
  for (let n = 1; ; n++) if (!taken.has(`${preferred}_${n}`.toLowerCase())) return `${preferred}_${n}`;
}

/** The multi type of a single-part type (POINT → MULTIPOINT …); itself otherwise. */
const multiOf: Record<number, number> = { 1: 4, 2: 5, 3: 6, 4: 4, 5: 5, 6: 6 };

/** One column type for the geometry types seen in the data (OGR names, e.g. POLYGON). */
export function columnGeometryType(declaredBase: number, seen: string[]): number {
  const bases = [...new Set(seen.map((s) => baseGeometryCode(s) ?? 0))];
  if (bases.length === 0) return declaredBase;
  if (bases.length === 1) return bases[0]!;
  const multis = new Set(bases.map((b) => multiOf[b] ?? -1));
  if (multis.size === 1 && !multis.has(-1)) return [...multis][0]!;
  return 0;
}

/** Abstract types (CURVE, SURFACE) and LINEARRING name no layer type: ogr2ogr's -nlt takes none of them. */
const noLayerType = new Set([13, 14, 101]);

export const nltOf = (base: number, z: boolean, m: boolean) =>
  base === 100 ? 'NONE' : `${(noLayerType.has(base) ? undefined : baseGeometryName(base)) ?? 'GEOMETRY'}${z && m ? 'ZM' : z ? 'Z' : m ? 'M' : ''}`;

/** Whether a layer's declared geometry type can be taken as what its rows hold (see geometry-types.ts). */
function trustsDeclaredType(driver: string, layer: Layer): boolean {
  return driver === 'GPKG' && !declaredTypeIsVague(layer, driver);
}

const rasterOutput = (driver: string) =>
  new ConnectorError(
    'invalid_data',
    `The output is a raster (${driver}); a database table takes vector features: deliver rasters to a file Destination (s3, azureblob, sftp)`,
    {},
    false,
  );

/**
 * Opens the output of a delivery and picks its one layer and the column type for it. Whether some
 * rows lack a geometry is answered only when asked (a loader whose spatial index needs NOT NULL):
 * in a trusted GeoPackage that takes a pass over every row (0.3–0.4 s per million polygons).
 */
export async function vectorInput(input: DeliverInput, workDir: string, ask: { nullGeometries?: boolean } = {}): Promise<VectorInput> {
  let ref: DatasetRef;
  try {
    // Our own output: a .zip is unpacked like an upload (a shapefile with its companions).
    ref = await prepareUpload(input.file, input.filename, path.join(workDir, 'input'), {
      maxUncompressedBytes: 1024 ** 4,
      ...(input.read ? { read: input.read } : {}),
    });
    // Read in this process (and by a database's ogr2ogr) only in a format whose files name no others.
    ref = await inProcessDataset(ref, path.join(workDir, 'readable'));
    // A CRS from outside the file (source_crs, a CSV's lon/lat) goes into it: loaders read it there.
    ref = await withCrsInFile(ref, path.join(workDir, 'with-crs'));
  } catch (error) {
    if (error instanceof RasterDataset) throw rasterOutput(error.driver);
    throw new ConnectorError(
      'invalid_data',
      `The converted output cannot be opened: ${error instanceof DomainError ? error.message : scrubPaths(errorText(error))}`,
      {},
      false,
    );
  }
  let ds;
  try {
    ds = await openDataset(ref);
  } catch (error) {
    throw new ConnectorError(
      'invalid_data',
      `The converted output cannot be opened: ${error instanceof DomainError ? error.message : scrubPaths(errorText(error))}`,
      {},
      false,
    );
  }
  try {
    const layers: string[] = [];
    ds.layers.forEach((l) => {
      layers.push(l.name);
    });
    if (layers.length === 0) {
      if (ds.bands.count() > 0) throw rasterOutput(ds.driver.description);
      throw new ConnectorError('invalid_data', 'The output has no layer to load', {}, false);
    }
    let layer: string | undefined;
    if (layers.length === 1) layer = layers[0];
    else if (input.layers.length === 1 && layers.includes(input.layers[0]!)) layer = input.layers[0];
    if (!layer) {
      throw new ConnectorError(
        'invalid_data',
        `The converted output has ${layers.length} layers (${layers.join(', ')}); a database table takes one: convert a single layer for this target`,
        { layers },
        false,
      );
    }
    const l = ds.layers.get(layer);
    const declared = splitGeometryType(l.geomType);
    let base = declared.base;
    let nullGeometries: boolean | null = false;
    if (base !== 100 && trustsDeclaredType(ds.driver.description, l)) {
      // A GeoPackage's declared type holds for its rows (GDAL's writer keeps to it, and our own
      // outputs declare what they measured): reading every geometry again cost ~1.5 s per million
      // points, more for polygons. Whether some rows lack a geometry, when asked, SQLite answers
      // from each row's header without reading the geometry (still a pass over every row).
      nullGeometries = null;
      if (ask.nullGeometries) {
        const g = `"${(l.geomColumn || 'geom').replace(/"/g, '""')}"`;
        const result = await ds.executeSQLAsync(`SELECT EXISTS (SELECT 1 FROM "${layer.replace(/"/g, '""')}" WHERE ${g} IS NULL) AS n`);
        const first = await result.features.firstAsync();
        nullGeometries = Number(first?.fields.get('n') ?? 0) === 1;
      }
    } else if (base !== 100) {
      const seen: string[] = [];
      const result = await ds.executeSQLAsync(`SELECT DISTINCT OGR_GEOMETRY FROM "${layer.replace(/"/g, '""')}"`, undefined, 'OGRSQL');
      for await (const f of result.features) {
        const name = f.fields.get(0);
        if (typeof name === 'string' && name) seen.push(name);
        else nullGeometries = true;
      }
      base = columnGeometryType(declared.base, seen);
    }
    const features = await l.features.countAsync().catch(() => null);
    const epsg = /^EPSG:(\d+)$/.exec(crsLabel(layerSrs(l)) ?? '')?.[1];
    const fields = l.fields.getNames();
    return {
      ref,
      layer,
      base,
      z: declared.z,
      m: declared.m,
      nlt: nltOf(base, declared.z, declared.m),
      nullGeometries,
      epsg: epsg ? Number(epsg) : null,
      features,
      fields,
    };
  } finally {
    ds.close();
  }
}
