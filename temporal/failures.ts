import { ApplicationFailure, TimeoutFailure, TimeoutType } from '@temporalio/common';
import { ConnectorError, type ConnectorFailureReason } from '../domain/transfers.js';
import { DomainError } from '../domain/errors.js';
import type { StepName } from '../domain/jobs/definition.js';
import type { RunError } from '../domain/runs/facts.js';

/*
 * How refusals cross Temporal. Activities turn a DomainError into a non-retryable
 * ApplicationFailure of type DomainError (a bad SQL statement fails at once instead of being
 * retried); whoever waits on a workflow turns it back into the DomainError, so the API answers
 * with the same code. Workflow-safe: no I/O, only @temporalio/common and the domain's error types
 * (domain/errors.ts, domain/transfers.ts).
 */

export const DOMAIN_FAILURE = 'DomainError';
/** A remote system failed (domain/transfers.ts): retryable or not, as the connector classified it. */
export const CONNECTOR_FAILURE = 'ConnectorError';

interface FailureDetails {
  code?: string;
  details?: Record<string, unknown>;
  /** Where the event store stood after the workflow recorded the failure (read-your-writes). */
  position?: string;
}

export function domainFailure(error: DomainError, position?: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: DOMAIN_FAILURE,
    message: error.message,
    nonRetryable: true,
    details: [{ code: error.code, details: error.details, ...(position ? { position } : {}) } satisfies FailureDetails],
  });
}

export function connectorFailure(error: ConnectorError): ApplicationFailure {
  return ApplicationFailure.create({
    type: CONNECTOR_FAILURE,
    message: error.message,
    nonRetryable: !error.retryable,
    details: [{ reason: error.reason, retryable: error.retryable, details: error.details }],
  });
}

/** In an activity: domain refusals and classified connector failures cross Temporal with their codes. */
export async function domainErrorsAsFailures<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof DomainError) throw domainFailure(error);
    if (error instanceof ConnectorError) throw connectorFailure(error);
    throw error;
  }
}

/** The ConnectorError inside a failure chain (activity or workflow failure), if any. */
export function connectorErrorFrom(error: unknown): ConnectorError | undefined {
  for (const current of causes(error)) {
    if (current instanceof ApplicationFailure && current.type === CONNECTOR_FAILURE) {
      const info = (current.details?.[0] ?? {}) as { reason?: ConnectorFailureReason; retryable?: boolean; details?: Record<string, unknown> };
      return new ConnectorError(info.reason ?? 'invalid_response', current.message, info.details ?? {}, info.retryable);
    }
  }
  return undefined;
}

function* causes(error: unknown): Generator<unknown> {
  let current: unknown = error;
  for (let depth = 0; current && depth < 8; depth++) {
    yield current;
    current = (current as { cause?: unknown }).cause;
  }
}

/** The DomainError inside a failure chain (workflow or activity failure), if any. */
export function domainErrorFrom(error: unknown): DomainError | undefined {
  for (const current of causes(error)) {
    if (current instanceof ApplicationFailure && current.type === DOMAIN_FAILURE) {
      const info = (current.details?.[0] ?? {}) as FailureDetails;
      return new DomainError(info.code ?? 'internal_error', current.message, info.details ?? {});
    }
  }
  return undefined;
}

/** The event-store position a workflow attached to its failure, if any. */
export function failurePosition(error: unknown): bigint | undefined {
  for (const current of causes(error)) {
    if (current instanceof ApplicationFailure) {
      const position = ((current.details?.[0] ?? {}) as FailureDetails).position;
      if (position) return BigInt(position);
    }
  }
  return undefined;
}

/**
 * The API's answer to a connection the outbound policy refused (connectors/shared/policy/egress.ts): 403,
 * naming the settings that decide it. Nothing was sent, so it is the same for open and closed ports.
 */
export function outboundRefusal(message: string): DomainError {
  return new DomainError('forbidden', message, { reason: 'refused_by_policy', settings: ['SVC_OUTBOUND_ALLOW', 'SVC_OUTBOUND_DENY'] });
}

/**
 * The public code of a remote failure during an operation: a Workspace import and a Run's
 * extract are source_failed, a delivery is delivery_failed; a few reasons have codes of their own.
 */
export function transferErrorCode(reason: ConnectorFailureReason, operation: 'import' | 'deliver'): string {
  if (reason === 'not_implemented') return 'not_implemented';
  if (reason === 'refused_by_policy') return 'forbidden';
  if (reason === 'target_exists') return 'target_exists';
  if (reason === 'too_large' && operation === 'import') return 'upload_too_large';
  return operation === 'import' ? 'source_failed' : 'delivery_failed';
}

/**
 * What a Run records when a step failed for good (its retries spent, or a failure that retrying
 * cannot help): the public code, a secret-free message, the step, and whether running the Job
 * again later may succeed. Workflow-safe.
 */
export function runErrorOf(error: unknown, step: StepName): RunError {
  const domain = domainErrorFrom(error);
  if (domain) return { code: domain.code, message: domain.message, step, retryable: false };
  const remote = connectorErrorFrom(error);
  if (remote) {
    const code =
      step === 'extract' ? transferErrorCode(remote.reason, 'import') : step === 'deliver' ? transferErrorCode(remote.reason, 'deliver') : 'internal_error';
    return { code, message: remote.message, step, retryable: remote.retryable, reason: remote.reason };
  }
  const timeout = timeoutMessage(error, `The ${step} step`);
  if (timeout) return { code: 'timeout', message: timeout, step, retryable: true };
  return { code: 'internal_error', message: `The ${step} step failed on the worker; the worker's log has the details`, step, retryable: true };
}

/**
 * What a Temporal timeout means, in words that name what to change, or null when the failure is
 * not a timeout. A heartbeat timeout is a worker that stopped answering (it crashed, or its event
 * loop was held); a start-to-close timeout is work longer than the activity's limit. Workflow-safe.
 */
export function timeoutMessage(error: unknown, what: string): string | null {
  for (const current of causes(error)) {
    if (!(current instanceof TimeoutFailure)) continue;
    if (current.timeoutType === TimeoutType.HEARTBEAT) {
      return `${what} did not finish in time: the worker stopped reporting for longer than the heartbeat timeout (SVC_HEARTBEAT_TIMEOUT_S); it may have crashed or run out of memory, and its log says which`;
    }
    if (current.timeoutType === TimeoutType.START_TO_CLOSE || current.timeoutType === TimeoutType.SCHEDULE_TO_CLOSE) {
      return `${what} did not finish in time: it ran longer than its limit; a bigger dataset needs a higher SVC_GDAL_TIMEOUT_MIN, or split the work`;
    }
    return `${what} did not finish in time`;
  }
  return null;
}
