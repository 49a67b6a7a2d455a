import { ApplicationFailure, Context } from '@temporalio/activity';
import { load, record } from '../application/commands.js';
import { openChannel } from '../application/notification-channels.js';
import type { Services } from '../application/services.js';
import { DomainError } from '../domain/errors.js';
import { jobDecider, jobStream } from '../domain/jobs/job.js';
import { channelDecider, channelStream } from '../domain/notifications/channel.js';
import { isSlow, notificationId, type NotificationEvent } from '../domain/notifications/subscriptions.js';
import { runDecider, runStream } from '../domain/runs/run.js';
import type { ExistingRun } from '../domain/runs/state.js';
import { isFinished } from '../domain/runs/statuses.js';
import { ConnectorError } from '../domain/transfers.js';
import type { NotificationFacts, RunFacts } from '../notifiers/message.js';
import { countNotificationDelivery } from '../platform/metrics.js';
import { NOTIFICATION_FAILURE, type NotificationFailureDetails } from '../temporal/notifications.js';

interface About {
  runId: string;
  ownerId: string;
  channelId: string;
  event: NotificationEvent;
}

/** How long a notification about a Run's end waits for that end to be recorded (the Job's record comes a moment before the Run's). */
const END_WAIT_MS = 15_000;

async function readRun(services: Pick<Services, 'store'>, runId: string): Promise<ExistingRun> {
  const { state } = await load(services, runStream(runId), runDecider);
  if (state.status === 'absent') throw new DomainError('run_not_found', `Run ${runId} was not found`);
  return state;
}

/** The Run once its end is recorded (or as it stands, for a slow watch). */
async function runForNotice(services: Pick<Services, 'store'>, runId: string, finished: boolean): Promise<ExistingRun> {
  const deadline = Date.now() + END_WAIT_MS;
  for (;;) {
    const run = await readRun(services, runId);
    if (!finished || isFinished(run.status) || Date.now() > deadline) return run;
    Context.current().heartbeat();
    await new Promise((r) => setTimeout(r, 200));
  }
}

function runFacts(run: ExistingRun, runId: string): RunFacts {
  const started = run.startedAt ?? null;
  const finished = run.finishedAt ?? null;
  return {
    id: runId,
    status: run.status,
    trigger: run.trigger,
    attempt: run.attempt,
    created_at: run.createdAt ?? '',
    started_at: started,
    finished_at: finished,
    duration_ms: started && finished ? Math.max(0, Date.parse(finished) - Date.parse(started)) : null,
    error: run.error ? { code: run.error.code, message: run.error.message, step: run.error.step } : null,
    skipped_reason: run.skippedReason ?? null,
    stats: { ...run.stats },
  };
}

/**
 * Sending the notifications about a Run (workflows/notify-run.ts): one activity sends to one
 * channel (retried by its profile), another records on the Run what came of it. The channel is
 * opened, and its secrets decrypted, here on the worker; payloads carry ids only.
 */
export function notificationActivities(services: Services) {
  return {
    /**
     * Sends one notification. A slow watch whose Run finished in time sends nothing (`sent:
     * false`). A failure crosses Temporal as an ApplicationFailure carrying the attempt number,
     * retryable as the sender classified it; its message is the sender's, which names the
     * endpoint and never a secret.
     */
    async sendNotification(input: About & { afterSeconds?: number }): Promise<{ sent: boolean; attempt: number }> {
      const { attempt } = Context.current().info;
      const fail = (message: string, retryable: boolean) =>
        ApplicationFailure.create({
          type: NOTIFICATION_FAILURE,
          message,
          nonRetryable: !retryable,
          details: [{ attempt } satisfies NotificationFailureDetails],
        });
      let facts: NotificationFacts;
      let channel;
      try {
        const run = await runForNotice(services, input.runId, input.event !== 'slow');
        if (
          input.event === 'slow' &&
          !isSlow(
            { startedAt: run.startedAt ?? null, finishedAt: run.finishedAt ?? null, running: run.status === 'running' },
            input.afterSeconds ?? 0,
            services.clock(),
          )
        ) {
          return { sent: false, attempt };
        }
        const job = (await load(services, jobStream(run.jobId), jobDecider)).state;
        const name = job.status === 'absent' ? run.snapshot.name : job.definition.name;
        const disabled = job.status !== 'absent' && job.disabledReason?.kind === 'consecutive_failures' ? job.disabledReason.message : undefined;
        channel = await openChannel(services, input.channelId, input.ownerId);
        const origin = services.config.publicOrigin?.replace(/\/+$/, '');
        facts = {
          event: input.event,
          delivery_id: `${input.runId}:${notificationId(input.event, input.channelId)}`,
          job: { id: run.jobId, name },
          run: runFacts(run, input.runId),
          ...(input.event === 'auto_disable' && disabled ? { disabled_reason: disabled } : {}),
          ...(input.event === 'slow' && input.afterSeconds ? { slow_after_seconds: input.afterSeconds } : {}),
          url: origin ? `${origin}/#/jobs/${run.jobId}/runs/${input.runId}` : null,
          sent_at: services.clock().toISOString(),
        };
      } catch (error) {
        // A deleted channel or Run: nothing to retry.
        if (error instanceof DomainError) throw fail(error.message, false);
        throw error;
      }
      try {
        await channel.notifier.send(channel.config, facts, { signal: Context.current().cancellationSignal });
        countNotificationDelivery(channel.notifier.type, 'sent');
      } catch (error) {
        // Every attempt counts, so a channel that needs retries shows as failures before its success.
        countNotificationDelivery(channel.notifier.type, 'failed');
        if (error instanceof ConnectorError) throw fail(error.message, error.retryable);
        services.log.warn({ err: error, runId: input.runId, channelId: input.channelId }, 'a notification failed unexpectedly');
        throw fail(`Sending through ${channel.notifier.label} failed unexpectedly; the worker's log has the details`, true);
      }
      return { sent: true, attempt };
    },

    /** Records on the Run what came of a notification (once per event and channel). */
    async recordNotification(input: About & { status: 'delivered' | 'failed'; attempts: number; error: string | null }): Promise<void> {
      const channel = (await load(services, channelStream(input.channelId), channelDecider)).state;
      const at = services.clock();
      await record(services, runStream(input.runId), runDecider, {
        type: 'RecordNotification',
        runId: input.runId,
        notification: {
          id: notificationId(input.event, input.channelId),
          event: input.event,
          channel_id: input.channelId,
          channel_type: channel.status === 'absent' ? 'unknown' : channel.type,
          channel_name: channel.status === 'absent' ? input.channelId : channel.name,
          status: input.status,
          attempts: input.attempts,
          error: input.error,
          at: at.toISOString(),
        },
        at,
      });
    },
  };
}
