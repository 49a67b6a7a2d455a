import '../platform/runtime-notices.js';
import { loadConfig } from '../platform/config.js';
import { buildApp } from './app.js';
import { createServices } from '../application/bootstrap.js';
import { guardProcess } from '../platform/process-guard.js';

/** Listens; everything else is in buildApp and createServices. Stops cleanly on SIGINT/SIGTERM. */
const config = loadConfig();
const services = await createServices(config);
// A dependency that throws in one of its callbacks must not take every user's requests with it.
guardProcess(services.log);
const app = await buildApp(services);
await app.listen({ port: config.port, host: config.host });

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  app.log.info({ signal }, 'shutting down: finishing requests in flight');
  const force = setTimeout(() => process.exit(1), 15_000).unref();
  await app.close();
  await services.close();
  clearTimeout(force);
  process.exit(0);
}
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('SIGTERM', () => void shutdown('SIGTERM'));
