import '../platform/runtime-notices.js';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { createActivities, defaultWorkerName } from '../activities/index.js';
import { createServices } from '../application/bootstrap.js';
import { loadConfig, type Config } from '../platform/config.js';
import { guardProcess } from '../platform/process-guard.js';

export const workflowsPath = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

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
  const { worker, services, close } = await createWorker(config);
  // A dependency that throws in one of its callbacks must not end every Run this worker holds.
  guardProcess(services.log);
  services.log.info({ taskQueue: config.taskQueue }, 'worker started');
  // Once: Ctrl-C under `npm start` brings SIGINT from the terminal, then SIGTERM from start.ts,
  // and a second shutdown() throws, which would end the process in the middle of draining.
  const stop = () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  await worker.run();
  await close();
  services.log.info('worker stopped');
}
