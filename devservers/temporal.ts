import { Connection } from '@temporalio/client';
import type { Config } from '../platform/config.js';

/** Resolves once Temporal lists a poller on the task queue: the API checks for one before a convert. */
export async function waitForPoller(config: Config, timeoutMs = 20_000): Promise<void> {
  const connection = await Connection.connect({ address: config.temporalAddress });
  try {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const r = await connection.workflowService.describeTaskQueue({
        namespace: config.temporalNamespace,
        taskQueue: { name: config.taskQueue },
        taskQueueType: 1,
      });
      if ((r.pollers ?? []).length > 0) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`no poller on ${config.taskQueue} after ${timeoutMs} ms`);
  } finally {
    await connection.close();
  }
}
