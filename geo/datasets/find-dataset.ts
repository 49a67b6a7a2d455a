import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { DomainError } from '../../domain/errors.js';
import type { DatasetRef } from '../gdal/dataset-ref.js';
import { refFor } from './dataset-at.js';
import { extensionOf } from './file-names.js';

/* Which dataset of an extracted ZIP GDAL opens: the best by extension, shapefiles of one folder together, a partitioned Parquet dataset as its folder. */

/**
 * Extensions of datasets, best first. A GeoPackage or FileGDB is usually "the" dataset of a ZIP;
 * shapefiles next; sidecar files (.shx, .dbf, .prj, .xml, .txt) are never chosen.
 */
const datasetExtensions = [
  'gdb',
  'gpkg',
  'sqlite',
  'shp',
  'fgb',
  'geojson',
  'json',
  'geojsonl',
  'geojsons',
  'kml',
  'kmz',
  'gpx',
  'gml',
  'tab',
  'mif',
  'dxf',
  'parquet',
  'xlsx',
  'ods',
  'csv',
  'tsv',
  'tif',
  'tiff',
  'jp2',
  'asc',
  'png',
  'jpg',
  'jpeg',
  'nc',
  'img',
];

interface Found {
  rel: string;
  ext: string;
}

async function walk(root: string): Promise<Found[]> {
  const found: Found[] = [];
  async function visit(dir: string, rel: string) {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const e of entries) {
      // macOS resource forks and hidden files are never datasets.
      if (e.name.startsWith('.') || e.name === '__MACOSX') continue;
      const childRel = rel ? `${rel}/${e.name}` : e.name;
      const ext = extensionOf(e.name);
      if (e.isDirectory()) {
        if (ext === 'gdb') found.push({ rel: childRel, ext });
        else await visit(path.join(dir, e.name), childRel);
      } else if (e.isFile()) {
        found.push({ rel: childRel, ext });
      }
    }
  }
  await visit(root, '');
  return found;
}

/** The deepest folder holding every path (relative, POSIX), "" for the root; Hive key=value folders are not roots. */
function commonFolder(rels: string[]): string {
  const split = rels.map((r) =>
    path.posix
      .dirname(r)
      .split('/')
      .filter((p) => p !== '.'),
  );
  const common: string[] = [];
  for (let i = 0; split.every((parts) => i < parts.length && parts[i] === split[0]![i]); i++) common.push(split[0]![i]!);
  while (common.length && common[common.length - 1]!.includes('=')) common.pop();
  return common.join('/');
}

/** Finds the dataset GDAL should open in an extracted folder. */
export async function findDatasetIn(folder: string): Promise<DatasetRef> {
  const files = await walk(folder);
  const candidates = files
    .filter((f) => datasetExtensions.includes(f.ext))
    .sort((a, b) => datasetExtensions.indexOf(a.ext) - datasetExtensions.indexOf(b.ext) || a.rel.localeCompare(b.rel));
  const best = candidates[0];
  if (!best) {
    const names = files.slice(0, 20).map((f) => f.rel);
    throw new DomainError('invalid_source', 'The ZIP holds no dataset GDAL can read (expected a .shp with its .shx and .dbf, a .gpkg, a .geojson, …)', {
      files: names,
    });
  }
  const warnings: string[] = [];
  let chosen: DatasetRef;
  let used: Set<string>;
  if (best.ext === 'shp') {
    // Shapefiles in one folder open together, one layer each; GDAL opens the folder.
    const dir = path.posix.dirname(best.rel);
    const siblings = candidates.filter((c) => c.ext === 'shp' && path.posix.dirname(c.rel) === dir);
    used = new Set(siblings.map((s) => s.rel));
    for (const shp of siblings) {
      const stem = shp.rel.slice(0, -4);
      const has = (e: string) => files.some((f) => f.rel.toLowerCase() === `${stem}.${e}`.toLowerCase());
      if (!has('dbf')) warnings.push(`${shp.rel} has no .dbf next to it: its attributes are missing`);
      if (!has('shx')) warnings.push(`${shp.rel} has no .shx next to it`);
      if (!has('prj')) warnings.push(`${shp.rel} has no .prj next to it: its coordinate system is unknown`);
    }
    // One shapefile opens as a file; several open as their folder (one layer each).
    chosen = refFor(siblings.length > 1 ? path.join(folder, dir) : path.join(folder, best.rel));
  } else if (best.ext === 'parquet') {
    // A partitioned dataset (Hive folders, part-0.parquet …) is one dataset: the folder above its parts.
    const parts = candidates.filter((c) => c.ext === 'parquet');
    const root = commonFolder(parts.map((p) => p.rel));
    used = new Set(parts.map((p) => p.rel));
    chosen = refFor(parts.length > 1 ? path.join(folder, root) : path.join(folder, best.rel));
  } else {
    used = new Set([best.rel]);
    chosen = refFor(path.join(folder, best.rel));
  }
  const ignored = candidates.filter((c) => !used.has(c.rel));
  if (ignored.length > 0) {
    warnings.push(
      `The ZIP holds ${ignored.length + used.size} datasets; opened ${used.size > 1 ? `the ${used.size} shapefiles in ${path.posix.dirname(best.rel) === '.' ? 'its root folder' : path.posix.dirname(best.rel)}` : best.rel}, ignored: ${ignored
        .slice(0, 10)
        .map((c) => c.rel)
        .join(', ')}${ignored.length > 10 ? ', …' : ''}`,
    );
  }
  chosen.warnings = warnings;
  return chosen;
}
