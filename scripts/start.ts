import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { LOCAL_DATABASE_FILE } from '../platform/config.js';
import { readEnvFile, writeEnvFile } from '../platform/env-file.js';
import { startPostgres, startTemporal, waitForPort, type LocalPostgres, type LocalTemporal } from './local-services.js';

/**
 * `npm start`: the whole service on one machine. Starts what is not given from outside
 * (SVC_DATABASE_URL, SVC_TEMPORAL_ADDRESS), then the API and a worker; Ctrl-C stops all of it.
 */
const env = { ...process.env };
const dataDir = path.resolve(env.SVC_DATA_DIR ?? '.data');
env.SVC_DATA_DIR = dataDir;
const port = Number(env.SVC_PORT ?? 8080);

let pg: LocalPostgres | undefined;
let temporal: LocalTemporal | undefined;
const children: ChildProcess[] = [];

let stopping = false;
function stopAll(code: number) {
  if (stopping) return;
  stopping = true;
  for (const child of children) child.kill('SIGTERM');
  setTimeout(() => {
    temporal?.stop();
    pg?.stop();
    process.exit(code);
  }, 1500);
}
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

const localDatabaseFile = path.join(dataDir, LOCAL_DATABASE_FILE);
if (!env.SVC_DATABASE_URL) {
  const pgPort = Number(env.SVC_PG_PORT ?? 54329);
  pg = await startPostgres(path.join(dataDir, 'pg'), pgPort, ['geoflow']);
  env.SVC_DATABASE_URL = pg.url('geoflow');
  // users:add and projections:rebuild, run beside the service, read it from here.
  writeEnvFile(localDatabaseFile, { SVC_DATABASE_URL: env.SVC_DATABASE_URL });
  console.log(`[start] PostgreSQL ${pgPort} (data in ${pg.dir}; password in ${pg.passwordFile})`);
} else {
  // A file left from a local-cluster start would point those commands at the wrong database.
  rmSync(localDatabaseFile, { force: true });
}
if (!env.SVC_TEMPORAL_ADDRESS) {
  const temporalPort = Number(env.SVC_TEMPORAL_PORT ?? 7233);
  temporal = await startTemporal(dataDir, temporalPort, { dbFile: path.join(dataDir, 'temporal.db'), uiPort: temporalPort + 1000 });
  env.SVC_TEMPORAL_ADDRESS = temporal.address;
  console.log(`[start] Temporal ${temporal.address}, UI http://127.0.0.1:${temporalPort + 1000}`);
}

// Without SVC_ADMIN_EMAIL, a first user is made with a password kept in the data folder.
if (!env.SVC_ADMIN_EMAIL) {
  const file = path.join(dataDir, 'initial-admin.env');
  if (!existsSync(file)) writeEnvFile(file, { SVC_ADMIN_EMAIL: 'admin@example.com', SVC_ADMIN_PASSWORD: randomBytes(12).toString('base64url') });
  chmodSync(file, 0o600); // older versions wrote it readable by all
  Object.assign(env, readEnvFile(file));
  console.log(`[start] first user ${env.SVC_ADMIN_EMAIL}, password in ${file}`);
}

function launch(name: string, script: string) {
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', script], { env: { ...env, UV_THREADPOOL_SIZE: env.UV_THREADPOOL_SIZE ?? '8' }, stdio: 'inherit' });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      console.error(`[start] ${name} exited (${code ?? signal}); stopping everything`);
      stopAll(code ?? 1);
    }
  });
  children.push(child);
}

launch('worker', 'workflows/worker.ts');
launch('api', 'api/server.ts');
await waitForPort(port, env.SVC_HOST ?? '127.0.0.1', 120_000);
console.log(`[start] ready: http://${env.SVC_HOST ?? '127.0.0.1'}:${port}  (API docs at /api/v1/docs; Ctrl-C stops everything)`);
