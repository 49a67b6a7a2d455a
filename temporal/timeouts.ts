import type { ActivityOptions } from '@temporalio/workflow';

/** Named timeout and retry profiles; every activity call picks one. */
export const timeouts = {
  quick: { startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 3 } },
  /**
   * Appending an event: short, retried with backoff through a database restart (a few minutes),
   * refusals by the domain fail at once.
   */
  record: {
    startToCloseTimeout: '30 seconds',
    retry: {
      initialInterval: '500 milliseconds',
      backoffCoefficient: 2,
      maximumInterval: '15 seconds',
      maximumAttempts: 25,
      nonRetryableErrorTypes: ['DomainError'],
    },
  },
  /**
   * Appending an event from a local activity (a Run's start and end): the same retries as
   * `record`, run by the worker inside the workflow task. A worker that dies meanwhile loses the
   * task, and the next worker runs the bookkeeping again (recording is idempotent).
   */
  localRecord: {
    startToCloseTimeout: '30 seconds',
    retry: {
      initialInterval: '500 milliseconds',
      backoffCoefficient: 2,
      maximumInterval: '15 seconds',
      maximumAttempts: 25,
      nonRetryableErrorTypes: ['DomainError'],
    },
  },
  /**
   * An on-change check (a local activity): one cheap request to the Source. A failed check is not
   * retried for long: the next one comes within minutes.
   */
  changeCheck: {
    startToCloseTimeout: '90 seconds',
    retry: { initialInterval: '2 seconds', maximumAttempts: 2, nonRetryableErrorTypes: ['DomainError'] },
  },
  /**
   * GDAL work: long, heartbeating. A worker that crashed (npm start restarts it) stops
   * heartbeating, and its attempt is retried once the heartbeat timeout has passed: short enough
   * that a waiting convert call gets its answer, long enough for a loaded machine's heartbeats.
   */
  processing: { startToCloseTimeout: '60 minutes', heartbeatTimeout: '30 seconds', retry: { maximumAttempts: 3, nonRetryableErrorTypes: ['DomainError'] } },
  /**
   * A transfer someone waits for (a Workspace delivery): a few quick retries of transient
   * failures (connection refused, timeouts, 5xx); classified permanent ones are non-retryable.
   */
  interactiveTransfer: {
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '30 seconds',
    retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '10 seconds', maximumAttempts: 3, nonRetryableErrorTypes: ['DomainError'] },
  },
  /**
   * A Run's extract and deliver: nobody waits on the line, so transient remote failures
   * (connection refused, timeouts, 5xx) are retried with backoff for about a quarter of an hour;
   * classified permanent ones (bad credentials, missing table, 4xx) and domain refusals fail at
   * once. A killed worker's attempt is retried once its heartbeats stop (30 s).
   */
  runTransfer: {
    startToCloseTimeout: '2 hours',
    heartbeatTimeout: '30 seconds',
    retry: { initialInterval: '5 seconds', backoffCoefficient: 2, maximumInterval: '5 minutes', maximumAttempts: 6, nonRetryableErrorTypes: ['DomainError'] },
  },
  /**
   * Sending one notification (a webhook POST, an email): nobody waits, and a receiver that is
   * down for a while should still hear of the failure, so transient failures are retried with
   * backoff for about twenty minutes (2 s, tripling, at most 10 minutes apart, 8 attempts);
   * refusals that retrying cannot change (bad credentials, 4xx, a deleted channel) fail at once.
   */
  notify: {
    startToCloseTimeout: '1 minute',
    retry: { initialInterval: '2 seconds', backoffCoefficient: 3, maximumInterval: '10 minutes', maximumAttempts: 8, nonRetryableErrorTypes: ['DomainError'] },
  },
} satisfies Record<string, ActivityOptions>;

/**
 * A profile with the heartbeat timeout the worker is configured with (SVC_HEARTBEAT_TIMEOUT_S),
 * which reaches a workflow through an activity's result; histories recorded before the setting
 * existed carry none and keep the profile's own.
 */
export function withHeartbeatTimeout<T extends ActivityOptions>(profile: T, heartbeatTimeoutMs: number | undefined): T {
  return heartbeatTimeoutMs ? { ...profile, heartbeatTimeout: heartbeatTimeoutMs } : profile;
}
