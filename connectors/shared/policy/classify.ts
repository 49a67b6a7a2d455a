import { egressRefusalIn } from './egress.js';
import { ConnectorError, type ConnectorFailureReason } from '../../../domain/transfers.js';

/*
 * Turns the errors of Node's network stack and of protocol clients into a ConnectorError with a
 * reason, so every connector classifies the same way. Messages name what was tried (host, port,
 * bucket), never credentials: callers pass `what` without secrets.
 */

const codeReasons: Record<string, ConnectorFailureReason> = {
  ECONNREFUSED: 'unreachable',
  ECONNRESET: 'unreachable',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  ENOTFOUND: 'unreachable',
  EAI_AGAIN: 'unreachable',
  EPIPE: 'unreachable',
  ETIMEDOUT: 'timeout',
  ESOCKETTIMEDOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_SOCKET: 'unreachable',
  ABORT_ERR: 'timeout',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'tls_error',
  SELF_SIGNED_CERT_IN_CHAIN: 'tls_error',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'tls_error',
  CERT_HAS_EXPIRED: 'tls_error',
  ERR_TLS_CERT_ALTNAME_INVALID: 'tls_error',
  ERR_SSL_WRONG_VERSION_NUMBER: 'tls_error',
  EPROTO: 'tls_error',
  ENOENT: 'not_found',
  EACCES: 'permission_denied',
  EPERM: 'permission_denied',
};

function errorCode(error: unknown): string | undefined {
  for (let e: any = error, depth = 0; e && depth < 6; e = e.cause, depth++) {
    if (typeof e.code === 'string' && codeReasons[e.code]) return e.code;
    if (e.name === 'AbortError' || e.name === 'TimeoutError') return 'ABORT_ERR';
  }
  return undefined;
}

/** The ConnectorError an SDK wrapped (as `cause`), if any. */
export function connectorErrorIn(error: unknown): ConnectorError | undefined {
  for (let e: any = error, depth = 0; e && depth < 6; e = e.cause, depth++) if (e instanceof ConnectorError) return e;
  return undefined;
}

/** The reason of an HTTP status from a remote server. */
export function reasonOfStatus(status: number): ConnectorFailureReason {
  if (status === 401) return 'authentication_failed';
  if (status === 403) return 'permission_denied';
  if (status === 404 || status === 410) return 'not_found';
  if (status === 408 || status === 504) return 'timeout';
  if (status === 429 || status >= 500) return 'server_error';
  return 'invalid_response';
}

const sentences: Record<ConnectorFailureReason, string> = {
  unreachable: 'could not be reached',
  timeout: 'did not answer in time',
  authentication_failed: 'refused the credentials',
  permission_denied: 'denied access',
  tls_error: 'failed the TLS handshake or certificate check',
  not_found: 'has no such resource',
  invalid_response: 'answered something unexpected',
  invalid_data: 'returned data that cannot be read',
  target_exists: 'already has that target',
  too_large: 'holds more than the size limit',
  server_error: 'failed with a server error',
  not_implemented: 'is not supported yet',
  refused_by_policy: "is refused by the service's outbound policy",
};

/**
 * Classifies any error thrown while talking to `what` (for example "PostgreSQL at db:5432").
 * A ConnectorError passes through unchanged.
 */
export function classify(error: unknown, what: string, details: Record<string, unknown> = {}): ConnectorError {
  if (error instanceof ConnectorError) return error;
  // An SDK that wraps what our own transport threw (gaxios around policy-fetch.ts): that is the answer.
  const ours = connectorErrorIn(error);
  if (ours) return ours;
  // SDKs and fetch wrap a socket's error in their own: a policy refusal stays what it is.
  const refused = egressRefusalIn(error);
  if (refused) return refused;
  const code = errorCode(error);
  const reason: ConnectorFailureReason = code ? codeReasons[code]! : 'invalid_response';
  const detail = code ? ` (${code})` : '';
  return new ConnectorError(reason, `${what} ${sentences[reason]}${detail}`, { ...details, ...(code ? { error_code: code } : {}) });
}

export function describeReason(reason: ConnectorFailureReason): string {
  return sentences[reason];
}
