import { WorkflowExecutionAlreadyStartedError, WorkflowIdReusePolicy } from '@temporalio/client';
import { jobDecider, jobStream, type DisabledReason } from '../domain/jobs/job.js';
import type { RunOutcome } from '../domain/runs/triggers.js';
import { outcomeEvents, recipients, slowWatches } from '../domain/notifications/subscriptions.js';
import type { StoredEvent } from '../eventstore/port.js';
import type { Projector } from '../projections/projector.js';
import { notifyWorkflowId } from '../temporal/ids.js';
import type { NotifyRunInput } from '../temporal/notifications.js';
import { load } from './commands.js';
import type { Services } from './services.js';

/*
 * Who is told about a Run, and when. A reactor follows the event store like a projection (its
 * own checkpoint) and, for each event that is news to someone, starts one notification workflow
 * (workflows/notify-run.ts) whose id derives from the Run, so a replayed event never sends twice:
 *   JobRunRecorded  a Run ended: failure, or success / recovery (its Job's previous Run failed);
 *   JobDisabled     the Job disabled itself after repeated failures (auto_disable);
 *   RunStarted      a Run started: a slow watch for the channels subscribed to `slow`.
 * Why a reactor and not the Run's own workflow: a Run's end would otherwise wait for remote
 * receivers, holding its Job's next Run (the coordinator runs them one at a time); the Job's
 * auto-disable is decided by the Job, not the Run; and the Run workflow's histories stay as they
 * are (no patch). The workflow retries each delivery itself, so the reactor's part is only to
 * start it, once: a Temporal outage rolls its batch back and it tries again from its checkpoint.
 */

/** Events older than this are not news: a reactor replayed from the start (first deployment, a new version) tells nobody about old Runs. */
export const NOTIFICATION_FRESHNESS_MS = 24 * 3_600_000;

async function startNotifications(services: Pick<Services, 'temporal' | 'config'>, about: 'outcome' | 'auto_disable' | 'slow', input: NotifyRunInput) {
  if (input.deliveries.length === 0) return;
  try {
    await services.temporal!.workflow.start('notifyRunWorkflow', {
      workflowId: notifyWorkflowId(input.runId, about),
      taskQueue: services.config.taskQueue,
      args: [input],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}

export function runNotificationReactor(services: Pick<Services, 'store' | 'temporal' | 'config' | 'clock'>): Projector {
  const subscribed = async (jobId: string) => {
    const { state } = await load(services, jobStream(jobId), jobDecider);
    return state.status === 'active' && state.definition.notifications?.length ? state : null;
  };
  const react = async (event: StoredEvent) => {
    const d = event.data as Record<string, unknown>;
    switch (event.type) {
      case 'JobRunRecorded': {
        const events = outcomeEvents(d.status as RunOutcome, (d.previous_status as 'succeeded' | 'failed' | null | undefined) ?? null);
        const job = events.length ? await subscribed(String(d.job_id)) : null;
        if (!job) return;
        await startNotifications(services, 'outcome', {
          runId: String(d.run_id),
          ownerId: job.ownerId,
          deliveries: recipients(job.definition.notifications!, events),
        });
        return;
      }
      case 'JobDisabled': {
        const reason = d.reason as DisabledReason;
        if (reason.kind !== 'consecutive_failures' || !reason.run_id) return;
        const job = await subscribed(String(d.job_id));
        if (!job) return;
        await startNotifications(services, 'auto_disable', {
          runId: reason.run_id,
          ownerId: job.ownerId,
          deliveries: recipients(job.definition.notifications!, ['auto_disable']),
        });
        return;
      }
      case 'RunStarted': {
        if (typeof d.job_id !== 'string') return;
        const job = await subscribed(d.job_id);
        if (!job) return;
        const watches = slowWatches(job.definition.notifications!);
        await startNotifications(services, 'slow', {
          runId: String(d.run_id),
          ownerId: job.ownerId,
          startedAt: String(d.at),
          deliveries: watches.map((w) => ({ channelId: w.channelId, event: 'slow' as const, afterSeconds: w.afterSeconds })),
        });
        return;
      }
      default:
        return;
    }
  };
  return {
    name: 'run-notifications',
    version: 1,
    tables: [],
    async createTables() {
      /* state lives in Temporal and on the Runs */
    },
    async apply(_tx, _schema, event) {
      if (services.clock().getTime() - event.createdAt.getTime() > NOTIFICATION_FRESHNESS_MS) return;
      await react(event);
    },
  };
}
