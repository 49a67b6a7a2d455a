import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * A GeoPackage of `count` points (EPSG:4326; id, name, value), generated once by GDAL's SQLite
 * dialect (no intermediate CSV, no JavaScript loop) and kept for later runs.
 */
export function pointsFile(dir: string, count: number): string {
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `points-${count}.gpkg`);
  if (existsSync(file)) return file;
  console.log(`making ${count} points…`);
  const seed = path.join(dir, 'seed.csv');
  writeFileSync(seed, 'a,b\n1,2\n');
  return madeOnce(file, (partial) =>
    execFileSync(
      'ogr2ogr',
      [
        '-f',
        'GPKG',
        partial,
        seed,
        '-dialect',
        'SQLite',
        '-nln',
        'points',
        '-nlt',
        'POINT',
        '-a_srs',
        'EPSG:4326',
        '-sql',
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})
     SELECT i AS id, 'name ' || i AS name, (i % 97) * 1.5 AS value,
            MakePoint(-180 + (i % 36000) / 100.0, -80 + (i / 36000) * 0.05, 4326) AS geom FROM n`,
      ],
      { stdio: 'inherit' },
    ),
  );
}

/** `file`, made by `make` into a temporary name and renamed once complete: a generation cut short never passes for the dataset. */
export function madeOnce(file: string, make: (partial: string) => void): string {
  const partial = `${file}.part${path.extname(file)}`;
  rmSync(partial, { force: true });
  make(partial);
  renameSync(partial, file);
  return file;
}
