import { ApplicationFailure } from '@temporalio/common';
import { ConnectorError, type ConnectorFailureReason } from '../connectors/shared/errors.js';
import { DomainError } from '../domain/errors.js';

/*
 * How refusals cross Temporal. Activities turn a DomainError into a non-retryable
 * ApplicationFailure of type DomainError (a bad SQL statement fails at once instead of being
 * retried); whoever waits on a workflow turns it back into the DomainError, so the API answers
 * with the same code. Workflow-safe: no I/O, only @temporalio/common and the domain's error type.
 */

export const DOMAIN_FAILURE = 'DomainError';
/** A remote system failed (connectors/shared/errors.ts): retryable or not, as the connector classified it. */
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
