import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { createActivities, defaultWorkerName } from '../activities/index.js';
import { loadConfig, type Config } from '../platform/config.js';
import { createLogger } from '../platform/logger.js';

export const workflowsPath = fileURLToPath(new URL('./index.ts', import.meta.url));

let runtimeInstalled = false;

export async function createWorker(config: Config, connection?: NativeConnection) {
  if (!runtimeInstalled) {
    // The SDK logs every state change at INFO; our own logger reports what matters.
    Runtime.install({ logger: new DefaultLogger(config.logLevel === 'debug' ? 'INFO' : 'WARN') });
    runtimeInstalled = true;
  }
  const conn = connection ?? (await NativeConnection.connect({ address: config.temporalAddress }));
  const worker = await Worker.create({
    connection: conn,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    workflowsPath,
    activities: createActivities({ workerName: defaultWorkerName(), dataDir: config.dataDir }),
  });
  return { worker, connection: conn };
}

// Run as a process: `node --import tsx workflows/worker.ts`
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const config = loadConfig();
  const log = createLogger(config.logLevel, 'worker');
  const { worker, connection } = await createWorker(config);
  log.info({ taskQueue: config.taskQueue }, 'worker started');
  const stop = () => worker.shutdown();
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  await worker.run();
  await connection.close();
  log.info('worker stopped');
}
