import type { Worker } from '@temporalio/worker';
import type { Config } from '../../platform/config.js';
import { createWorker } from '../../workflows/worker.js';

/** A real worker on the app's task queue and data folder, running until stop(). */
export async function startTestWorker(config: Config): Promise<{ worker: Worker; stop(): Promise<void> }> {
  const { worker, connection } = await createWorker(config);
  const running = worker.run();
  return {
    worker,
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
    },
  };
}

export const temporalAddress = process.env.SVC_TEST_TEMPORAL_ADDRESS;
