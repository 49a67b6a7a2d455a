import { DomainError } from '../domain/errors.js';
import type { Services } from './services.js';

const FRESH_MS = 30_000;
const seenAt = new WeakMap<Pick<Services, 'config'>, number>();

/**
 * A convert or delivery waits for a worker; with none polling the task queue it would wait until
 * the client gives up. Temporal knows who polled lately, so the API can say at once what is
 * missing. A positive answer is remembered briefly (per process's services) to keep this off the
 * hot path.
 */
export async function requireWorker(services: Pick<Services, 'config' | 'temporal'>): Promise<void> {
  const now = Date.now();
  if (now - (seenAt.get(services) ?? 0) < FRESH_MS) return;
  if (!services.temporal) throw new DomainError('internal_error', 'The service is not connected to Temporal, so nothing can be converted');
  const response = await services.temporal.workflowService.describeTaskQueue({
    namespace: services.config.temporalNamespace,
    taskQueue: { name: services.config.taskQueue },
    taskQueueType: 1, // workflow tasks
  });
  if ((response.pollers ?? []).length === 0) {
    throw new DomainError(
      'internal_error',
      `No worker is running for task queue "${services.config.taskQueue}": start one (npm start does, or node --expose-gc --import tsx worker/worker.ts) and try again`,
    );
  }
  seenAt.set(services, now);
}
