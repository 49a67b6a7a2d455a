import { ActivityFailure, ApplicationFailure, proxyActivities, sleep } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { NotificationDelivery, NotificationFailureDetails, NotifyRunInput } from '../temporal/notifications.js';
import { timeouts } from '../temporal/timeouts.js';

const { sendNotification } = proxyActivities<Activities>(timeouts.notify);
const { recordNotification } = proxyActivities<Activities>(timeouts.record);

/**
 * The notifications about one Run, workflow id `notify-<runId>-<outcome|auto_disable|slow>`,
 * started by the reactor that follows the Run's events (application/run-notifications.ts). Each
 * channel is sent to by an activity with its own retries (timeouts.notify), in parallel, and what
 * came of it, delivered or given up on, is recorded on the Run. A slow watch first sleeps (a
 * durable timer) until the Run has run for the subscription's threshold. Deterministic: the
 * clock read here is the workflow's.
 */
export async function notifyRunWorkflow(input: NotifyRunInput): Promise<void> {
  await Promise.all(input.deliveries.map((delivery) => deliver(input, delivery)));
}

async function deliver(input: NotifyRunInput, delivery: NotificationDelivery): Promise<void> {
  if (delivery.afterSeconds !== undefined && input.startedAt) {
    const due = Date.parse(input.startedAt) + delivery.afterSeconds * 1000 - Date.now();
    if (due > 0) await sleep(due);
  }
  const about = { runId: input.runId, ownerId: input.ownerId, channelId: delivery.channelId, event: delivery.event };
  let outcome: { status: 'delivered' | 'failed'; attempts: number; error: string | null };
  try {
    const sent = await sendNotification({ ...about, ...(delivery.afterSeconds === undefined ? {} : { afterSeconds: delivery.afterSeconds }) });
    if (!sent.sent) return;
    outcome = { status: 'delivered', attempts: sent.attempt, error: null };
  } catch (error) {
    const cause = error instanceof ActivityFailure ? error.cause : error;
    const details = (cause instanceof ApplicationFailure ? cause.details?.[0] : undefined) as NotificationFailureDetails | undefined;
    outcome = { status: 'failed', attempts: details?.attempt ?? 1, error: cause instanceof Error ? cause.message : 'the notification could not be sent' };
  }
  await recordNotification({ ...about, ...outcome });
}
