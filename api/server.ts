import '../platform/runtime-notices.js';
import { loadConfig } from '../platform/config.js';
import { buildApp } from './app.js';
import { createServices } from '../application/bootstrap.js';
import { guardProcess } from '../platform/process-guard.js';
import { createLogger } from '../platform/logger.js';
import { startMetricsListener } from '../platform/metrics-server.js';
import { startTracing } from '../platform/tracing.js';
import { collectServiceMetrics } from '../application/metrics-collectors.js';

/** Listens; everything else is in buildApp and createServices. Stops cleanly on SIGINT/SIGTERM. */
const config = loadConfig();
// Before anything makes a span or a Temporal client (off unless OTEL_EXPORTER_OTLP_* is set).
const tracing = await startTracing('geoflow-api', createLogger(config.logLevel, 'api'));
const services = await createServices(config);
// A dependency that throws in one of its callbacks must not take every user's requests with it.
guardProcess(services.log);
const app = await buildApp(services);
await app.listen({ port: config.port, host: config.host });
// Metrics on a listener of their own, when SVC_METRICS_PORT is set (docs/metrics.md).
const metricsListener = config.metrics.apiPort
  ? await startMetricsListener({ host: config.metrics.host, port: config.metrics.apiPort, token: config.metrics.token, log: services.log })
  : null;
if (metricsListener) collectServiceMetrics(services);

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  app.log.info({ signal }, 'shutting down: finishing requests in flight');
  const force = setTimeout(() => process.exit(1), 15_000).unref();
  await app.close();
  await metricsListener?.close();
  await services.close();
  await tracing?.shutdown();
  clearTimeout(force);
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
