import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { createBackup, pgProgram, runPgTool, tar } from '../application/backup.js';
import { restoreBackup } from '../application/restore.js';
import { loadConfig } from '../platform/config.js';
import { freePort, startPostgres } from '../scripts/local-services.js';
import { startStack, uploadWithCurl } from '../scripts/stack.js';
import { pointsFile } from './points.js';

/**
 * `npm run bench:backup`: npm run backup and npm run restore of a large data folder: Workspaces
 * holding bench:scale's point datasets (BENCH_BACKUP_POINTS, default 1M, 4M and 10M points, 2.2 GB;
 * kept in .data/bench/scale-files like bench:scale's) and BENCH_BACKUP_RUNS Runs (default 1,000,
 * across 20 Jobs) in the database; against the same work by hand in the same run (pg_dump + tar;
 * a new cluster + pg_restore + tar), with the archive's size.
 */
const sizes = (process.env.BENCH_BACKUP_POINTS ?? '1000000,4000000,10000000').split(',').map(Number).filter(Boolean);
const RUNS = Number(process.env.BENCH_BACKUP_RUNS ?? 1000);
const JOBS = 20;
const work = path.resolve('.data/bench/scale-files');
const scratch = path.resolve('.data/bench/backup-scratch');
rmSync(scratch, { recursive: true, force: true });
mkdirSync(scratch, { recursive: true });
chmodSync(scratch, 0o755);

const stack = await startStack(
  'backup',
  { SVC_MAX_UPLOAD_MB: '8192', SVC_JOB_TTL: '1440' },
  {
    scopes: ['workspaces:read', 'workspaces:write', 'jobs:read', 'jobs:write', 'jobs:run', 'sources:write', 'destinations:write'],
  },
);
const api = stack.call;
const seconds = (from: number) => (performance.now() - from) / 1000;
const mb = (bytes: number) => `${(bytes / 1048576).toLocaleString('en', { maximumFractionDigits: bytes < 10 * 1048576 ? 1 : 0 })} MB`;
/** A folder of the scratch space the postgres user can reach (a restored cluster lives in it). */
const folder = (prefix: string) => {
  const dir = mkdtempSync(path.join(scratch, prefix));
  chmodSync(dir, 0o755);
  return dir;
};
/**
 * Each side starts with the files out of the page cache (as root; else a line says so), so that
 * the side that runs second does not read what the first one left in memory.
 */
let cacheNote = false;
function coldCache(): void {
  try {
    spawnSync('sync');
    writeFileSync('/proc/sys/vm/drop_caches', '1');
  } catch {
    if (!cacheNote) console.log('(the page cache cannot be emptied between sides here: run as root for even conditions)');
    cacheNote = true;
  }
}

try {
  // ---- The data folder: Workspaces of big datasets, and Runs in the database ------------------
  for (const n of sizes) {
    const file = pointsFile(work, n);
    await uploadWithCurl(stack.base, stack.token, file);
    console.log(`uploaded ${n.toLocaleString('en')} points (${mb(statSync(file).size)})`);
  }
  // Runs: one tiny GeoJSON delivered to a webhook on this process, so the events are what grows.
  const hook = createServer((req, res) => {
    if (req.method === 'POST') return void req.resume().on('end', () => res.writeHead(204).end());
    res
      .writeHead(200, { 'content-type': 'application/geo+json' })
      .end('{"type":"FeatureCollection","features":[{"type":"Feature","properties":{"a":1},"geometry":{"type":"Point","coordinates":[7,46]}}]}');
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}`;
  const source = await api('POST', '/api/v1/sources', { name: 'tiny', type: 'url', configuration: { url: `${hookUrl}/tiny.geojson` } });
  const destination = await api('POST', '/api/v1/destinations', { name: 'hook', type: 'webhook', configuration: { url: `${hookUrl}/hook` } });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: JOBS }, async (_, j) => {
      const job = await api('POST', '/api/v1/jobs', { name: `job ${j}`, source_id: source.id, destination_id: destination.id });
      for (let r = 0; r < RUNS / JOBS; r++) {
        const run = await api('POST', `/api/v1/jobs/${job.id}/run`);
        for (;;) {
          const state = await api('GET', `/api/v1/jobs/${job.id}/runs/${run.id}`);
          if (['succeeded', 'failed', 'cancelled'].includes(state.status)) break;
          await new Promise((res) => setTimeout(res, 100));
        }
      }
    }),
  );
  hook.close();
  console.log(`${RUNS} Runs in ${seconds(started).toFixed(0)} s`);

  const serverDir = path.join(stack.dir, 'server');
  const config = loadConfig({ ...process.env, SVC_DATA_DIR: serverDir, SVC_DATABASE_URL: stack.databaseUrl });
  const rows: string[] = [];
  const row = (what: string, service: number, baseline: number, size: string) =>
    rows.push(`| ${what} | ${service.toFixed(1)} s | ${baseline.toFixed(1)} s | ${(service / baseline).toFixed(2)} | ${size} |`);

  // ---- Backup, the service running; and the same by hand ----------------------------------------
  const archive = path.join(scratch, 'install.tar');
  const load = loadavg()[0]!.toFixed(1);
  coldCache();
  let t = performance.now();
  const backup = await createBackup(config, archive, { passphrase: 'benchmark passphrase' });
  const backupSeconds = seconds(t);
  coldCache();
  t = performance.now();
  const dump = path.join(scratch, 'by-hand.dump');
  await runPgTool(pgProgram('pg_dump'), config.databaseUrl, ['--format=custom', '--file', dump]);
  tar(['-cf', path.join(scratch, 'by-hand.tar'), '-C', serverDir, 'workspaces']);
  row('backup (pg_dump + tar of the Workspaces)', backupSeconds, seconds(t), `archive ${mb(backup.bytes)} (dump ${mb(backup.manifest.database.bytes)})`);
  rmSync(path.join(scratch, 'by-hand.tar'));

  // ---- Restore into an empty data folder (a new local cluster there); and the same by hand -------
  const into = folder('restored-');
  coldCache();
  t = performance.now();
  const restored = await restoreBackup(
    { archive, dataDir: into, databaseUrl: null, givenKey: null, passphrase: 'benchmark passphrase' },
    (env) => loadConfig(env),
    async (dir) => {
      const pg = await startPostgres(path.join(dir, 'pg'), await freePort(), ['geoflow']);
      return { url: pg.url('geoflow'), stop: () => pg.stop() };
    },
  );
  const restoreSeconds = seconds(t);
  const byHand = folder('by-hand-');
  coldCache();
  t = performance.now();
  const pg = await startPostgres(path.join(byHand, 'pg'), await freePort(), ['geoflow']);
  await runPgTool(pgProgram('pg_restore'), pg.url('geoflow'), ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', dump]);
  tar(['-xf', archive, '-C', byHand, '--strip-components=1', 'files']);
  pg.stop();
  row('restore (new cluster + pg_restore + untar)', restoreSeconds, seconds(t), `${restored.interrupted.length} Runs interrupted`);

  console.log(
    `\nBackup and restore of a data folder with ${sizes.map((n) => n.toLocaleString('en')).join(' + ')} points in Workspaces (${mb(backup.manifest.files.bytes)} in ${backup.manifest.files.objects} files) and ${backup.manifest.database.events.toLocaleString('en')} events (${RUNS} Runs); load average ${load} at the start:\n`,
  );
  console.log(['| | service | by hand | ratio | size |', '|---|---|---|---|---|', ...rows].join('\n'));
} finally {
  await stack.stop();
  rmSync(scratch, { recursive: true, force: true });
}
