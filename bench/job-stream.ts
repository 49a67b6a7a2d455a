import path from 'node:path';
import { load } from '../application/commands.js';
import { fold } from '../domain/decider.js';
import { jobDecider, jobStream, type JobEvent } from '../domain/jobs/job.js';
import { PostgresEventStore } from '../eventstore/postgres.js';
import { startPostgres } from '../scripts/local-services.js';
import { freePort } from '../devservers/ports.js';

/**
 * `npm run bench:job-stream`: loading a Job whose stream holds one event per Run it has had
 * (1,000, 10,000 and 100,000 Runs; BENCH_STREAM_SIZES=1000,10000), read whole and folded (the
 * baseline: what every load did before snapshots) against `load`, which reads the snapshot and
 * the events after it. A Run loads its Job twice (to start and to record its outcome) and Run
 * Now once more, so this is per-Run latency for a Job that has run every minute for a day, a
 * week, ten weeks. Needs the PostgreSQL that `npm start` installs.
 */
const sizes = (process.env.BENCH_STREAM_SIZES ?? '1000,10000,100000').split(',').map(Number);
const ROUNDS = 5;

const pg = await startPostgres(path.resolve('.data/bench/job-stream/pg'), await freePort(), ['bench'], { fresh: true, durable: false });
const store = new PostgresEventStore(pg.url('bench'));
try {
  await store.init();
  const id = jobStream('bench');
  const at = new Date().toISOString();
  const definition = { name: 'every minute', source_id: 'src', destination_id: 'dst', operations: [] };
  await store.appendToStream(id, [{ type: 'JobCreated', data: { job_id: 'bench', owner_id: 'usr', definition, enabled: true, at } }], 'no_stream');
  let runs = 0;
  const lines: string[] = [];
  for (const size of sizes) {
    while (runs < size) {
      const batch = Array.from({ length: Math.min(1000, size - runs) }, (_, i) => ({
        type: 'JobRunRecorded',
        data: { job_id: 'bench', run_id: `run_${runs + i}`, trigger: 'schedule', status: 'succeeded', consecutive_failures: 0, at },
      }));
      await store.appendToStream(id, batch, 'any');
      runs += batch.length;
    }
    await load({ store }, id, jobDecider); // the first load after the Runs saves a snapshot
    const t0 = performance.now();
    for (let i = 0; i < ROUNDS; i++) fold(jobDecider, (await store.readStream(id)) as unknown as JobEvent[]);
    const t1 = performance.now();
    for (let i = 0; i < ROUNDS; i++) await load({ store }, id, jobDecider);
    const t2 = performance.now();
    const whole = (t1 - t0) / ROUNDS;
    const snap = (t2 - t1) / ROUNDS;
    const line = `| ${runs.toLocaleString('en')} Runs | ${whole.toFixed(1)} ms | ${snap.toFixed(2)} ms | ${(snap / whole).toFixed(3)} |`;
    lines.push(line);
    console.log(line);
  }
  console.log(
    `\nLoading a Job, mean of ${ROUNDS} (PostgreSQL event store):\n\n| stream | whole stream read and folded (baseline) | load from its snapshot | ratio |\n|---|---|---|---|\n${lines.join('\n')}`,
  );
} finally {
  await store.close();
  pg.stop();
}
