import { Connection } from '@temporalio/client';
import type { Config } from '../platform/config.js';

export interface PollerWait {
  /** How many workers (distinct identities) must poll; one by default. */
  count?: number;
  /**
   * Which of the task queue's pollers to count: workflow tasks (a worker is up; the API checks
   * for one before a convert) or activity tasks (a worker that can run a step).
   */
  kind?: 'workflow' | 'activity';
  timeoutMs?: number;
}

/** Resolves once `count` workers poll the configured task queue; throws after `timeoutMs`. */
export async function waitForPollers(
  config: Pick<Config, 'temporalAddress' | 'temporalNamespace' | 'taskQueue'>,
  { count = 1, kind = 'workflow', timeoutMs = 20_000 }: PollerWait = {},
): Promise<void> {
  const connection = await Connection.connect({ address: config.temporalAddress });
  try {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const r = await connection.workflowService.describeTaskQueue({
        namespace: config.temporalNamespace,
        taskQueue: { name: config.taskQueue },
        taskQueueType: kind === 'workflow' ? 1 : 2,
      });
      if (new Set((r.pollers ?? []).map((p) => p.identity)).size >= count) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`fewer than ${count} workers poll ${config.taskQueue} (${kind} tasks) after ${timeoutMs} ms`);
  } finally {
    await connection.close();
  }
}
