import type { ActivityOptions } from '@temporalio/workflow';

/** Named timeout and retry profiles; every activity call picks one. */
export const timeouts = {
  quick: { startToCloseTimeout: '30 seconds', retry: { maximumAttempts: 3 } },
  processing: { startToCloseTimeout: '60 minutes', heartbeatTimeout: '2 minutes', retry: { maximumAttempts: 3, nonRetryableErrorTypes: ['DomainError'] } },
} satisfies Record<string, ActivityOptions>;
