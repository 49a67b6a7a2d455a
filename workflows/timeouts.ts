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
    retry: { initialInterval: '500 milliseconds', backoffCoefficient: 2, maximumInterval: '15 seconds', maximumAttempts: 25, nonRetryableErrorTypes: ['DomainError'] },
  },
  processing: { startToCloseTimeout: '60 minutes', heartbeatTimeout: '2 minutes', retry: { maximumAttempts: 3, nonRetryableErrorTypes: ['DomainError'] } },
} satisfies Record<string, ActivityOptions>;
