import { ApplicationFailure } from '@temporalio/common';
import { DomainError } from '../domain/errors.js';

/**
 * Domain errors cross Temporal as non-retryable ApplicationFailures of type DomainError, so a bad
 * SQL statement fails at once instead of being retried, and the API can answer with its code.
 */
export async function domainErrorsAsFailures<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof DomainError) {
      throw ApplicationFailure.create({
        type: 'DomainError',
        message: error.message,
        nonRetryable: true,
        details: [{ code: error.code, details: error.details }],
      });
    }
    throw error;
  }
}

/** The inverse, for whoever waits on a workflow: the DomainError inside a failure chain, if any. */
export function domainErrorFrom(error: unknown): DomainError | undefined {
  let current: unknown = error;
  for (let depth = 0; current && depth < 6; depth++) {
    if (current instanceof ApplicationFailure && current.type === 'DomainError') {
      const info = (current.details?.[0] ?? {}) as { code?: string; details?: Record<string, unknown> };
      return new DomainError(info.code ?? 'internal_error', current.message, info.details ?? {});
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
