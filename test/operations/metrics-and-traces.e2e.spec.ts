import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { scheduleIdOf } from '../../temporal/ids.js';
import { freePort } from '../../devservers/ports.js';
import { skipWithoutDatabase } from '../support/database.js';
import { fixtureDir, pointsGeoJson } from '../support/fixtures.js';
import { createPostgisTarget, fileBody, finished, startFileServer, type FileServer } from '../support/jobs.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import { startServiceProcesses, type ServiceProcesses } from '../support/service-processes.js';
import { until, untilRead } from '../support/until.js';
import { temporalAddress } from '../support/worker.js';

/*
 * What an operator scrapes and traces, from the real processes (`npm start`'s API and worker):
 * the metrics listeners of both after real Runs into PostGIS, and the trace of a Run Now as an
 * OTLP collector receives it (a receiver written in test/support/otlp-receiver.ts).
 */

const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');

/** One sample of the Prometheus text format: name, labels, value. */
interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, '$1');
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return samples;
}

/** The sum of a metric's samples over every target whose labels include `labels`. */
const total = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);

const has = (samples: Sample[], name: string, labels: Record<string, string> = {}) =>
  samples.some((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

describe.skipIf(skip)('metrics and traces of the running service', () => {
  let svc: ServiceProcesses;
  let files: FileServer;
  let otlp: OtlpReceiver;
  let target: Awaited<ReturnType<typeof createPostgisTarget>>;
  let apiMetrics: string;
  let workerMetrics: string;
  const token = 'scrape-token-for-the-suite';
  const dir = fixtureDir();

  beforeAll(async () => {
    otlp = await startOtlpReceiver();
    files = await startFileServer();
    files.put('/places.geojson', fileBody(pointsGeoJson(dir, 25)));
    target = await createPostgisTarget();
    const [apiPort, workerPort] = [await freePort(), await freePort()];
    apiMetrics = `http://127.0.0.1:${apiPort}/metrics`;
    workerMetrics = `http://127.0.0.1:${workerPort}/metrics`;
    svc = await startServiceProcesses({
      SVC_METRICS_PORT: String(apiPort),
      SVC_WORKER_METRICS_PORT: String(workerPort),
      SVC_METRICS_TOKEN: token,
      OTEL_EXPORTER_OTLP_ENDPOINT: otlp.endpoint,
      // Spans leave in batches every 200 ms rather than 5 s, so the suite waits less.
      OTEL_BSP_SCHEDULE_DELAY: '200',
    });
  }, 180_000);
  afterAll(async () => {
    await svc?.stop();
    await files?.close();
    await otlp?.close();
    await target?.drop();
  });

  const scrape = async (url: string) => {
    const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parseExposition(await res.text());
  };
  const scrapeBoth = async () => [...(await scrape(apiMetrics)), ...(await scrape(workerMetrics))];

  const waitForRun = (jobId: string, runId: string) =>
    untilRead(
      `Run ${runId} finished`,
      async () => (await svc.call('GET', `/api/v1/jobs/${jobId}/runs/${runId}`)).json(),
      (run) => finished(run.status),
      120_000,
    );

  const waitForSpans = (done: (spans: ReceivedSpan[]) => boolean, what: string) =>
    until(
      () => `${what} among ${otlp.spans.length} spans: ${[...new Set(otlp.spans.map((s) => s.name))].join(', ')}`,
      () => done(otlp.spans),
      60_000,
      200,
    );

  it('refuses a scrape without the operator token, and serves nothing but /metrics', async () => {
    for (const url of [apiMetrics, workerMetrics]) {
      expect((await fetch(url)).status).toBe(401);
      expect((await fetch(url, { headers: { authorization: 'Bearer not-the-token' } })).status).toBe(401);
      expect((await fetch(url.replace('/metrics', '/'), { headers: { authorization: `Bearer ${token}` } })).status).toBe(404);
    }
    // The API's own port does not serve them.
    expect((await fetch(`${svc.base}/metrics`)).status).toBe(404);
  });

  it('counts Runs, steps by connector, requests, appends and storage as real Runs go through', async () => {
    const before = await scrapeBoth();
    const source = (await svc.call('POST', '/api/v1/sources', { name: 'places', type: 'url', configuration: { url: `${files.url}/places.geojson` } })).json();
    const destination = (await svc.call('POST', '/api/v1/destinations', { name: 'gis', type: 'postgis', configuration: target.configuration })).json();
    const created = await svc.call('POST', '/api/v1/jobs', {
      name: 'Places to PostGIS, measured',
      source_id: source.id,
      destination_id: destination.id,
      destination_target: { schema: 'public', table: 'places', write_mode: 'replace' },
      // A transform runs GDAL as a child process (in the sandbox): its span ends the trace's GDAL part.
      transform_mode: 'manual',
      operations: [{ type: 'rename_column', from: 'name', to: 'label' }],
    });
    expect(created.status, created.text).toBe(201);
    const job = created.json();
    // Two Runs: the first loads, the second finds the file unchanged (same ETag) and skips its later steps.
    const runs = [];
    for (let i = 0; i < 2; i++) {
      const queued = await svc.call('POST', `/api/v1/jobs/${job.id}/run`);
      expect(queued.status, queued.text).toBe(201);
      runs.push(await waitForRun(job.id, queued.json().id));
    }
    expect(runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
    expect((await target.query('SELECT count(*)::int AS n FROM public.places'))[0]).toEqual({ n: 25 });
    expect(runs[0].steps.map((s: { name: string }) => s.name)).toEqual(['extract', 'transform', 'deliver']);

    const after = await scrapeBoth();
    const moved = (name: string, labels: Record<string, string> = {}) => total(after, name, labels) - total(before, name, labels);
    const mine = { job_id: job.id, trigger: 'manual' };
    expect(moved('geoflow_runs_started_total', mine)).toBe(2);
    expect(moved('geoflow_runs_finished_total', { ...mine, status: 'succeeded' })).toBe(2);
    expect(moved('geoflow_runs_finished_total', { ...mine, status: 'failed' })).toBe(0);
    expect(moved('geoflow_run_duration_seconds_count', { trigger: 'manual', status: 'succeeded' })).toBe(2);
    expect(moved('geoflow_run_queue_wait_seconds_count', { trigger: 'manual' })).toBe(2);
    // Steps by connector type: the url Source read twice; PostGIS loaded once (the second Run ended
    // after its extract found nothing new, so its deliver step never ran).
    expect(runs[1].skipped_reason).toEqual(expect.any(String));
    expect(moved('geoflow_run_step_duration_seconds_count', { step: 'extract', connector: 'url' })).toBe(2);
    expect(moved('geoflow_run_step_duration_seconds_count', { step: 'deliver', connector: 'postgis', outcome: 'succeeded' })).toBe(1);
    expect(moved('geoflow_run_step_duration_seconds_count', { step: 'deliver' })).toBe(1);
    // A histogram's buckets are cumulative: the +Inf bucket holds every observation.
    expect(moved('geoflow_run_step_duration_seconds_bucket', { step: 'extract', connector: 'url', le: '+Inf' })).toBe(2);
    expect(moved('geoflow_run_step_duration_seconds_sum', { step: 'extract', connector: 'url' })).toBeGreaterThan(0);
    // Requests by route pattern and status (the pattern, not the Run's URL).
    expect(moved('geoflow_http_request_duration_seconds_count', { method: 'POST', route: '/api/v1/jobs/:id/run', status: '201' })).toBe(2);
    expect(after.some((s) => s.labels.route?.includes(job.id))).toBe(false);
    // Appends in both processes: the API queued the Runs, the worker recorded their steps.
    expect(moved('geoflow_eventstore_append_seconds_count', { store: 'postgres', outcome: 'ok' })).toBeGreaterThan(4);
    expect(total(await scrape(workerMetrics), 'geoflow_eventstore_append_seconds_count')).toBeGreaterThan(0);

    const api = await scrape(apiMetrics);
    expect(total(api, 'geoflow_storage_bytes', { part: 'database' })).toBeGreaterThan(1_000_000);
    // The parts as `npm run disk` names them (one measurement serves both).
    expect(total(api, 'geoflow_storage_bytes', { part: 'database.events' })).toBeGreaterThan(0);
    expect(total(api, 'geoflow_storage_bytes', { part: 'database.rm' })).toBeGreaterThan(0);
    expect(has(api, 'geoflow_storage_bytes', { part: 'files.workspaces' })).toBe(true);
    expect(has(api, 'geoflow_storage_bytes', { part: 'files.runs' })).toBe(true);
    expect(has(api, 'geoflow_projection_lag_events', { projector: 'runs' })).toBe(true);
    expect(total(api, 'geoflow_worker_pollers', { task_type: 'workflow' })).toBeGreaterThan(0);
    expect(total(api, 'geoflow_worker_pollers', { task_type: 'activity' })).toBeGreaterThan(0);
    expect(has(api, 'geoflow_runs_waiting', { task_type: 'activity' })).toBe(true);
    expect(total(api, 'geoflow_data_disk_size_bytes')).toBeGreaterThan(0);
    const worker = await scrape(workerMetrics);
    expect(total(worker, 'geoflow_worker_up')).toBe(1);
    expect(has(worker, 'geoflow_worker_activities_running')).toBe(true);
    expect(total(worker, 'geoflow_process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('measures how late a scheduled Run started against its fire time', async () => {
    const before = await scrapeBoth();
    const source = (await svc.call('POST', '/api/v1/sources', { name: 'nightly', type: 'url', configuration: { url: `${files.url}/places.geojson` } })).json();
    const destination = (await svc.call('POST', '/api/v1/destinations', { name: 'hook', type: 'webhook', configuration: { url: `${files.url}/hook` } })).json();
    const created = await svc.call('POST', '/api/v1/jobs', {
      name: 'Nightly places',
      source_id: source.id,
      destination_id: destination.id,
      schedule: { kind: 'daily', timezone: 'UTC', hour: 3, minute: 0 },
    });
    expect(created.status, created.text).toBe(201);
    const job = created.json();
    // The Job's Temporal Schedule fires now, as it would at 03:00.
    const connection = await Connection.connect({ address: temporalAddress! });
    try {
      await new Client({ connection }).schedule.getHandle(scheduleIdOf(job.id)).trigger();
    } finally {
      await connection.close();
    }
    const runs = await untilRead(
      'the scheduled Run finished',
      async () => (await svc.call('GET', `/api/v1/jobs/${job.id}/runs`)).json().items as { id: string; status: string; trigger: string }[],
      (items) => items.length === 1 && finished(items[0]!.status),
      90_000,
    );
    expect(runs[0]).toMatchObject({ trigger: 'schedule', status: 'succeeded' });
    const after = await scrapeBoth();
    const moved = (name: string, labels: Record<string, string> = {}) => total(after, name, labels) - total(before, name, labels);
    expect(moved('geoflow_runs_started_total', { job_id: job.id, trigger: 'schedule' })).toBe(1);
    expect(moved('geoflow_runs_finished_total', { job_id: job.id, trigger: 'schedule', status: 'succeeded' })).toBe(1);
    expect(moved('geoflow_schedule_lateness_seconds_count')).toBe(1);
    expect(moved('geoflow_schedule_lateness_seconds_bucket', { le: '+Inf' })).toBe(1);
    expect(moved('geoflow_run_step_duration_seconds_count', { step: 'deliver', connector: 'webhook', outcome: 'succeeded' })).toBe(1);
  });

  it('sends one trace from POST …/run through the workflow and its activities to GDAL and the Destination statements', async () => {
    const post = (s: ReceivedSpan) => s.name === 'POST /api/v1/jobs/:id/run';
    await waitForSpans((spans) => spans.some(post), 'span of POST /api/v1/jobs/:id/run');
    expect(otlp.contentTypes.every((t) => t.startsWith('application/x-protobuf'))).toBe(true);
    // The first Run (the one that loaded): its deliver step's statements end the trace.
    const traces = [...new Set(otlp.spans.filter(post).map((s) => s.traceId))];
    const inTrace = (traceId: string) => otlp.spans.filter((s) => s.traceId === traceId);
    await waitForSpans((spans) => traces.some((t) => spans.some((s) => s.traceId === t && s.name.startsWith('pg '))), "the Destination's statements");
    const trace = traces.map(inTrace).find((spans) => spans.some((s) => s.name.startsWith('pg ')))!;
    const names = trace.map((s) => s.name);
    expect(names).toEqual(
      expect.arrayContaining(['POST /api/v1/jobs/:id/run', 'RunWorkflow:runJobWorkflow', 'run step extract', 'run step deliver', 'deliver postgis']),
    );
    expect(names.some((n) => n.startsWith('RunActivity:'))).toBe(true);
    // GDAL: the transform's child process, and the delivery's load (its library call in the
    // worker for a layer this small, else an ogr2ogr child).
    expect(names).toContain('run step transform');
    expect(
      names.filter((n) => n.startsWith('process ')),
      names.join(', '),
    ).toContain('process ogr2ogr');
    // Both processes sent spans of this one trace.
    expect(new Set(trace.map((s) => s.service))).toEqual(new Set(['geoflow-api', 'geoflow-worker']));
    // The Run's spans hang from the request's span, parent by parent (the Job's coordinator,
    // whose span stays open while it waits for more Runs, is not on that path).
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const root = trace.find(post)!;
    const pathUp = (span: ReceivedSpan) => {
      const names = [span.name];
      for (let at = byId.get(span.parentSpanId); at; at = byId.get(at.parentSpanId)) names.push(at.name);
      return names;
    };
    for (const name of ['RunWorkflow:runJobWorkflow', 'run step deliver', 'deliver postgis']) {
      const span = trace.find((s) => s.name === name)!;
      expect(pathUp(span).at(-1), `${name} reaches ${root.name}: ${pathUp(span).join(' < ')}`).toBe(root.name);
    }
    const statement = trace.find((s) => s.name.startsWith('pg '))!;
    expect(pathUp(statement)).toEqual(expect.arrayContaining(['deliver postgis', 'run step deliver', 'RunWorkflow:runJobWorkflow', root.name]));
    for (const gdal of trace.filter((s) => s.name === 'process ogr2ogr' || s.name === 'gdal ogr2ogr')) {
      expect(pathUp(gdal)).toEqual(expect.arrayContaining([expect.stringMatching(/^run step /), 'RunWorkflow:runJobWorkflow', root.name]));
      expect(pathUp(gdal).at(-1)).toBe(root.name);
    }
    const delivery = trace.find((s) => s.name === 'deliver postgis')!;
    expect(delivery.attributes['geoflow.statements']).toBeGreaterThan(0);
    // Statements name their verb only, never values.
    for (const s of trace.filter((x) => x.name.startsWith('pg '))) expect(s.name).toMatch(/^pg [A-Z]+$/);
  });
});
