/**
 * What a connector throws when a transfer fails: a classified reason, whether trying again can
 * help (Runs retry only those), and a secret-free message. Activities carry it across Temporal
 * as an ApplicationFailure of type ConnectorError (temporal/failures.ts); the API maps it to
 * the public code of the operation (source_failed, delivery_failed, postgis_failed …).
 */
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
  /** The service's outbound policy (connectors/shared/egress.ts) refused the address: nothing was sent. */
  | 'refused_by_policy';

/** Reasons worth retrying with backoff: the same request may well succeed a little later. */
const transient: ReadonlySet<ConnectorFailureReason> = new Set(['unreachable', 'timeout', 'server_error']);

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
