import type { ConnectorFailureReason } from '../types.js';

// The reasons are declared beside the connector contract (../types.ts), which shared code builds on.
export type { ConnectorFailureReason };

/** Reasons worth retrying with backoff: the same request may well succeed a little later. */
const transient: ReadonlySet<ConnectorFailureReason> = new Set(['unreachable', 'timeout', 'server_error']);

/**
 * What a connector throws when a transfer fails: a classified reason, whether trying again can
 * help (Runs retry only those), and a secret-free message. Activities carry it across Temporal
 * as an ApplicationFailure of type ConnectorError (temporal/failures.ts); the API maps it to
 * the public code of the operation (source_failed, delivery_failed, postgis_failed …).
 */
export class ConnectorError extends Error {
  readonly retryable: boolean;
  constructor(
    readonly reason: ConnectorFailureReason,
    message: string,
    readonly details: Record<string, unknown> = {},
    retryable?: boolean,
  ) {
    super(message);
    this.name = 'ConnectorError';
    this.retryable = retryable ?? transient.has(reason);
  }
}

export const isConnectorError = (e: unknown): e is ConnectorError => e instanceof ConnectorError;
