import path from 'node:path';
import { pointsFile } from './points.js';
import { startStack, uploadWithCurl } from '../scripts/stack.js';

/**
 * `npm run bench:preview`: preview latency through the API on a 1,000,000-point layer (the
 * convert bench's file) and a 30,000-point one, each uploaded once: data preview (limit 500),
 * spatial preview, then with a buffer pipeline stored, transform preview (limit 100) and
 * transform-spatial preview. Each is timed over BENCH_CALLS calls (default 7) after one warm-up.
 * Goals: data preview < 100 ms, spatial < 300 ms; the transformed previews are samples, so the
 * large layer must be no slower than the small one (ratio ≤ 1, within noise).
 */
const CALLS = Number(process.env.BENCH_CALLS ?? 7);
const SIZES = [1_000_000, 30_000];

const stack = await startStack('preview', {}, { noWorker: true });
// The convert bench's folder: its 1,000,000-point file is made once for both.
const files = path.join(path.dirname(stack.dir), 'convert', 'files');
const auth = { authorization: `Bearer ${stack.token}` };

async function timed(url: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i <= CALLS; i++) {
    const t = performance.now();
    const res = await fetch(url, { headers: auth });
    const body = await res.text();
    if (!res.ok) throw new Error(`${url}: ${res.status} ${body.slice(0, 300)}`);
    if (i > 0) times.push(performance.now() - t); // the first call warms caches and the JIT
  }
  return times;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const kinds = ['data-preview?limit=500', 'spatial-preview', 'transform-preview?limit=100', 'transform-spatial-preview'] as const;
const results = new Map<string, number[]>();

try {
  for (const size of SIZES) {
    const file = pointsFile(files, size);
    const { id } = await uploadWithCurl(stack.base, stack.token, file);
    const ws = `${stack.base}/api/v1/workspaces/${id}`;
    for (const kind of kinds.slice(0, 2)) results.set(`${kind} ${size}`, await timed(`${ws}/${kind}`));
    const put = await fetch(`${ws}/transformations`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/json' },
      // In the layer's units (degrees), as the runs recorded in README.md. In metres (the default
      // unit), longitude/latitude data is buffered per feature on the ellipsoid by the geo step
      // (geo/operations/geo_step.py), a Python process of its own.
      body: JSON.stringify({ operations: [{ type: 'buffer', distance: 0.01, units: 'source' }] }),
    });
    if (!put.ok) throw new Error(`PUT transformations: ${put.status} ${await put.text()}`);
    for (const kind of kinds.slice(2)) results.set(`${kind} ${size}`, await timed(`${ws}/${kind}`));
  }

  const ms = (x: number) => `${Math.round(x)} ms`;
  console.log(`\nmedian (min–max) of ${CALLS} calls after a warm-up:\n`);
  console.log('| preview | 1,000,000 points | 30,000 points | ratio | goal |\n|---|---|---|---|---|');
  const goals: Record<string, (big: number, ratio: number) => [string, boolean]> = {
    'data-preview?limit=500': (big) => ['< 100 ms', big < 100],
    'spatial-preview': (big) => ['< 300 ms', big < 300],
    'transform-preview?limit=100': (_b, ratio) => ['≤ 1.0× the small layer', ratio <= 1.1],
    'transform-spatial-preview': (_b, ratio) => ['≤ 1.0× the small layer', ratio <= 1.1],
  };
  for (const kind of kinds) {
    const big = results.get(`${kind} ${SIZES[0]}`)!;
    const small = results.get(`${kind} ${SIZES[1]}`)!;
    const cell = (xs: number[]) => `${ms(median(xs))} (${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))})`;
    const ratio = median(big) / median(small);
    const [goal, met] = goals[kind]!(median(big), ratio);
    console.log(
      `| ${kind.split('?')[0]}${kind.includes('limit') ? ` (${kind.split('=')[1]} rows)` : ''} | ${cell(big)} | ${cell(small)} | ${ratio.toFixed(2)} | ${goal}: ${met ? 'met' : 'NOT met'} |`,
    );
  }
} finally {
  await stack.stop();
}
