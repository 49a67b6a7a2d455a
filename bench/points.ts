import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A GeoPackage of `count` points (EPSG:4326; id, name, value), generated once by GDAL's SQLite
 * dialect (no intermediate CSV, no JavaScript loop) and kept for later runs.
 */
export function pointsFile(dir: string, count: number): string {
  return generatedGpkg(path.join(dir, `points-${count}.gpkg`), {
    what: `${count} points`,
    layer: 'points',
    geometryType: 'POINT',
    sql: `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})
     SELECT i AS id, 'name ' || i AS name, (i % 97) * 1.5 AS value,
            MakePoint(-180 + (i % 36000) / 100.0, -80 + (i / 36000) * 0.05, 4326) AS geom FROM n`,
  });
}

/**
 * `file`, a GeoPackage of one EPSG:4326 layer whose rows a query in GDAL's SQLite dialect
 * generates, made once and kept. It is written under a temporary name and renamed once complete:
 * a generation cut short (a restarted machine) never passes for the dataset.
 */
export function generatedGpkg(file: string, spec: { what: string; layer: string; geometryType: string; sql: string }): string {
  if (existsSync(file)) return file;
  console.log(`making ${spec.what}…`);
  const dir = path.dirname(file);
  mkdirSync(dir, { recursive: true });
  // The query needs a source to run on; two columns, as GDAL's CSV driver does not claim a one-column file.
  const seed = path.join(dir, 'seed.csv');
  writeFileSync(seed, 'a,b\n1,2\n');
  const partial = `${file}.part.gpkg`;
  rmSync(partial, { force: true });
  execFileSync(
    'ogr2ogr',
    ['-f', 'GPKG', partial, seed, '-dialect', 'SQLite', '-nln', spec.layer, '-nlt', spec.geometryType, '-a_srs', 'EPSG:4326', '-sql', spec.sql],
    { stdio: 'inherit' },
  );
  renameSync(partial, file);
  return file;
}
