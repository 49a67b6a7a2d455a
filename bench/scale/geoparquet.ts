import { execFileSync } from 'node:child_process';
import { rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { uploadWithCurl, type startStack } from '../../scripts/stack.js';
import { ogr2ogr, type Measurer } from './measure.js';
import type { BenchService } from '../service.js';

/** What the GeoParquet rows work with: the stack, its client, the measuring, where the Source files are served, and whether to keep them. */
export interface GeoParquetBench {
  stack: Awaited<ReturnType<typeof startStack>>;
  service: BenchService;
  measurer: Measurer;
  fileBase: string;
  keep: boolean;
}

/**
 * The GeoParquet rows of a dataset (issue 35): its GeoParquet is the service's own output, kept
 * beside the GeoPackage so the Job's Source can fetch it.
 */
export async function geoparquetRows(bench: GeoParquetBench, d: { file: string; features: number }, size: string, destinationId: string) {
  const { stack, fileBase } = bench;
  const { api, runJob, dropWorkspace: drop, baselineLoad } = bench.service;
  const { measure, inFreshOut, out } = bench.measurer;
  /** The service's upload of a file, timed like a baseline (the API's tree for memory). */
  async function serviceUpload(file: string, keep: (ws: { id: string }) => void): Promise<{ ms: number; peak: number }> {
    const { ms, result, peak } = await bench.measurer.service(() => uploadWithCurl(stack.base, stack.token, file));
    keep(result);
    return { ms, peak: peak.api! };
  }

  const gpkgWs = await uploadWithCurl(stack.base, stack.token, d.file);
  const parquet = d.file.replace(/\.gpkg$/, '.parquet');
  await measure(`${size}: convert to GeoParquet (vs ogr2ogr to FlatGeobuf, its fastest format)`, {
    service: () => api('POST', `/api/v1/workspaces/${gpkgWs.id}/convert`, { output_format: 'GeoParquet' }),
    baseline: () => inFreshOut(`${ogr2ogr} -f FlatGeobuf '${out}/ogr.fgb' '${d.file}'`),
  });
  execFileSync('curl', ['-sf', '-H', `Authorization: Bearer ${stack.token}`, '-o', parquet, `${stack.base}/api/v1/workspaces/${gpkgWs.id}/download`]);
  await drop(gpkgWs);
  const parquetSize = `${(statSync(parquet).size / 1e6).toFixed(0)} MB`;
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
    baseline: () => inFreshOut(`curl -sf -o '${out}/in.gpkg' '${fileBase}/${path.basename(d.file)}' && ${baselineLoad(`${out}/in.gpkg`, 'base_parquet')}`),
    input: parquet,
  });
  if (!bench.keep) rmSync(parquet, { force: true });
}
