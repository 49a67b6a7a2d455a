import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { createBackup, pgProgram, runPgTool, tar } from '../application/backup.js';
import { restoreBackup } from '../application/restore.js';
import { loadConfig } from '../platform/config.js';
import { startPostgres } from '../scripts/local-services.js';
import { freePort } from '../devservers/ports.js';
import { startStack, uploadWithCurl } from '../scripts/stack.js';
import { pointsFile } from './points.js';

/**
 * `npm run bench:backup`: npm run backup and npm run restore of a large data folder: Workspaces
 * holding bench:scale's point datasets (BENCH_BACKUP_POINTS, default 1M, 4M and 10M points, 2 GB;
 * kept in .data/bench/scale-files like bench:scale's) and BENCH_BACKUP_RUNS Runs (default 1,000,
 * across 20 Jobs) in the database; against the same work by hand in the same run (pg_dump + tar;
 * a new cluster + pg_restore + tar -x), BENCH_BACKUP_ROUNDS rounds (3) in alternating order, each
 * side from a cold page cache; with the archive's size.
 */
const sizes = (process.env.BENCH_BACKUP_POINTS ?? '1000000,4000000,10000000').split(',').map(Number).filter(Boolean);
const RUNS = Number(process.env.BENCH_BACKUP_RUNS ?? 1000);
const JOBS = 20;
const ROUNDS = Number(process.env.BENCH_BACKUP_ROUNDS ?? 3);
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
  const times = (xs: number[]) => xs.map((x) => x.toFixed(1)).join(' / ');
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;
  const row = (what: string, service: number[], baseline: number[], size: string) =>
    rows.push(`| ${what} | ${times(service)} s | ${times(baseline)} s | ${(median(service) / median(baseline)).toFixed(2)} | ${size} |`);
  /** Times `work` from a cold page cache. */
  const timed = async (work: () => Promise<unknown>) => {
    coldCache();
    const t = performance.now();
    await work();
    return seconds(t);
  };
  /** Both sides, ROUNDS times, the order alternating from one round to the next (neither always goes first). */
  const alternate = async (service: () => Promise<unknown>, byHand: () => Promise<unknown>) => {
    const times = { service: [] as number[], byHand: [] as number[] };
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) {
        times.service.push(await timed(service));
        times.byHand.push(await timed(byHand));
      } else {
        times.byHand.push(await timed(byHand));
        times.service.push(await timed(service));
      }
    }
    return times;
  };
  const load = loadavg()[0]!.toFixed(1);

  // ---- Backup, the service running; and the same by hand (pg_dump + tar) ----------------------
  const archive = path.join(scratch, 'install.tar');
  let backup: Awaited<ReturnType<typeof createBackup>> | undefined;
  const dump = path.join(scratch, 'by-hand.dump');
  const backups = await alternate(
    async () => {
      rmSync(archive, { force: true });
      backup = await createBackup(config, archive, { passphrase: 'benchmark passphrase' });
    },
    async () => {
      rmSync(dump, { force: true });
      await runPgTool(pgProgram('pg_dump'), config.databaseUrl, ['--format=custom', '--file', dump]);
      tar(['-cf', path.join(scratch, 'by-hand.tar'), '-C', serverDir, 'workspaces']);
    },
  );
  rmSync(path.join(scratch, 'by-hand.tar'), { force: true });
  row(
    'backup (pg_dump + tar of the Workspaces)',
    backups.service,
    backups.byHand,
    `archive ${mb(backup!.bytes)} (dump ${mb(backup!.manifest.database.bytes)})`,
  );

  // ---- Restore into an empty data folder (a new local cluster there); and the same by hand -------
  let interrupted = 0;
  const restores = await alternate(
    async () => {
      const into = folder('restored-');
      const restored = await restoreBackup({ archive, dataDir: into, databaseUrl: null, givenKey: null, passphrase: 'benchmark passphrase' }, async (dir) => {
        const pg = await startPostgres(path.join(dir, 'pg'), await freePort(), ['geoflow']);
        return { url: pg.url('geoflow'), stop: () => pg.stop() };
      });
      interrupted = restored.interrupted.length;
      rmSync(into, { recursive: true, force: true });
    },
    async () => {
      const byHand = folder('by-hand-');
      const pg = await startPostgres(path.join(byHand, 'pg'), await freePort(), ['geoflow']);
      await runPgTool(pgProgram('pg_restore'), pg.url('geoflow'), ['--no-owner', '--no-privileges', '--exit-on-error', '--single-transaction', dump]);
      tar(['-xf', archive, '-C', byHand, '--strip-components=1', 'files']);
      pg.stop();
      rmSync(byHand, { recursive: true, force: true });
    },
  );
  row('restore (new cluster + pg_restore + untar)', restores.service, restores.byHand, `${interrupted} Runs interrupted`);
  const manifest = backup!.manifest;

  console.log(
    `\nBackup and restore of a data folder with ${sizes.map((n) => n.toLocaleString('en')).join(' + ')} points in Workspaces (${mb(manifest.files.bytes)} in ${manifest.files.objects} files) and ${manifest.database.events.toLocaleString('en')} events (${RUNS} Runs); load average ${load} at the start:\n`,
  );
  console.log(['| | service (each round) | by hand | ratio of medians | size |', '|---|---|---|---|---|', ...rows].join('\n'));
} finally {
  await stack.stop();
  rmSync(scratch, { recursive: true, force: true });
}
