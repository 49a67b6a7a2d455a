import '../platform/runtime-notices.js';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { createActivities, defaultWorkerName } from '../activities/index.js';
import { createServices } from '../application/bootstrap.js';
import { loadConfig, type Config } from '../platform/config.js';
import { guardProcess } from '../platform/process-guard.js';
import { createLogger } from '../platform/logger.js';
import { addCollector, metrics } from '../platform/metrics.js';
import { startMetricsListener } from '../platform/metrics-server.js';
import { startTracing, tracingHandles } from '../platform/tracing.js';
import { collectProcessDisk } from '../application/metrics-collectors.js';

export const workflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
const traceInterceptorsPath = fileURLToPath(new URL('../workflows/trace-interceptors.ts', import.meta.url));

/**
 * With traces on (platform/tracing.ts): Temporal's OpenTelemetry interceptors for workflows and
 * activities, the workflow spans sent through the process's span processor, and ours that puts
 * each Run in the trace of the request that asked for it (workflows/trace-interceptors.ts).
 * Off, nothing: the workflow bundle stays what the recorded histories replay against.
 */
async function tracingOptions() {
  const tracing = tracingHandles();
  if (!tracing) return {};
  const otel = await import('@temporalio/interceptors-opentelemetry');
  const require = createRequire(import.meta.url);
  return {
    interceptors: {
      workflowModules: [require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'), traceInterceptorsPath],
      activity: [
        (ctx: import('@temporalio/activity').Context) => ({
          inbound: new otel.OpenTelemetryActivityInboundInterceptor(ctx),
          outbound: new otel.OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: { exporter: otel.makeWorkflowExporter(tracing.spanProcessor, tracing.resource) },
  };
}

let runtimeInstalled = false;

/**
 * A worker with its own application services (event store, pool, cipher): activities record
 * Run and Workspace events themselves. It does not run the projections; the API does.
 */
export async function createWorker(config: Config, connection?: NativeConnection) {
  if (!runtimeInstalled) {
    // The SDK logs every state change at INFO; our own logger reports what matters.
    // A failed Run's workflow and activities are logged at WARN: quiet runs (tests) keep errors only.
    const level = config.logLevel === 'debug' ? 'INFO' : config.logLevel === 'silent' || config.logLevel === 'error' ? 'ERROR' : 'WARN';
    Runtime.install({ logger: new DefaultLogger(level) });
    runtimeInstalled = true;
  }
  // The client lets a scheduled Run hand its ticket to the Job's coordinator, as the API does.
  const services = await createServices(config, { temporal: true, projections: false, name: 'worker' });
  const conn = connection ?? (await NativeConnection.connect({ address: config.temporalAddress }));
  const worker = await Worker.create({
    connection: conn,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    workflowsPath,
    activities: createActivities({ workerName: defaultWorkerName(), services }),
    // Heartbeats reach the server at least every 5 s (the SDK would otherwise hold them back to
    // 80% of the heartbeat timeout): a Run cancelled because its Job was deleted learns it
    // within seconds, through the heartbeat's answer.
    maxHeartbeatThrottleInterval: '5 seconds',
    ...(await tracingOptions()),
  });
  return {
    worker,
    connection: conn,
    services,
    /** After worker.run() has returned: releases the connections. */
    async close() {
      if (!connection) await conn.close();
      await services.close();
    },
  };
}

// Run as a process: `node --import tsx worker/worker.ts`
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const config = loadConfig();
  // Before the worker is made: its interceptors need the tracer (off unless OTEL_EXPORTER_OTLP_* is set).
  const tracing = await startTracing('geoflow-worker', createLogger(config.logLevel, 'worker'));
  const { worker, services, close } = await createWorker(config);
  // A dependency that throws in one of its callbacks must not end every Run this worker holds.
  guardProcess(services.log);
  // Metrics on a listener of their own, when SVC_WORKER_METRICS_PORT is set (docs/metrics.md).
  const metricsListener = config.metrics.workerPort
    ? await startMetricsListener({ host: config.metrics.host, port: config.metrics.workerPort, token: config.metrics.token, log: services.log })
    : null;
  if (metricsListener) {
    collectProcessDisk(services);
    // Read from the worker at each scrape: 1 while it polls, 0 while it starts or drains.
    addCollector('worker', 0, async () => {
      const status = worker.getStatus();
      metrics.workerUp.set({ task_queue: config.taskQueue }, status.runState === 'RUNNING' ? 1 : 0);
      metrics.workerActivitiesRunning.set(status.numInFlightActivities);
    });
  }
  services.log.info({ taskQueue: config.taskQueue }, 'worker started');
  // Once: Ctrl-C under `npm start` brings SIGINT from the terminal, then SIGTERM from start.ts,
  // and a second shutdown() throws, which would end the process in the middle of draining.
  const stop = () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  await worker.run();
  await metricsListener?.close();
  await close();
  await tracing?.shutdown();
  services.log.info('worker stopped');
}
