import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { LOCAL_DATABASE_FILE } from '../platform/config.js';
import { readEnvFile, writeEnvFile } from '../platform/env-file.js';
import { startPostgres, startTemporal, temporalServiceEnv, type LocalPostgres, type LocalTemporal } from './local-services.js';
import { freePort, portAnswers, waitForPort } from '../devservers/ports.js';
import { Supervisor } from './supervisor.js';

/**
 * `npm start`: the whole service on one machine. Starts what is not given from outside
 * (SVC_DATABASE_URL, SVC_TEMPORAL_ADDRESS), then the API and a worker, and restarts either when
 * it crashes; Ctrl-C or SIGTERM stops all of it.
 */
const env = { ...process.env };
const dataDir = path.resolve(env.SVC_DATA_DIR ?? '.data');
env.SVC_DATA_DIR = dataDir;
const port = Number(env.SVC_PORT ?? 8080);
const log = (line: string) => console.log(`[start] ${line}`);

let pg: LocalPostgres | undefined;
let temporal: LocalTemporal | undefined;
const supervisor = new Supervisor({
  log,
  onStartFailure: (name, code) => {
    log(`${name} could not start; stopping everything`);
    void stopAll(code);
  },
});

let stopping = false;
async function stopAll(code: number) {
  if (stopping) return;
  stopping = true;
  // The API and the worker finish what they are doing before the database goes away.
  await supervisor.stop();
  temporal?.stop();
  pg?.stop();
  process.exit(code);
}
process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

try {
  const localDatabaseFile = path.join(dataDir, LOCAL_DATABASE_FILE);
  if (!env.SVC_DATABASE_URL) {
    const pgPort = Number(env.SVC_PG_PORT ?? 54329);
    pg = await startPostgres(path.join(dataDir, 'pg'), pgPort, ['geoflow']);
    env.SVC_DATABASE_URL = pg.url('geoflow');
    // users:add and projections:rebuild, run beside the service, read it from here.
    writeEnvFile(localDatabaseFile, { SVC_DATABASE_URL: env.SVC_DATABASE_URL });
    log(`PostgreSQL ${pgPort} (data in ${pg.dir}; password in ${pg.passwordFile})`);
  } else {
    // A file left from a local-cluster start would point those commands at the wrong database.
    rmSync(localDatabaseFile, { force: true });
  }
  if (!env.SVC_TEMPORAL_ADDRESS) {
    const temporalPort = Number(env.SVC_TEMPORAL_PORT ?? 7233);
    // Its HTTP API on a known port (the dev server picks a random one otherwise), which the
    // outbound policy refuses: it starts and terminates any workflow for whoever asks.
    const httpPort = env.SVC_TEMPORAL_HTTP_PORT ? Number(env.SVC_TEMPORAL_HTTP_PORT) : await freePort();
    temporal = await startTemporal(dataDir, temporalPort, { dbFile: path.join(dataDir, 'temporal.db'), uiPort: temporalPort + 1000, httpPort });
    // Its address, and every port it listens on for the outbound policy to refuse.
    Object.assign(env, temporalServiceEnv(temporal, httpPort));
    // Run pages in the browser link to the UI this dev server serves.
    env.SVC_TEMPORAL_UI_URL ??= `http://127.0.0.1:${temporalPort + 1000}`;
    log(`Temporal ${temporal.address}, UI http://127.0.0.1:${temporalPort + 1000}, HTTP API port ${httpPort}`);
  }

  // Without SVC_ADMIN_EMAIL, a first user is made with a password kept in the data folder.
  if (!env.SVC_ADMIN_EMAIL) {
    const file = path.join(dataDir, 'initial-admin.env');
    if (!existsSync(file)) writeEnvFile(file, { SVC_ADMIN_EMAIL: 'admin@example.com', SVC_ADMIN_PASSWORD: randomBytes(12).toString('base64url') });
    chmodSync(file, 0o600); // older versions wrote it readable by all
    Object.assign(env, readEnvFile(file));
    log(`first user ${env.SVC_ADMIN_EMAIL}, password in ${file}`);
  }

  // Otherwise "ready" below would be that other program answering, and the API would crash.
  if (await portAnswers(port, env.SVC_HOST ?? '127.0.0.1')) throw new Error(`something already listens on port ${port} (set SVC_PORT)`);
  const childEnv = { ...env, UV_THREADPOOL_SIZE: env.UV_THREADPOOL_SIZE ?? '8' };
  for (const [name, script] of [
    ['worker', 'worker/worker.ts'],
    ['api', 'api/server.ts'],
  ] as const) {
    supervisor.start({ name, command: process.execPath, args: ['--expose-gc', '--import', 'tsx', script], env: childEnv });
  }
  await waitForPort(port, env.SVC_HOST ?? '127.0.0.1', 120_000);
  if (!stopping) {
    supervisor.markReady();
    log(`ready: http://${env.SVC_HOST ?? '127.0.0.1'}:${port}  (API docs at /api/v1/docs; Ctrl-C stops everything)`);
  }
} catch (error) {
  console.error(`[start] ${(error as Error).message}; stopping everything`);
  await stopAll(1);
}
