import { rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { startStack, uploadWithCurl } from '../scripts/stack.js';
import { pointsFile } from './points.js';
import { treeRss } from './processes.js';
import { geoparquetRows } from './scale/geoparquet.js';
import { polygonsFile, startFileServer } from './scale/inputs.js';
import { MB, measurer, ogr2ogr } from './scale/measure.js';
import { benchService } from './service.js';

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
 *
 * bench/scale/: measure.ts times the two sides of a row, inputs.ts makes and serves the datasets,
 * geoparquet.ts holds the GeoParquet rows; bench/service.ts calls the service.
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

const work = path.resolve('.data/bench/scale-files');
const datasets = [
  ...pointSizes.map((n) => ({ label: `${n.toLocaleString('en')} points`, file: pointsFile(work, n), features: n })),
  ...(polygonCount > 0
    ? [{ label: `${polygonCount.toLocaleString('en')} polygons (50 vertices, 20 attributes)`, file: polygonsFile(work, polygonCount), features: polygonCount }]
    : []),
];

const files = await startFileServer(work);
const fileBase = files.base;

const stack = await startStack(
  'scale',
  // Big files: a Workspace upload limit that lets 10M points in (the Job input limit's default already does).
  { SVC_MAX_UPLOAD_MB: '8192' },
  {
    scopes: ['workspaces:read', 'workspaces:write', 'workspaces:run', 'jobs:read', 'jobs:write', 'jobs:run', 'sources:write', 'destinations:write'],
    databases: ['target'],
  },
);
const service = benchService(stack);
const { api, runJob, baselineLoad } = service;
const [workerStart, apiStart] = treeRss([stack.workerPid!, stack.apiPid]);

/*
 * The worker's rest is its idle size after one piece of each kind of work: a worker in service
 * has done some, and the first activity after a start grows it once (GDAL's drivers, the activity
 * modules, V8's heap: about 65 MB in the run of 9056888, which charged it all to the first row).
 * Both sizes are printed; each row's worker peak is given above the rest after the warm-up.
 */
async function warmUp(destinationId: string): Promise<void> {
  const features = 10_000;
  const file = pointsFile(work, features);
  const ws = await uploadWithCurl(stack.base, stack.token, file);
  for (const format of ['GeoParquet', 'GPKG']) await api('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: format });
  await service.dropWorkspace(ws);
  const source = await api('POST', '/api/v1/sources', { name: 'warm-up', type: 'url', configuration: { url: `${fileBase}/${path.basename(file)}` } });
  const job = await api('POST', '/api/v1/jobs', {
    name: 'warm-up',
    source_id: source.id,
    destination_id: destinationId,
    destination_target: { table: 'bench_warm_up', write_mode: 'replace' },
  });
  await runJob(job.id, 'bench_warm_up', features);
}

const destination = await service.createDestination();
await warmUp(destination.id).catch(async (err) => {
  files.stop();
  await stack.stop();
  throw err;
});
const [workerRest, apiRest] = treeRss([stack.workerPid!, stack.apiPid]);
const rest = { worker: workerRest!, api: apiRest! };
const restLine = `at start: worker ${MB(workerStart!)} MB, API ${MB(apiStart!)} MB; at rest after a warm-up (a small upload, two converts, a Job): worker ${MB(rest.worker)} MB, API ${MB(rest.api)} MB`;
const bench = measurer({ pids: { worker: stack.workerPid!, api: stack.apiPid }, work, repeat, rest });
const { header, rows, measure, inFreshOut, out } = bench;

try {
  console.log(`\n${restLine}\n`);
  console.log(header.join('\n'));
  for (const d of datasets) {
    const size = `${d.label}, ${(statSync(d.file).size / 1e6).toFixed(0)} MB`;
    if (kinds.has('upload') || kinds.has('convert')) {
      // Upload: the service's upload (stream to disk + inspect) against copying the file.
      let ws: { id: string } | undefined;
      await measure(`${size}: upload`, {
        service: async () => {
          await service.dropWorkspace(ws);
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
      await service.dropWorkspace(ws);
    }
    if (kinds.has('geoparquet')) await geoparquetRows({ stack, service, measurer: bench, fileBase, keep }, d, size, destination.id);
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
      await measure(`${size}: Job url → PostGIS${outputFormat ? ` (output ${outputFormat})` : ''}`, {
        service: () => runJob(job.id, table, d.features),
        baseline: () => inFreshOut(`${download}${convert} && ${baselineLoad(`${out}/${outputFormat ? 'conv' : 'in'}.gpkg`, `base_${table}`)}`),
        input: d.file,
      });
    }
  }
  console.log(`\nbench:scale, ${new Date().toISOString()}, ${divisor === 1 ? 'full sizes' : `sizes divided by ${divisor}`}; ${restLine}`);
  console.log(header.join('\n'));
  for (const line of rows) console.log(line);
} finally {
  files.stop();
  await stack.stop();
  rmSync(out, { recursive: true, force: true });
  if (!keep) for (const d of datasets) rmSync(d.file, { force: true });
}
