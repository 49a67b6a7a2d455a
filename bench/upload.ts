import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { startStack } from '../scripts/stack.js';

/**
 * `npm run bench:upload`: uploads a 200 MiB file and samples the API process's resident memory
 * (VmRSS) every 50 ms. Prints the growth over the idle baseline (aim: < 64 MiB): the upload is
 * streamed to disk, never held in memory.
 */
const SIZE_MIB = Number(process.env.BENCH_UPLOAD_MIB ?? 200);
const stack = await startStack('upload', { SVC_MAX_UPLOAD_MB: String(SIZE_MIB + 50) });
const work = path.join(stack.dir, 'files');
mkdirSync(work, { recursive: true });
const file = path.join(work, `raster-${SIZE_MIB}mib.tif`);

const rssMiB = (pid: number) => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(line.replace(/\D+/g, '')) / 1024;
};

try {
  if (!existsSync(file)) {
    // An uncompressed GeoTIFF of the wanted size: a real dataset the server inspects after upload.
    const side = Math.round(Math.sqrt((SIZE_MIB * 1024 * 1024) / 2));
    execFileSync(
      'gdal_create',
      [
        '-of',
        'GTiff',
        '-outsize',
        String(side),
        String(side),
        '-bands',
        '2',
        '-ot',
        'Byte',
        '-burn',
        '7',
        '-a_srs',
        'EPSG:3857',
        '-a_ullr',
        '0',
        '1000000',
        '1000000',
        '0',
        file,
      ],
      { stdio: 'inherit' },
    );
  }
  const bytes = statSync(file).size;
  // warm the route once with a small file so JIT and pools are in the baseline
  await new Promise((r) => setTimeout(r, 2000));
  const baseline = rssMiB(stack.apiPid);
  let peak = baseline;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(stack.apiPid))), 50);
  const started = performance.now();
  const curl = spawn('curl', [
    '-s',
    '-o',
    '/dev/null',
    '-w',
    '%{http_code}',
    '-H',
    `Authorization: Bearer ${stack.token}`,
    '-F',
    `file=@${file}`,
    `${stack.base}/api/v1/workspaces`,
  ]);
  let status = '';
  curl.stdout.on('data', (d) => (status += d));
  await new Promise((r) => curl.on('exit', r));
  clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  console.log(`\nuploaded ${(bytes / 1048576).toFixed(0)} MiB in ${seconds.toFixed(1)} s (HTTP ${status})`);
  console.log(
    `API resident memory: baseline ${baseline.toFixed(0)} MiB, peak ${peak.toFixed(0)} MiB, growth ${(peak - baseline).toFixed(1)} MiB (aim < 64 MiB)`,
  );
} finally {
  await stack.stop();
}
