import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { Agent, fetch } from 'undici';
import { startStack, uploadWithCurl } from '../scripts/stack.js';
import { generatedGpkg, pointsFile } from './points.js';
import { treeRss } from './processes.js';

/**
 * `npm run bench:scale` (issue 22): datasets as large as GIS teams have, through the whole service
 * (API, Temporal, worker as separate processes), each row beside the same work done by GDAL's own
 * tools in the same run on the same machine:
 * - points at 1M, 4M and 10M features (id, name, value) and a polygon layer of 1M features (50
 *   vertices, 20 attributes), made with GDAL;
 * - Workspace upload, then convert to GPKG, FlatGeobuf, Shapefile, GeoJSON and CSV, against
 *   ogr2ogr (plus zip for the Shapefile, which the API hands out as one ZIP);
 * - a Job url → PostGIS without and with an output format (GPKG), against curl + ogr2ogr (+ a
 *   GPKG ogr2ogr) + psql;
 * - GeoParquet (issue 35): convert to GeoParquet against ogr2ogr to FlatGeobuf (the fastest
 *   format ogr2ogr writes here), the GeoParquet upload (stream + inspect + the GeoPackage copy)
 *   against the GeoPackage's upload, converts of the GeoParquet upload to GPKG and FlatGeobuf
 *   against ogr2ogr from the GeoPackage, and a Job url (.parquet) → PostGIS against the script
 *   from the GeoPackage;
 * with the time ratio and the peak resident memory of the worker (with its GDAL child processes)
 * and of the API during the row, beside their memory at rest.
 *
 * The machine may be shared: each row's baseline and service run back to back, in alternating
 * order (so a load that comes and goes hits both alike), each after a `sync` and with the row's
 * input read once beforehand (so neither pays for the other's writes or a cold file cache), and
 * each row prints the 1-minute load average at its start.
 *
 * Choosing what runs (a full run takes hours; sizes can be run one after another):
 * - BENCH_SCALE_POINTS=1000000,4000000 and BENCH_SCALE_POLYGONS=0 choose the datasets;
 * - BENCH_SCALE_ROWS=upload,convert,job,geoparquet chooses the kinds of rows (default all four; a
 *   convert needs the upload), BENCH_SCALE_FORMATS=GPKG,CSV the convert formats;
 * - BENCH_SCALE_REPEAT=3 runs each row three times (noise shows as spread);
 * - BENCH_SCALE_DIVISOR=100 divides every size by 100 (a quick run while developing);
 * - BENCH_SCALE_KEEP=1 keeps the generated datasets (else they are removed at the end).
 */
const divisor = Number(process.env.BENCH_SCALE_DIVISOR ?? 1);
const pointSizes = (process.env.BENCH_SCALE_POINTS ?? '1000000,4000000,10000000')
  .split(',')
  .map(Number)
  .filter((n) => n > 0)
  .map((n) => Math.max(1, Math.round(n / divisor)));
const polygonCount = Math.round(Number(process.env.BENCH_SCALE_POLYGONS ?? 1_000_000) / divisor);
const kinds = new Set((process.env.BENCH_SCALE_ROWS ?? 'upload,convert,job,geoparquet').split(',').map((k) => k.trim()));
const repeat = Math.max(1, Number(process.env.BENCH_SCALE_REPEAT ?? 1));
const keep = process.env.BENCH_SCALE_KEEP === '1';
/*
 * The service writes with OGR_SQLITE_SYNCHRONOUS=OFF (geo/gdal/translate.ts: a half-written
 * output is removed anyway), so the baseline ogr2ogr gets the same setting: without it SQLite
 * syncs the GeoPackage to disk at every commit, and ogr2ogr alone was the slower one (0.73×).
 */
const ogr2ogr = 'ogr2ogr --config OGR_SQLITE_SYNCHRONOUS OFF';
const allFormats = [
  { id: 'GPKG', ext: 'gpkg', args: [] as string[] },
  { id: 'FlatGeobuf', ext: 'fgb', args: [] },
  { id: 'ESRI Shapefile', ext: 'shp', args: ['-lco', 'ENCODING=UTF-8'] },
  // The API writes RFC 7946 GeoJSON and CSV with WKT geometry (docs/decisions.md): ogr2ogr is asked for the same.
  { id: 'GeoJSON', ext: 'geojson', args: ['-lco', 'RFC7946=YES'] },
  { id: 'CSV', ext: 'csv', args: ['-lco', 'GEOMETRY=AS_WKT'] },
];
const wantedFormats = process.env.BENCH_SCALE_FORMATS?.split(',').map((f) => f.trim().toLowerCase());
const formats = allFormats.filter((f) => !wantedFormats || wantedFormats.includes(f.id.toLowerCase()) || wantedFormats.includes(f.ext));

/** 1M polygons of 50 vertices (a 49-step circle, closed) with 20 attributes, by GDAL's SQLite dialect. */
function polygonsFile(dir: string, count: number): string {
  const attributes = Array.from({ length: 18 }, (_, k) =>
    k % 3 === 0 ? `(i * ${k + 7}) % 1000 AS a${k}` : k % 3 === 1 ? `((i * ${k + 3}) % 997) / 7.0 AS a${k}` : `'value ' || ((i + ${k}) % 503) AS a${k}`,
  );
  return generatedGpkg(path.join(dir, `polygons-${count}.gpkg`), {
    what: `${count} polygons`,
    layer: 'polygons',
    geometryType: 'POLYGON',
    sql: `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})
     SELECT i AS id, 'parcel ' || i AS name, ${attributes.join(', ')},
            MakePolygon(MakeCircle(-180 + (i % 3600) / 10.0, -80 + (i / 3600) * 0.05, 0.02, 4326, ${360 / 49})) AS geom FROM n`,
  });
}

/** Samples the peak tree memory of the given processes every 250 ms while work runs. */
async function peaks<T>(pids: Record<string, number>, work: () => Promise<T>): Promise<{ result: T; peak: Record<string, number> }> {
  const names = Object.keys(pids);
  const peak: Record<string, number> = Object.fromEntries(names.map((k) => [k, 0]));
  const sample = () =>
    treeRss(names.map((n) => pids[n]!)).forEach((bytes, i) => {
      peak[names[i]!] = Math.max(peak[names[i]!]!, bytes);
    });
  const timer = setInterval(sample, 250);
  try {
    sample();
    const result = await work();
    sample();
    return { result, peak };
  } finally {
    clearInterval(timer);
  }
}

const MB = (n: number) => `${Math.round(n / (1024 * 1024))}`;
const s = (ms: number) => (ms / 1000).toFixed(1);

const work = path.resolve('.data/bench/scale-files');
const datasets = [
  ...pointSizes.map((n) => ({ label: `${n.toLocaleString('en')} points`, file: pointsFile(work, n), features: n })),
  ...(polygonCount > 0
    ? [{ label: `${polygonCount.toLocaleString('en')} polygons (50 vertices, 20 attributes)`, file: polygonsFile(work, polygonCount), features: polygonCount }]
    : []),
];

/*
 * The Jobs' Source files are served by a process of their own: this one samples /proc every 250 ms
 * (synchronous reads of every process's stat, slow on a busy machine), which would stall a
 * download it served, the service's and the script's alike.
 */
const fileServerCode = `const http = require('http'), fs = require('fs'), path = require('path');
const dir = process.argv[1];
const server = http.createServer((req, res) => {
  const file = path.join(dir, path.basename((req.url || '').split('?')[0]));
  if (!fs.existsSync(file)) return void res.writeHead(404).end();
  res.writeHead(200, { 'content-type': 'application/geopackage+sqlite3', 'content-length': fs.statSync(file).size });
  fs.createReadStream(file).pipe(res);
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));`;
const files = spawn(process.execPath, ['-e', fileServerCode, work], { stdio: ['ignore', 'pipe', 'inherit'] });
const filePort = await new Promise<string>((resolve) => files.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())));
const fileBase = `http://127.0.0.1:${filePort}`;
process.on('exit', () => files.kill());

const stack = await startStack(
  'scale',
  // Big files: a Workspace upload limit that lets 10M points in (the Job input limit's default already does).
  { SVC_MAX_UPLOAD_MB: '8192' },
  {
    scopes: ['workspaces:read', 'workspaces:write', 'workspaces:run', 'jobs:read', 'jobs:write', 'jobs:run', 'sources:write', 'destinations:write'],
    databases: ['target'],
  },
);
const targetUrl = new URL(stack.databaseUrlOf('target'));
const pgConnection = `PG:host=${targetUrl.hostname} port=${targetUrl.port} dbname=target user=${decodeURIComponent(targetUrl.username)} password=${decodeURIComponent(targetUrl.password)}`;
/*
 * A convert answers when it is done: 10M points to a GeoPackage took over 300 s on a loaded
 * machine, the default wait for response headers, so the bench waits as long as the service does.
 */
const patient = new Agent({ headersTimeout: 0, bodyTimeout: 0 });
const api = async (method: string, url: string, body?: unknown) => {
  const res = await fetch(`${stack.base}${url}`, {
    dispatcher: patient,
    method,
    headers: { authorization: `Bearer ${stack.token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? null : ((await res.json()) as any);
};
const pids = { worker: stack.workerPid!, api: stack.apiPid };
const [workerRest, apiRest] = treeRss([stack.workerPid!, stack.apiPid]);
const rest = { worker: workerRest!, api: apiRest! };

const rows: string[] = [];
const header = ['| row | load | service | baseline | ratio | worker peak MB | API peak MB | baseline peak MB |', '|---|---|---|---|---|---|---|---|'];
const row = (what: string, load: number, service: number, baseline: number, peak: Record<string, number>, baselinePeak: number) => {
  const line = `| ${what} | ${load.toFixed(1)} | ${s(service)} s | ${s(baseline)} s | ${(service / baseline).toFixed(2)} | ${MB(peak.worker!)} | ${MB(peak.api!)} | ${MB(baselinePeak)} |`;
  rows.push(line);
  console.log(line);
};
/**
 * Times a baseline shell command by /usr/bin/time (its own clock, whatever this process is doing),
 * with the peak memory of its process tree.
 */
async function baseline(command: string): Promise<{ ms: number; peak: number }> {
  const timing = path.join(work, 'time.txt');
  const child = execFile('/usr/bin/time', ['-f', '%e', '-o', timing, 'bash', '-c', command]);
  let stderr = '';
  child.stderr?.on('data', (chunk) => (stderr += chunk));
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, treeRss([child.pid!])[0]!)), 250);
  await new Promise<void>((resolve, reject) =>
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command}: exit ${code}: ${stderr.slice(0, 2000)}`)))),
  );
  clearInterval(timer);
  return { ms: Number(readFileSync(timing, 'utf8').trim().split('\n').pop()) * 1000, peak };
}

/** Times the service's side of a row, with the peak memory of the worker and the API. */
async function service<T>(work: () => Promise<T>): Promise<{ ms: number; result: T; peak: Record<string, number> }> {
  const t = performance.now();
  const { result, peak } = await peaks(pids, work);
  return { ms: performance.now() - t, result, peak };
}

/*
 * Each side also starts with the same empty page cache, where the bench may empty it (as root).
 * On a virtual machine, a big write is only as fast as the kernel finds pages for it: with the
 * cache full of earlier outputs (a Workspace keeps its outputs; the baseline deletes its own
 * before each run, handing its pages straight back) the same ogr2ogr write of 1.3 GB measured
 * 15.2 s with pages at hand and 19.2 s without, its kernel time 1.4 s against 4.1 s, all of it in
 * copying into new page-cache pages (perf: copy_folio_from_iter_atomic 7 % of samples against 1 %).
 */
let cacheNote = false;
function dropPageCache(): void {
  try {
    writeFileSync('/proc/sys/vm/drop_caches', '1');
  } catch {
    if (!cacheNote) console.log('(the page cache cannot be emptied between sides here: run as root for even conditions)');
    cacheNote = true;
  }
}

/** Both sides of a row, in alternating order from one row to the next; the load average at the start. */
let order = 0;
async function measure<T>(
  what: string,
  side: { service: () => Promise<T>; baseline: () => Promise<{ ms: number; peak: number }>; input?: string },
): Promise<T> {
  let result: T | undefined;
  // Before each side, untimed: what the previous side wrote is flushed to disk (neither side pays
  // for writing back the other's gigabytes), and the row's input is read once (whichever side
  // came first used to pay for reading it from disk: a 10M-point Job's extract took 20.2 s first
  // and 8.5 s second, a 4M-point one 7.4 s against 2.1 s once warmed).
  const warm = () => {
    execFileSync('sync');
    dropPageCache();
    if (side.input) execFileSync('cat', [side.input], { stdio: ['ignore', 'ignore', 'ignore'] });
  };
  for (let i = 0; i < repeat; i++) {
    const load = loadavg()[0]!;
    let svc: Awaited<ReturnType<typeof service<T>>>;
    let base: { ms: number; peak: number };
    if (order++ % 2 === 0) {
      warm();
      base = await side.baseline();
      warm();
      svc = await service(side.service);
    } else {
      warm();
      svc = await service(side.service);
      warm();
      base = await side.baseline();
    }
    result = svc.result;
    row(what, load, svc.ms, base.ms, svc.peak, base.peak);
  }
  return result!;
}

const out = path.join(work, 'out');
/** A baseline command run in an empty output folder. */
const inFreshOut = (command: string) => {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  return baseline(command);
};

/** The Run's steps and how long each took (from the Run record), for where a Job's time goes. */
const stepTimes = (run: { steps: { name: string; duration_ms: number | null }[] }) =>
  run.steps.map((st) => `${st.name} ${s(st.duration_ms ?? 0)} s`).join(', ');

/** Runs a Job and waits for its Run to succeed; checks the rows that reached the table. */
async function runJob(jobId: string, table: string, features: number) {
  let seen = await api('POST', `/api/v1/jobs/${jobId}/run`);
  while (seen.status !== 'succeeded') {
    if (seen.status === 'failed' || seen.status === 'cancelled') throw new Error(`Run ${seen.id} ${seen.status}: ${JSON.stringify(seen.error)}`);
    await new Promise((r) => setTimeout(r, 200));
    seen = await api('GET', `/api/v1/jobs/${jobId}/runs/${seen.id}`);
  }
  const rowsIn = execFileSync('psql', [targetUrl.toString(), '-qAtc', `SELECT count(*) FROM ${table}`])
    .toString()
    .trim();
  if (Number(rowsIn) !== features) throw new Error(`${table} holds ${rowsIn} rows, expected ${features} (Run ${seen.id})`);
  console.log(`    Run ${seen.id}: ${stepTimes(seen)}`);
  return seen;
}

/** The service's upload of a file, timed like a baseline (the API's tree for memory). */
async function serviceUpload(file: string, keep: (ws: { id: string }) => void): Promise<{ ms: number; peak: number }> {
  const { ms, result, peak } = await service(() => uploadWithCurl(stack.base, stack.token, file));
  keep(result);
  return { ms, peak: peak.api! };
}

/**
 * The GeoParquet rows of a dataset (issue 35): its GeoParquet is the service's own output, kept
 * beside the GeoPackage so the Job's Source can fetch it.
 */
async function geoparquetRows(d: { file: string; features: number }, size: string, destinationId: string) {
  const gpkgWs = await uploadWithCurl(stack.base, stack.token, d.file);
  const parquet = d.file.replace(/\.gpkg$/, '.parquet');
  await measure(`${size}: convert to GeoParquet (vs ogr2ogr to FlatGeobuf, its fastest format)`, {
    service: () => api('POST', `/api/v1/workspaces/${gpkgWs.id}/convert`, { output_format: 'GeoParquet' }),
    baseline: () => inFreshOut(`${ogr2ogr} -f FlatGeobuf '${out}/ogr.fgb' '${d.file}'`),
  });
  execFileSync('curl', ['-sf', '-H', `Authorization: Bearer ${stack.token}`, '-o', parquet, `${stack.base}/api/v1/workspaces/${gpkgWs.id}/download`]);
  await api('DELETE', `/api/v1/workspaces/${gpkgWs.id}`).catch(() => undefined);
  const parquetSize = `${(statSync(parquet).size / 1e6).toFixed(0)} MB`;
  const drop = (ws?: { id: string }) => (ws ? api('DELETE', `/api/v1/workspaces/${ws.id}`).catch(() => undefined) : undefined);
  let parquetWs: { id: string } | undefined;
  let gpkgAgain: { id: string } | undefined;
  await measure(`${size}: upload GeoParquet (${parquetSize}) → inspect (vs the GeoPackage's upload)`, {
    service: async () => {
      await drop(parquetWs);
      parquetWs = await uploadWithCurl(stack.base, stack.token, parquet);
      const ws = await api('GET', `/api/v1/workspaces/${parquetWs.id}`);
      if (ws.layers[0].feature_count !== d.features) throw new Error(`inspect says ${ws.layers[0].feature_count} features`);
    },
    baseline: async () => {
      await drop(gpkgAgain);
      return serviceUpload(d.file, (ws) => (gpkgAgain = ws));
    },
    input: parquet,
  });
  await drop(gpkgAgain);
  for (const f of [
    { id: 'GPKG', ext: 'gpkg' },
    { id: 'FlatGeobuf', ext: 'fgb' },
  ]) {
    await measure(`${size}: convert GeoParquet upload to ${f.id} (vs ogr2ogr from the GeoPackage)`, {
      service: () => api('POST', `/api/v1/workspaces/${parquetWs!.id}/convert`, { output_format: f.id }),
      baseline: () => inFreshOut(`${ogr2ogr} -f '${f.id}' '${out}/ogr.${f.ext}' '${d.file}'`),
    });
  }
  await drop(parquetWs);
  const source = await api('POST', '/api/v1/sources', {
    name: `${size} parquet`,
    type: 'url',
    configuration: { url: `${fileBase}/${path.basename(parquet)}` },
  });
  const job = await api('POST', '/api/v1/jobs', {
    name: `${size} parquet → PostGIS`,
    source_id: source.id,
    destination_id: destinationId,
    destination_target: { table: 'bench_parquet', write_mode: 'replace' },
  });
  await measure(`${size}: Job url (.parquet) → PostGIS (vs the script from the GeoPackage)`, {
    service: () => runJob(job.id, 'bench_parquet', d.features),
    baseline: () =>
      inFreshOut(
        `curl -sf -o '${out}/in.gpkg' '${fileBase}/${path.basename(d.file)}' && ogr2ogr -f PostgreSQL '${pgConnection}' '${out}/in.gpkg' -nln base_parquet -overwrite -lco GEOMETRY_NAME=geom && psql '${targetUrl.toString()}' -qAtc 'SELECT count(*) FROM base_parquet' >/dev/null`,
      ),
    input: parquet,
  });
  if (!keep) rmSync(parquet, { force: true });
}

try {
  const destination = await api('POST', '/api/v1/destinations', {
    name: 'target',
    type: 'postgis',
    configuration: {
      host: targetUrl.hostname,
      port: Number(targetUrl.port),
      database: 'target',
      username: decodeURIComponent(targetUrl.username),
      password: decodeURIComponent(targetUrl.password),
      ssl_mode: 'disable',
    },
  });
  console.log(`\nat rest: worker ${MB(rest.worker)} MB, API ${MB(rest.api)} MB\n`);
  console.log(header.join('\n'));
  for (const d of datasets) {
    const size = `${d.label}, ${(statSync(d.file).size / 1e6).toFixed(0)} MB`;
    if (kinds.has('upload') || kinds.has('convert')) {
      // Upload: the service's upload (stream to disk + inspect) against copying the file.
      let ws: { id: string } | undefined;
      await measure(`${size}: upload`, {
        service: async () => {
          if (ws) await api('DELETE', `/api/v1/workspaces/${ws.id}`).catch(() => undefined);
          ws = await uploadWithCurl(stack.base, stack.token, d.file);
        },
        baseline: () => inFreshOut(`cp '${d.file}' '${out}/copy.gpkg'`),
        input: d.file,
      });
      if (kinds.has('convert')) {
        for (const f of formats) {
          const target = f.id === 'ESRI Shapefile' ? path.join(out, 'shp') : path.join(out, `ogr.${f.ext}`);
          const zip = f.id === 'ESRI Shapefile' ? ` && (cd '${target}' && zip -q -r ../ogr.zip .)` : '';
          await measure(`${size}: convert to ${f.id}`, {
            service: () => api('POST', `/api/v1/workspaces/${ws!.id}/convert`, { output_format: f.id }),
            baseline: () => inFreshOut(`${ogr2ogr} -f '${f.id}' ${f.args.join(' ')} '${target}' '${d.file}'${zip}`),
          });
        }
      }
      await api('DELETE', `/api/v1/workspaces/${ws!.id}`).catch(() => undefined);
    }
    if (kinds.has('geoparquet')) await geoparquetRows(d, size, destination.id);
    if (!kinds.has('job')) continue;

    const source = await api('POST', '/api/v1/sources', { name: d.label, type: 'url', configuration: { url: `${fileBase}/${path.basename(d.file)}` } });
    for (const outputFormat of [null, 'GPKG']) {
      const table = `bench_${outputFormat ? 'gpkg' : 'plain'}`;
      const job = await api('POST', '/api/v1/jobs', {
        name: `${d.label} ${table}`,
        source_id: source.id,
        destination_id: destination.id,
        destination_target: { table, write_mode: 'replace' },
        ...(outputFormat ? { output_format: outputFormat } : {}),
      });
      const download = `curl -sf -o '${out}/in.gpkg' '${fileBase}/${path.basename(d.file)}'`;
      const convert = outputFormat ? ` && ${ogr2ogr} -f GPKG '${out}/conv.gpkg' '${out}/in.gpkg'` : '';
      const load = `ogr2ogr -f PostgreSQL '${pgConnection}' '${out}/${outputFormat ? 'conv' : 'in'}.gpkg' -nln base_${table} -overwrite -lco GEOMETRY_NAME=geom`;
      const run = await measure(`${size}: Job url → PostGIS${outputFormat ? ` (output ${outputFormat})` : ''}`, {
        service: async () => {
          let seen = await api('POST', `/api/v1/jobs/${job.id}/run`);
          while (seen.status !== 'succeeded') {
            if (seen.status === 'failed' || seen.status === 'cancelled') throw new Error(`Run ${seen.id} ${seen.status}: ${JSON.stringify(seen.error)}`);
            await new Promise((r) => setTimeout(r, 200));
            seen = await api('GET', `/api/v1/jobs/${job.id}/runs/${seen.id}`);
          }
          const rowsIn = execFileSync('psql', [targetUrl.toString(), '-qAtc', `SELECT count(*) FROM ${table}`])
            .toString()
            .trim();
          if (Number(rowsIn) !== d.features) throw new Error(`${table} holds ${rowsIn} rows, expected ${d.features} (Run ${seen.id})`);
          console.log(`    Run ${seen.id}: ${stepTimes(seen)}`);
          return seen;
        },
        baseline: () => inFreshOut(`${download}${convert} && ${load} && psql '${targetUrl.toString()}' -qAtc 'SELECT count(*) FROM base_${table}' >/dev/null`),
        input: d.file,
      });
      void run;
    }
  }
  console.log(
    `\nbench:scale, ${new Date().toISOString()}, ${divisor === 1 ? 'full sizes' : `sizes divided by ${divisor}`}; at rest: worker ${MB(rest.worker)} MB, API ${MB(rest.api)} MB`,
  );
  console.log(header.join('\n'));
  for (const line of rows) console.log(line);
} finally {
  files.kill();
  await stack.stop();
  rmSync(out, { recursive: true, force: true });
  if (!keep) for (const d of datasets) rmSync(d.file, { force: true });
}
