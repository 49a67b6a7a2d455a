import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { pointsFile } from './points.js';
import { startStack, uploadWithCurl } from '../scripts/stack.js';

/**
 * `npm run bench:convert`: a 1,000,000-point GeoPackage converted to GeoJSON, FlatGeobuf and
 * GeoPackage by ogr2ogr and through the API (upload excluded), in the same run on the same file.
 * Prints each time and the ratio API / ogr2ogr (aim: ≤ 1.15).
 */
const POINTS = Number(process.env.BENCH_POINTS ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const formats = [
  // The API writes RFC 7946 GeoJSON (docs/decisions.md): ogr2ogr is asked for the same file.
  { id: 'GeoJSON', ext: 'geojson', ogr2ogr: ['-lco', 'RFC7946=YES'] },
  { id: 'FlatGeobuf', ext: 'fgb', ogr2ogr: [] },
  { id: 'GPKG', ext: 'gpkg', ogr2ogr: [] },
];

const stack = await startStack('convert');
const work = path.join(stack.dir, 'files');
mkdirSync(work, { recursive: true });

try {
  const source = pointsFile(work, POINTS);
  console.log(`source: ${(statSync(source).size / 1e6).toFixed(1)} MB`);
  const { id } = await uploadWithCurl(stack.base, stack.token, source);

  const rows: string[] = [];
  for (const f of formats) {
    const ogrTimes: number[] = [];
    const apiTimes: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const out = path.join(work, `ogr.${f.ext}`);
      rmSync(out, { force: true });
      let t = performance.now();
      execFileSync('ogr2ogr', ['-f', f.id, ...f.ogr2ogr, out, source], { stdio: 'inherit' });
      ogrTimes.push(performance.now() - t);

      t = performance.now();
      const res = await fetch(`${stack.base}/api/v1/workspaces/${id}/convert`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.token}` },
        body: JSON.stringify({ output_format: f.id }),
      });
      if (!res.ok) throw new Error(`convert ${f.id}: ${res.status} ${await res.text()}`);
      apiTimes.push(performance.now() - t);
    }
    const best = (xs: number[]) => Math.min(...xs);
    rows.push(
      `${f.id.padEnd(11)} ogr2ogr ${(best(ogrTimes) / 1000).toFixed(2)} s   API ${(best(apiTimes) / 1000).toFixed(2)} s   ratio ${(best(apiTimes) / best(ogrTimes)).toFixed(2)}`,
    );
  }
  console.log(`\n${POINTS} points, best of ${ROUNDS} rounds (API time is the whole HTTP convert call, upload excluded):`);
  for (const row of rows) console.log(row);
} finally {
  await stack.stop();
}
