/**
 * Conversion speed of geo/datasets/convert.ts against the ogr2ogr CLI, same GDAL library, same file.
 *
 *   node --import tsx bench/convert/geo-only.ts
 *   BENCH_POINTS=200000 BENCH_RUNS=5 node --import tsx bench/convert/geo-only.ts
 *
 * Generates a GeoPackage of BENCH_POINTS points (default 1 000 000) in .data/bench/ once, then
 * for each output format runs ogr2ogr and convertDataset alternately BENCH_RUNS times (default
 * 3) and compares medians. The target is convertDataset ≤ 1.15 × ogr2ogr: both run the same
 * GDAL code, so a larger ratio means extra passes or options ogr2ogr does not use.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { convertDataset } from '../../geo/datasets/convert.js';
import { datasetAt } from '../../geo/datasets/dataset-files.js';

const points = Number(process.env.BENCH_POINTS ?? 1_000_000);
const runs = Number(process.env.BENCH_RUNS ?? 3);
const root = path.resolve('.data/bench');
const input = path.join(root, `points-${points}.gpkg`);

async function generate(): Promise<void> {
  if (existsSync(input)) return;
  mkdirSync(root, { recursive: true });
  const csv = path.join(root, `points-${points}.csv`);
  const out = createWriteStream(csv);
  out.write('id,name,category,value,lon,lat\n');
  // Deterministic pseudo-random points over Switzerland.
  let seed = 42;
  const rnd = () => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648;
  };
  for (let i = 1; i <= points; i++) {
    const line = `${i},point ${i},${['bus', 'tram', 'train', 'boat'][i % 4]},${(rnd() * 1000).toFixed(3)},${(5.9 + rnd() * 4.6).toFixed(6)},${(45.8 + rnd() * 2).toFixed(6)}\n`;
    if (!out.write(line)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  const started = Date.now();
  execFileSync('ogr2ogr', [
    '-f',
    'GPKG',
    input,
    csv,
    '-nln',
    'points',
    '-a_srs',
    'EPSG:4326',
    '-nlt',
    'POINT',
    '-oo',
    'X_POSSIBLE_NAMES=lon',
    '-oo',
    'Y_POSSIBLE_NAMES=lat',
    '-oo',
    'KEEP_GEOM_COLUMNS=NO',
    '-oo',
    'AUTODETECT_TYPE=YES',
    '-gt',
    '65536',
  ]);
  rmSync(csv);
  console.log(`generated ${points} points in ${((Date.now() - started) / 1000).toFixed(1)} s: ${(statSync(input).size / 1e6).toFixed(0)} MB`);
}

const formats = [
  // The API writes RFC 7946 GeoJSON (docs/decisions.md): ogr2ogr is asked for the same file.
  { id: 'GeoJSON', ext: 'geojson', ogr2ogr: ['-lco', 'RFC7946=YES'] },
  { id: 'FlatGeobuf', ext: 'fgb', ogr2ogr: [] },
  { id: 'GPKG', ext: 'gpkg', ogr2ogr: [] },
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const min = (xs: number[]) => Math.min(...xs);
const fmt = (xs: number[]) => xs.map((x) => x.toFixed(2)).join('/');

/** Wall and CPU seconds of the ogr2ogr CLI (CPU through /usr/bin/time when present). */
function timeOgr2ogr(args: string[]): { wall: number; cpu: number | null } {
  const timeBin = existsSync('/usr/bin/time') ? '/usr/bin/time' : null;
  const t = process.hrtime.bigint();
  const r = timeBin ? spawnSync(timeBin, ['-f', '@@%U %S', 'ogr2ogr', ...args], { encoding: 'utf8' }) : spawnSync('ogr2ogr', args, { encoding: 'utf8' });
  const wall = Number(process.hrtime.bigint() - t) / 1e9;
  if (r.status !== 0) throw new Error(`ogr2ogr failed: ${r.stderr}`);
  const m = /@@([\d.]+) ([\d.]+)/.exec(r.stderr ?? '');
  return { wall, cpu: m ? Number(m[1]) + Number(m[2]) : null };
}

async function main() {
  await generate();
  console.log(`GDAL: ${execFileSync('ogr2ogr', ['--version'], { encoding: 'utf8' }).trim()}; ${points} points; ${runs} runs each, alternating`);
  console.log('Ratios are convertDataset / ogr2ogr; the machine is shared, so min wall time and CPU time are the fairer figures.');
  for (const f of formats) {
    const ogr = { wall: [] as number[], cpu: [] as number[] };
    const conv = { wall: [] as number[], cpu: [] as number[] };
    const sizes = { ogr: 0, conv: 0 };
    for (let i = 0; i < runs; i++) {
      const ogrOut = path.join(root, `ogr2ogr-out.${f.ext}`);
      rmSync(ogrOut, { force: true });
      const o = timeOgr2ogr(['-f', f.id, ...f.ogr2ogr, ogrOut, input]);
      ogr.wall.push(o.wall);
      if (o.cpu !== null) ogr.cpu.push(o.cpu);
      sizes.ogr = statSync(ogrOut).size;
      rmSync(ogrOut, { force: true });

      const convDir = path.join(root, 'convert-out');
      rmSync(convDir, { recursive: true, force: true });
      const cpu0 = process.cpuUsage();
      const t = process.hrtime.bigint();
      const result = await convertDataset(datasetAt(input), { outputFormat: f.id }, convDir);
      conv.wall.push(Number(process.hrtime.bigint() - t) / 1e9);
      const cpu = process.cpuUsage(cpu0);
      conv.cpu.push((cpu.user + cpu.system) / 1e6);
      sizes.conv = result.size;
      rmSync(convDir, { recursive: true, force: true });
    }
    const wallRatio = min(conv.wall) / min(ogr.wall);
    const cpuRatio = ogr.cpu.length ? median(conv.cpu) / median(ogr.cpu) : NaN;
    console.log(
      `${f.id.padEnd(11)} wall min ${min(ogr.wall).toFixed(2)} s vs ${min(conv.wall).toFixed(2)} s → ${wallRatio.toFixed(3)}` +
        ` | wall median ${median(ogr.wall).toFixed(2)} vs ${median(conv.wall).toFixed(2)} → ${(median(conv.wall) / median(ogr.wall)).toFixed(3)}` +
        ` | cpu median ${ogr.cpu.length ? median(ogr.cpu).toFixed(2) : '?'} vs ${median(conv.cpu).toFixed(2)} → ${cpuRatio.toFixed(3)}` +
        ` | ${wallRatio <= 1.15 ? 'OK' : 'SLOW'}` +
        `\n            runs wall ogr2ogr ${fmt(ogr.wall)} / convert ${fmt(conv.wall)}; sizes ${(sizes.ogr / 1e6).toFixed(1)} / ${(sizes.conv / 1e6).toFixed(1)} MB`,
    );
  }
}

await main();
