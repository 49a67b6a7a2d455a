import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { download } from '../connectors/shared/http/download.js';

/**
 * `npm run bench:download`: the connectors' HTTP download (connectors/shared/http/download.ts, what a
 * url, http or STAC extract runs: fetch through the outbound policy, size limit and progress,
 * streamed to disk) against curl, on one file served by a separate process over loopback.
 * BENCH_DOWNLOAD_MB (default 500) sizes the file; BENCH_ROUNDS (default 4) the rounds.
 */
const megabytes = Number(process.env.BENCH_DOWNLOAD_MB ?? 500);
const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
const dir = path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'bench', 'download');
rmSync(dir, { recursive: true, force: true });
mkdirSync(path.join(dir, 'work'), { recursive: true });
const source = path.join(dir, 'source.bin');
await run('head', ['-c', `${megabytes}M`, '/dev/urandom'], source);

const serverCode = `const http = require('http'), fs = require('fs');
http.createServer((req, res) => {
  res.writeHead(200, { 'content-length': fs.statSync(process.argv[1]).size });
  fs.createReadStream(process.argv[1], { highWaterMark: 1 << 20 }).pipe(res);
}).listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;
const server = spawn(process.execPath, ['-e', serverCode, source], { stdio: ['ignore', 'pipe', 'inherit'] });
const port = await new Promise<string>((resolve) => server.stdout!.once('data', (d) => resolve(String(d).trim())));
const url = `http://127.0.0.1:${port}/source.bin`;
const log = { info() {}, debug() {}, warn() {}, error() {}, child: () => log } as never;

function run(command: string, args: string[], stdout?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', `"$0" "$@"${stdout ? ` > '${stdout}'` : ''}`, command, ...args], { stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited with ${code}`))));
  });
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return (performance.now() - start) / 1000;
}

const curlTimes: number[] = [];
const serviceTimes: number[] = [];
for (let round = 0; round < rounds; round++) {
  // Alternating order, so a load that comes and goes hits both alike.
  const sides = [
    async () => curlTimes.push(await timed(() => run('curl', ['-sf', '-o', path.join(dir, 'curl.bin'), url]))),
    async () => {
      rmSync(path.join(dir, 'work'), { recursive: true, force: true });
      mkdirSync(path.join(dir, 'work'));
      const signal = new AbortController().signal;
      serviceTimes.push(await timed(() => download({ url }, { signal, log, workDir: path.join(dir, 'work'), maxBytes: 1e12, progress: () => undefined })));
    },
  ];
  for (const side of round % 2 ? sides.reverse() : sides) await side();
}
server.kill();
const best = (xs: number[]) => Math.min(...xs);
const bytes = statSync(source).size;
console.log(`${megabytes} MB over loopback, ${rounds} rounds (best, all):`);
console.log(`| | seconds | MB/s | ratio |\n|---|---|---|---|`);
console.log(
  `| curl (baseline) | ${best(curlTimes).toFixed(2)} (${curlTimes.map((t) => t.toFixed(2)).join(', ')}) | ${(bytes / 1e6 / best(curlTimes)).toFixed(0)} | |`,
);
console.log(
  `| connectors/shared/http/download.ts | ${best(serviceTimes).toFixed(2)} (${serviceTimes.map((t) => t.toFixed(2)).join(', ')}) | ${(bytes / 1e6 / best(serviceTimes)).toFixed(0)} | ${(best(serviceTimes) / best(curlTimes)).toFixed(2)} |`,
);
rmSync(dir, { recursive: true, force: true });
