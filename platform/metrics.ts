import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/*
 * The process's metrics, by name, in one registry (prom-client): what docs/metrics.md
 * describes and docs/grafana-dashboard.json charts. Code that measures something
 * imports `metrics` and calls inc/observe/set on the metric it names; nothing else registers
 * metrics. A few wrapper points feed them (the API's onResponse hook, runStep, the event store's
 * append, the Run's recorded events, the projection runner, the worker's start); gauges that
 * ask the database or Temporal are refreshed by collectors (addCollector) when Prometheus
 * scrapes, each with its own cache, never on a request's path.
 */

export const registry = new Registry();

const seconds = {
  /** An API request: most take milliseconds; uploads and previews take seconds. */
  request: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  /** A step of a Run: a second for a small file, up to an hour for a large load. */
  step: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600],
  /** How late a scheduled Run started, or how long a Run waited: from instants to an hour. */
  late: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 1800, 3600],
  /** One append to the event store. */
  append: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
};

const registers = [registry];

export const metrics = {
  runsStarted: new Counter({
    name: 'geoflow_runs_started_total',
    help: 'Runs that started (left the queue for their first step), by Job and trigger',
    labelNames: ['job_id', 'trigger'] as const,
    registers,
  }),
  runsFinished: new Counter({
    name: 'geoflow_runs_finished_total',
    help: 'Runs that ended, by Job, trigger and status (succeeded, failed, cancelled)',
    labelNames: ['job_id', 'trigger', 'status'] as const,
    registers,
  }),
  runDuration: new Histogram({
    name: 'geoflow_run_duration_seconds',
    help: 'Time from a Run being queued to its end, by trigger and status',
    labelNames: ['trigger', 'status'] as const,
    buckets: seconds.step,
    registers,
  }),
  runQueueWait: new Histogram({
    name: 'geoflow_run_queue_wait_seconds',
    help: 'Time a Run waited between being queued and starting (behind a Run of the same Job, or for a worker), by trigger',
    labelNames: ['trigger'] as const,
    buckets: seconds.late,
    registers,
  }),
  scheduleLateness: new Histogram({
    name: 'geoflow_schedule_lateness_seconds',
    help: 'How late a scheduled Run started against the time its Temporal Schedule meant',
    buckets: seconds.late,
    registers,
  }),
  stepDuration: new Histogram({
    name: 'geoflow_run_step_duration_seconds',
    help: 'Duration of one attempt of a Run step, by step, connector type (the Source for extract, the Destination for deliver, none otherwise) and outcome',
    labelNames: ['step', 'connector', 'outcome'] as const,
    buckets: seconds.step,
    registers,
  }),
  runsWaiting: new Gauge({
    name: 'geoflow_runs_waiting',
    help: "Tasks waiting in the Temporal task queue for a worker (approximate backlog), by task type: workflow (a Run's next decision) or activity (a Run's step)",
    labelNames: ['task_type'] as const,
    registers,
  }),
  workerPollers: new Gauge({
    name: 'geoflow_worker_pollers',
    help: 'Workers polling the task queue, as Temporal saw them lately, by task type',
    labelNames: ['task_type'] as const,
    registers,
  }),
  workerUp: new Gauge({
    name: 'geoflow_worker_up',
    help: '1 while this worker process polls its task queue, 0 while it starts or drains',
    labelNames: ['task_queue'] as const,
    registers,
  }),
  workerActivitiesRunning: new Gauge({
    name: 'geoflow_worker_activities_running',
    help: 'Activities (Run steps, Workspace conversions) this worker is running now',
    registers,
  }),
  projectionLag: new Gauge({
    name: 'geoflow_projection_lag_events',
    help: 'Events appended to the event store that a projector has not applied yet (counted up to 1000)',
    labelNames: ['projector'] as const,
    registers,
  }),
  appendDuration: new Histogram({
    name: 'geoflow_eventstore_append_seconds',
    help: 'Duration of one append to the event store, by store and outcome (ok, conflict, error)',
    labelNames: ['store', 'outcome'] as const,
    buckets: seconds.append,
    registers,
  }),
  requestDuration: new Histogram({
    name: 'geoflow_http_request_duration_seconds',
    help: 'Duration of an API request, by method, route pattern (never the raw URL) and status code',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: seconds.request,
    registers,
  }),
  notificationDeliveries: new Counter({
    name: 'geoflow_notification_deliveries_total',
    help: 'Notifications sent about Runs, by channel (email, webhook, …) and outcome (sent, failed)',
    labelNames: ['channel', 'outcome'] as const,
    registers,
  }),
  storageBytes: new Gauge({
    name: 'geoflow_storage_bytes',
    help: "Bytes each part of the service keeps, as npm run disk names them: database (the whole service database), database.events (the event store's table), database.rm (read models), files.workspaces and files.runs (stored files in the data folder), postgres_folder (npm start's local cluster), temporal (the local Temporal dev server's file)",
    labelNames: ['part'] as const,
    registers,
  }),
  dataDiskFree: new Gauge({
    name: 'geoflow_data_disk_free_bytes',
    help: "Free bytes on the file system of this process's data folder (SVC_DATA_DIR)",
    registers,
  }),
  dataDiskSize: new Gauge({
    name: 'geoflow_data_disk_size_bytes',
    help: "Size in bytes of the file system of this process's data folder (SVC_DATA_DIR)",
    registers,
  }),
};

/**
 * One attempt to send a notification about a Run (activities/notifications.ts), by channel type
 * (`email`, `webhook`) and outcome: a retried delivery counts its failed attempts, then its success.
 */
export function countNotificationDelivery(channel: string, outcome: 'sent' | 'failed'): void {
  metrics.notificationDeliveries.inc({ channel, outcome });
}

/** Something a scrape refreshes: it sets gauges itself, at most once per `everyMs`. */
interface Collector {
  name: string;
  everyMs: number;
  run: () => Promise<void>;
  lastAt: number;
  running: Promise<void> | null;
  onError: (error: unknown) => void;
}

const collectors: Collector[] = [];

/**
 * Registers a refresh that runs when metrics are scraped, at most once per `everyMs` (a scrape in
 * between serves what the last refresh set). A failed refresh leaves the gauges as they were and
 * is reported to onError; it never fails the scrape.
 */
export function addCollector(name: string, everyMs: number, run: () => Promise<void>, onError: (error: unknown) => void = () => undefined): () => void {
  const collector: Collector = { name, everyMs, run, lastAt: 0, running: null, onError };
  collectors.push(collector);
  return () => {
    const at = collectors.indexOf(collector);
    if (at >= 0) collectors.splice(at, 1);
  };
}

/** A scrape waits this long at most for collectors; one still running then serves its last values. */
const COLLECT_WAIT_MS = 5_000;

async function refresh(): Promise<void> {
  const now = Date.now();
  const due = collectors.map((c) => {
    if (!c.running && now - c.lastAt >= c.everyMs) {
      c.lastAt = now;
      c.running = c.run().then(
        () => {
          c.running = null;
        },
        (error: unknown) => {
          c.running = null;
          c.onError(error);
        },
      );
    }
    return c.running;
  });
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([Promise.all(due), new Promise((resolve) => (timer = setTimeout(resolve, COLLECT_WAIT_MS)))]);
  clearTimeout(timer);
}

let defaultsOn = false;

/**
 * Node's own process metrics (CPU, memory, event-loop delay, garbage collection) under the
 * geoflow_ prefix (geoflow_process_*, geoflow_nodejs_*). Only where metrics are served: the
 * event-loop monitor and the GC observer have a (small) cost of their own.
 */
export function collectProcessMetrics(): void {
  if (defaultsOn) return;
  defaultsOn = true;
  collectDefaultMetrics({ register: registry, prefix: 'geoflow_' });
}

/** The Prometheus text exposition of every metric, after the collectors that are due have run. */
export async function exposition(): Promise<{ contentType: string; body: string }> {
  await refresh();
  return { contentType: registry.contentType, body: await registry.metrics() };
}
