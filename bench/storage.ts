import { CreateBucketCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { S3FileStore } from '../platform/s3-file-store.js';
import { s3ServerUnavailable, startS3Server } from '../devservers/s3/server.js';
import { pointsFile } from './points.js';

/**
 * `npm run bench:storage`: how GDAL should read a dataset kept in object storage (moto's S3 on
 * loopback; installed by devservers/s3/install.sh). For a GeoPackage and a GeoJSON of
 * BENCH_POINTS points, each converted to FlatGeobuf by ogr2ogr, best of BENCH_ROUNDS:
 *   local      the file already on this disk (the floor: a one-machine install, or a warm cache)
 *   download   S3FileStore.local() into an empty cache, then ogr2ogr on the local copy
 *   vsis3      ogr2ogr reading /vsis3/bucket/key directly (HTTP range requests)
 * Prints times and ratios against `local`. The choice is recorded in docs/decisions.md.
 */
const POINTS = Number(process.env.BENCH_POINTS ?? 200_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const run = promisify(execFile);

const unavailable = s3ServerUnavailable();
if (unavailable) {
  console.error(unavailable);
  process.exit(1);
}
const dir = path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'bench', 'storage');
mkdirSync(dir, { recursive: true });
const gpkg = pointsFile(path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'bench', 'files'), POINTS);
const geojson = path.join(dir, `points-${POINTS}.geojson`);
rmSync(geojson, { force: true });
await run('ogr2ogr', ['-f', 'GeoJSON', geojson, gpkg]);

const s3 = await startS3Server();
const bucket = 'geoflow-bench';
const credentials = { accessKeyId: s3.writer.access_key, secretAccessKey: s3.writer.secret_key };
const client = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials });
await client.send(new CreateBucketCommand({ Bucket: bucket }));
const gdalEnv = {
  ...process.env,
  AWS_S3_ENDPOINT: new URL(s3.endpoint).host,
  AWS_HTTPS: 'NO',
  AWS_VIRTUAL_HOSTING: 'FALSE',
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: credentials.accessKeyId,
  AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
};

const best = (times: number[]) => Math.min(...times);
const rows: string[] = [];
try {
  for (const source of [gpkg, geojson]) {
    const name = path.basename(source);
    const owner = 'ws_bench1';
    const key = `workspaces/${owner}/dataset/${name}`;
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: readFileSync(source) }));
    const out = path.join(dir, 'out.fgb');
    const convert = async (input: string, env: NodeJS.ProcessEnv = process.env) => {
      rmSync(out, { force: true });
      await run('ogr2ogr', ['-f', 'FlatGeobuf', out, input], { env });
    };
    const times = { local: [] as number[], download: [] as number[], vsis3: [] as number[] };
    for (let r = 0; r < ROUNDS; r += 1) {
      let t = performance.now();
      await convert(source);
      times.local.push(performance.now() - t);

      const cacheDir = path.join(dir, `cache-${r}`);
      rmSync(cacheDir, { recursive: true, force: true });
      const store = new S3FileStore({
        bucket,
        prefix: '',
        endpoint: s3.endpoint,
        region: 'us-east-1',
        forcePathStyle: true,
        credentials,
        cacheDir,
        cacheBytes: 1024 ** 3,
      });
      t = performance.now();
      const local = path.join(await store.local(owner, 'dataset'), name);
      await convert(local);
      times.download.push(performance.now() - t);
      rmSync(cacheDir, { recursive: true, force: true });

      t = performance.now();
      await convert(`/vsis3/${bucket}/${key}`, gdalEnv);
      times.vsis3.push(performance.now() - t);
    }
    const base = best(times.local);
    rows.push(
      `${name} (${(statSync(source).size / 1e6).toFixed(1)} MB): local ${base.toFixed(0)} ms; download+local ${best(times.download).toFixed(0)} ms (${(best(times.download) / base).toFixed(2)}×); ` +
        `/vsis3/ ${best(times.vsis3).toFixed(0)} ms (${(best(times.vsis3) / base).toFixed(2)}×)`,
    );
  }
} finally {
  await s3.stop();
}
console.log(`\n${POINTS} points → FlatGeobuf by ogr2ogr, best of ${ROUNDS}, ratios against the file on local disk:`);
for (const row of rows) console.log(`  ${row}`);
