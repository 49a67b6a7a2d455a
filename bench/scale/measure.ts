import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { treeRss } from '../processes.js';

/*
 * How bench:scale measures a row: the service's side and a baseline shell command, back to back
 * in alternating order, each after a `sync` (and an emptied page cache where it may) with the
 * row's input read once, with the peak memory of the processes that did the work.
 */

export const MB = (n: number) => `${Math.round(n / (1024 * 1024))}`;
export const s = (ms: number) => (ms / 1000).toFixed(1);

/*
 * The service writes with OGR_SQLITE_SYNCHRONOUS=OFF (geo/gdal/translate.ts: a half-written
 * output is removed anyway), so the baseline ogr2ogr gets the same setting: without it SQLite
 * syncs the GeoPackage to disk at every commit, and ogr2ogr alone was the slower one (0.73×).
 */
export const ogr2ogr = 'ogr2ogr --config OGR_SQLITE_SYNCHRONOUS OFF';

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

export type Measurer = ReturnType<typeof measurer>;

/**
 * The measuring of one bench run: `pids` are the service's processes (worker, api), `work` the
 * folder baselines write in (its `out` folder, emptied before each), `repeat` how often each row runs.
 */
export function measurer(options: { pids: { worker: number; api: number }; work: string; repeat: number; rest: { worker: number; api: number } }) {
  const { pids, work, repeat, rest } = options;
  const rows: string[] = [];
  const header = [
    '| row | load | service | baseline | ratio | worker peak MB (rest + …) | API peak MB (rest + …) | baseline peak MB |',
    '|---|---|---|---|---|---|---|---|',
  ];
  const above = (peak: number, at: number) => `${MB(peak)} (${peak >= at ? '+' : '−'}${MB(Math.abs(peak - at))})`;
  const row = (what: string, load: number, service: number, baseline: number, peak: Record<string, number>, baselinePeak: number) => {
    const line = `| ${what} | ${load.toFixed(1)} | ${s(service)} s | ${s(baseline)} s | ${(service / baseline).toFixed(2)} | ${above(peak.worker!, rest.worker)} | ${above(peak.api!, rest.api)} | ${MB(baselinePeak)} |`;
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

  return { header, rows, out, service, measure, inFreshOut };
}
