import { createPrivateKey } from 'node:crypto';
import { BigQuery, type Job } from '@google-cloud/bigquery';
import { JWT } from 'google-auth-library';
import { classify } from '../shared/policy/classify.js';
import { ConnectorError, type ConnectorFailureReason } from '../../domain/transfers.js';
import { untilAborted } from '../shared/sql/session.js';
import type { ConnectorContext } from '../types.js';
import { bigQueryFetch, useBigQueryTransport } from './transport.js';

/*
 * BigQuery through Google's own client library (@google-cloud/bigquery): its authentication,
 * transport and retries, with requests the REST reference documents (datasets, tables, jobs,
 * getQueryResults, tabledata.list, the upload endpoint of load jobs). The service-account key
 * signs its own short-lived tokens (a self-signed JWT with the BigQuery scope, which Google's
 * APIs accept in place of an OAuth access token), so no token server is contacted: only the
 * BigQuery endpoint is. Errors are classified by the HTTP status and the `reason` of BigQuery's
 * error objects, never by message text.
 *
 * Every request goes through the outbound policy (connectors/shared/policy/egress.ts) and its redirect
 * rule (redirects.ts): the library's through transport.ts (in place of teeny-request's
 * node-fetch), the auth client's through gaxios with the same fetch.
 */
useBigQueryTransport();

export interface BigQueryConfig {
  project_id: string;
  dataset: string;
  location?: string | undefined;
  credentials_json?: string | undefined;
  api_endpoint?: string | undefined;
}

const SCOPE = 'https://www.googleapis.com/auth/bigquery';
export const DEFAULT_ENDPOINT = 'https://bigquery.googleapis.com';
/** The BigQuery dialect's spatial reference: GEOGRAPHY is always WGS 84 (longitude, latitude). */
export const GEOGRAPHY_EPSG = 4326;

export const endpointOf = (c: BigQueryConfig) => (c.api_endpoint ?? DEFAULT_ENDPOINT).replace(/\/+$/, '');
export const describeServer = (c: BigQueryConfig) => `BigQuery project ${c.project_id}`;
export const triedOf = (c: BigQueryConfig) => ({ endpoint: endpointOf(c), project: c.project_id, dataset: c.dataset, location: c.location ?? null });

interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
}

/** The service account of credentials_json, checked before anything is sent; errors never quote the key. */
export function serviceAccount(config: BigQueryConfig): ServiceAccountKey {
  const bad = (why: string) =>
    new ConnectorError('authentication_failed', `credentials_json ${why}: paste the whole JSON key file of a service account`, triedOf(config), false);
  if (!config.credentials_json) throw bad('is missing');
  let key: Partial<ServiceAccountKey> & { type?: string };
  try {
    key = JSON.parse(config.credentials_json) as typeof key;
  } catch {
    throw bad('is not JSON');
  }
  if (typeof key !== 'object' || key === null || typeof key.client_email !== 'string' || typeof key.private_key !== 'string')
    throw bad('has no client_email and private_key');
  if (key.type !== undefined && key.type !== 'service_account') throw bad(`is a "${String(key.type)}" key, not a service account key`);
  try {
    createPrivateKey(key.private_key);
  } catch {
    throw bad('holds a private_key that is not a PEM private key');
  }
  return {
    client_email: key.client_email,
    private_key: key.private_key,
    ...(typeof key.private_key_id === 'string' ? { private_key_id: key.private_key_id } : {}),
  };
}

/** `retries`: how often the client library retries a failed request (0 for a connection test with a short deadline). */
export function bigQueryClient(config: BigQueryConfig, retries = 2): BigQuery {
  const key = serviceAccount(config);
  const authClient = new JWT({
    email: key.client_email,
    key: key.private_key,
    ...(key.private_key_id ? { keyId: key.private_key_id } : {}),
    scopes: [SCOPE],
    // Token requests (none with a self-signed JWT, but the library may still make one) pass the policy too.
    transporterOptions: { fetchImplementation: bigQueryFetch },
  });
  authClient.useJWTAccessWithScope = true;
  return new BigQuery({
    projectId: config.project_id,
    ...(config.location ? { location: config.location } : {}),
    apiEndpoint: endpointOf(config),
    authClient,
    maxRetries: retries,
    autoRetry: retries > 0,
  });
}

/** BigQuery's error reasons (https://cloud.google.com/bigquery/docs/error-messages) → ours. */
const reasons: Record<string, ConnectorFailureReason> = {
  accessDenied: 'permission_denied',
  billingNotEnabled: 'permission_denied',
  billingTierLimitExceeded: 'permission_denied',
  notFound: 'not_found',
  duplicate: 'target_exists',
  invalid: 'invalid_data',
  invalidQuery: 'invalid_data',
  invalidUser: 'authentication_failed',
  quotaExceeded: 'server_error',
  rateLimitExceeded: 'server_error',
  backendError: 'server_error',
  internalError: 'server_error',
  jobBackendError: 'server_error',
  jobInternalError: 'server_error',
  notImplemented: 'invalid_data',
  resourceInUse: 'server_error',
  resourcesExceeded: 'invalid_data',
  responseTooLarge: 'too_large',
  stopped: 'timeout',
  timeout: 'timeout',
  tableUnavailable: 'server_error',
};

interface ApiErrorLike {
  code?: unknown;
  message?: unknown;
  errors?: { reason?: string; message?: string }[];
  reason?: string;
}

/** Any error of a BigQuery call (an ApiError, a job's errorResult, a network error) as a ConnectorError. */
export function classifyBigQuery(error: unknown, what: string, details: Record<string, unknown> = {}): ConnectorError {
  if (error instanceof ConnectorError) return error;
  const e = (error ?? {}) as ApiErrorLike;
  const status = typeof e.code === 'number' ? e.code : undefined;
  const reason = e.errors?.[0]?.reason ?? e.reason;
  const message = typeof e.message === 'string' ? e.message : '';
  if (status === 401)
    return new ConnectorError('authentication_failed', `${what} refused the service account's credentials: ${message}`, { ...details, status });
  if (reason && reasons[reason])
    return new ConnectorError(reasons[reason], `${what}: ${message}`, { ...details, ...(status ? { status } : {}), error_reason: reason });
  if (status === 403) return new ConnectorError('permission_denied', `${what}: ${message}`, { ...details, status });
  if (status === 404) return new ConnectorError('not_found', `${what}: ${message}`, { ...details, status });
  if (status === 400) return new ConnectorError('invalid_data', `${what}: ${message}`, { ...details, status });
  if (status !== undefined && (status === 429 || status >= 500)) return new ConnectorError('server_error', `${what}: ${message}`, { ...details, status });
  return classify(error, what, details);
}

/**
 * One call (or several) to BigQuery, held to ctx.signal: the client library has no abort
 * support, so the caller stops waiting and the late answer is dropped.
 */
export async function call<T>(config: BigQueryConfig, ctx: ConnectorContext, what: string, fn: () => Promise<T>): Promise<T> {
  const label = `${describeServer(config)}: ${what}`;
  if (ctx.signal.aborted) throw new ConnectorError('timeout', `${label}: stopped before it started`, triedOf(config));
  try {
    return await untilAborted(ctx.signal, fn(), () => new ConnectorError('timeout', `${label}: no answer in time (deadline or cancellation)`, triedOf(config)));
  } catch (error) {
    throw classifyBigQuery(error, label, triedOf(config));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface JobStatus {
  state?: string;
  errorResult?: { reason?: string; message?: string } | null;
}

/** Waits for a job to be DONE (polling jobs.get); a job that failed throws its errorResult, classified. */
export async function waitForJob(config: BigQueryConfig, ctx: ConnectorContext, job: Job, what: string): Promise<Record<string, any>> {
  for (let delay = 200; ; delay = Math.min(delay * 2, 5_000)) {
    const [metadata] = await call(config, ctx, what, () => job.getMetadata());
    const status = (metadata.status ?? {}) as JobStatus;
    if (status.state === 'DONE') {
      if (status.errorResult) {
        throw classifyBigQuery(
          { reason: status.errorResult.reason, message: status.errorResult.message ?? 'the job failed' },
          `${describeServer(config)}: ${what}`,
          { job_id: job.id },
        );
      }
      return metadata as Record<string, any>;
    }
    await sleep(delay);
  }
}

/** `project.dataset.table` quoted for GoogleSQL. */
export const tableRef = (project: string, dataset: string, table: string) => `\`${[project, dataset, table].join('.').replace(/[`\\]/g, (c) => `\\${c}`)}\``;
/** A column name quoted for GoogleSQL. */
export const ident = (name: string) => `\`${name.replace(/[`\\]/g, (c) => `\\${c}`)}\``;
