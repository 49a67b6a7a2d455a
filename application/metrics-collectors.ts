import { statfs } from 'node:fs/promises';
import { addCollector, metrics } from '../platform/metrics.js';
import { measureDiskUsage } from './disk-usage.js';
import type { Services } from './services.js';

/*
 * The gauges a scrape refreshes by asking the database, Temporal or the disk (platform/metrics.ts,
 * addCollector): the task queue's backlog and pollers, projection lag and storage bytes in the
 * API; the data disk in every process. Each runs at most once per its interval, so a scraper
 * polling every few seconds costs the database one small query now and then, and a walk of the
 * data folder at most once a minute.
 */

/** Temporal's task queue types, as DescribeTaskQueue numbers them. */
const TASK_TYPES = [
  { label: 'workflow', type: 1 },
  { label: 'activity', type: 2 },
] as const;

/** What the API serves: what the whole service holds, measured once (not by every worker). */
export function collectServiceMetrics(services: Services): () => void {
  const log = (what: string) => (error: unknown) => services.log.warn({ err: error }, `metrics: could not measure ${what}`);
  const stops = [
    addCollector('task queue', 5_000, () => taskQueue(services), log('the Temporal task queue')),
    addCollector('projection lag', 5_000, () => projectionLag(services), log('projection lag')),
    addCollector('storage', 60_000, () => storage(services), log('storage bytes')),
    ...collectProcessDisk(services),
  ];
  return () => {
    for (const stop of stops) stop();
  };
}

/** What every process serves about itself: the free space of its own data folder's disk. */
export function collectProcessDisk(services: Pick<Services, 'config' | 'log'>): (() => void)[] {
  return [
    addCollector(
      'data disk',
      15_000,
      async () => {
        const fs = await statfs(services.config.dataDir);
        metrics.dataDiskFree.set(fs.bavail * fs.bsize);
        metrics.dataDiskSize.set(fs.blocks * fs.bsize);
      },
      (error) => services.log.warn({ err: error }, 'metrics: could not measure the data disk'),
    ),
  ];
}

/** Runs waiting for a worker: Temporal's approximate backlog, and who polls, per task type. */
async function taskQueue(services: Services): Promise<void> {
  const temporal = services.temporal;
  if (!temporal) return;
  await Promise.all(
    TASK_TYPES.map(async ({ label, type }) => {
      const answer = await temporal.workflowService.describeTaskQueue({
        namespace: services.config.temporalNamespace,
        taskQueue: { name: services.config.taskQueue },
        taskQueueType: type,
        reportStats: true,
      });
      metrics.workerPollers.set({ task_type: label }, answer.pollers?.length ?? 0);
      const backlog = answer.stats?.approximateBacklogCount;
      // A server too old to report stats says nothing: no value rather than a false zero.
      if (backlog !== undefined && backlog !== null) metrics.runsWaiting.set({ task_type: label }, Number(backlog));
    }),
  );
}

async function projectionLag(services: Services): Promise<void> {
  for (const runner of [services.projections, services.reactors]) {
    if (!runner) continue;
    for (const { projector, events } of await runner.lag()) metrics.projectionLag.set({ projector }, events);
  }
}

/** The parts `npm run disk` reports (application/disk-usage.ts), bucket and the data folder's rest left out. */
async function storage(services: Services): Promise<void> {
  const usage = await measureDiskUsage(services.config, { everything: false });
  for (const part of usage.parts) if (part.bytes !== null) metrics.storageBytes.set({ part: part.part }, part.bytes);
}
