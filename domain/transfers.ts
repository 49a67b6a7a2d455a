/*
 * What a transfer with a remote system reports, shared by the connectors that do it, the
 * workflows that carry it across Temporal (temporal/failures.ts) and the use cases that answer
 * with it: why it failed (a classified ConnectorError) and what a delivery wrote. Pure values,
 * workflow-safe.
 */

/** Why a connection test or a transfer failed. */
export type ConnectorFailureReason =
  | 'unreachable'
  | 'timeout'
  | 'authentication_failed'
  | 'permission_denied'
  | 'tls_error'
  | 'not_found'
  | 'invalid_response'
  | 'invalid_data'
  | 'target_exists'
  | 'too_large'
  | 'server_error'
  | 'not_implemented'
  /** The service's outbound policy (connectors/shared/policy/egress.ts) refused the address: nothing was sent. */
  | 'refused_by_policy';

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

/** Public metadata of a delivery: no secrets, no server paths of ours. */
export interface DeliveryResult {
  /** The target as delivered (schema and table, bucket and key, remote path, url without credentials). */
  target: Record<string, unknown>;
  rows_written?: number;
  bytes_written?: number;
}
