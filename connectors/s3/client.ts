import { S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import type { Logger } from 'pino';
import { classify, describeReason, reasonOfStatus } from '../shared/policy/classify.js';
import { egressAgents } from '../shared/policy/egress.js';
import { ConnectorError, type ConnectorFailureReason } from '../../domain/transfers.js';

/** An s3 configuration as the connector receives it (validated, secrets decrypted). */
export interface S3Config {
  bucket: string;
  region: string;
  endpoint?: string;
  force_path_style: boolean;
  prefix: string;
  access_key?: string;
  secret_key?: string;
  session_token?: string;
}

/**
 * One S3 client per call, holding this configuration's credentials only. Without an access key
 * requests go unsigned (public buckets): never the service's own AWS credentials from its
 * environment or instance profile, which the SDK would otherwise pick up and lend to every user.
 */
/** Runs `fn` with a client of its own, destroyed after (its sockets closed) whatever `fn` did. */
export async function withS3Client<T>(config: S3Config, log: Logger | undefined, fn: (client: S3Client) => Promise<T>): Promise<T> {
  const client = s3Client(config, log);
  try {
    return await fn(client);
  } finally {
    client.destroy();
  }
}

export function s3Client(config: S3Config, log?: Logger): S3Client {
  if (config.access_key && !config.secret_key) {
    throw new ConnectorError('authentication_failed', 'The configuration has an access_key but no secret_key', { bucket: config.bucket }, false);
  }
  const signed = Boolean(config.access_key);
  return new S3Client({
    region: config.region,
    ...(config.endpoint ? { endpoint: config.endpoint } : {}),
    forcePathStyle: config.force_path_style,
    credentials: signed
      ? { accessKeyId: config.access_key!, secretAccessKey: config.secret_key!, ...(config.session_token ? { sessionToken: config.session_token } : {}) }
      : { accessKeyId: '', secretAccessKey: '' },
    ...(signed ? {} : { signer: { sign: async (request) => request } }),
    // One retry for a dropped connection; Runs retry classified transient failures themselves.
    // The SDK writes some warnings to the console unless it has a logger; its info lines (each
    // request's input and output) are not wanted at all.
    logger: {
      debug: () => undefined,
      info: () => undefined,
      warn: (message: unknown) => log?.debug({ s3: String(message) }, 'S3 client warning'),
      error: (message: unknown) => log?.debug({ s3: String(message) }, 'S3 client error'),
    },
    maxAttempts: 2,
    // Every connection through the outbound policy (checked and pinned after DNS resolution).
    requestHandler: { connectionTimeout: 5_000, httpAgent: egressAgents().http, httpsAgent: egressAgents().https },
    // S3-compatible stores often refuse the flexible checksums (CRC32 trailers) the SDK sends to
    // AWS by default; they get plain requests, as before those checksums existed.
    ...(config.endpoint ? { requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' } : {}),
  });
}

/** What the messages and results name: the bucket and where it lives, never a credential. */
export function s3Where(config: S3Config, key?: string): Record<string, string> {
  return { bucket: config.bucket, ...(key === undefined ? {} : { key }), endpoint: config.endpoint ?? `AWS S3 (${config.region})` };
}

const codeReasons: Record<string, ConnectorFailureReason> = {
  NoSuchBucket: 'not_found',
  NoSuchKey: 'not_found',
  NotFound: 'not_found',
  InvalidAccessKeyId: 'authentication_failed',
  SignatureDoesNotMatch: 'authentication_failed',
  InvalidToken: 'authentication_failed',
  ExpiredToken: 'authentication_failed',
  TokenRefreshRequired: 'authentication_failed',
  AuthorizationHeaderMalformed: 'authentication_failed',
  AccessDenied: 'permission_denied',
  Forbidden: 'permission_denied',
  AllAccessDisabled: 'permission_denied',
  AccountProblem: 'permission_denied',
  InvalidObjectState: 'permission_denied',
  PermanentRedirect: 'invalid_response',
  RequestTimeout: 'timeout',
  SlowDown: 'server_error',
  InternalError: 'server_error',
  ServiceUnavailable: 'server_error',
  EntityTooLarge: 'too_large',
};

/**
 * A ConnectorError for any failure of an S3 call. S3's own error code picks the reason (the
 * SDK's message is not passed on: ours names the bucket and key); network failures are
 * classified like every connector's.
 */
export function s3Failure(error: unknown, what: string, where: Record<string, string>): ConnectorError {
  if (error instanceof ConnectorError) return error;
  if (error instanceof S3ServiceException || (error as { $metadata?: unknown })?.$metadata) {
    const e = error as S3ServiceException;
    const status = e.$metadata?.httpStatusCode;
    if (status !== undefined || codeReasons[e.name]) {
      const reason = codeReasons[e.name] ?? (status ? reasonOfStatus(status) : 'invalid_response');
      const code = e.name && e.name !== 'Unknown' && e.name !== 'UnknownError' ? e.name : null;
      const hint = e.name === 'PermanentRedirect' ? ': the bucket is in another region or needs another endpoint' : '';
      return new ConnectorError(reason, `${what} ${describeReason(reason)}${code ? ` (${code})` : ` (HTTP ${status})`}${hint}`, {
        ...where,
        ...(code ? { s3_error: code } : {}),
        ...(status ? { http_status: status } : {}),
      });
    }
  }
  return classify(error, what, where);
}

/** Whether an S3 call failed because the object or bucket is not there (HEAD answers carry no code). */
export const isMissing = (error: unknown) => {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.$metadata?.httpStatusCode === 404 || e?.name === 'NotFound' || e?.name === 'NoSuchKey';
};

/** Whether a conditional GET answered 304 Not Modified (the SDK reports it as an error). */
export const isNotModified = (error: unknown) => (error as { $metadata?: { httpStatusCode?: number } })?.$metadata?.httpStatusCode === 304;
