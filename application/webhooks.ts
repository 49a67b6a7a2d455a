import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { DomainError } from '../domain/errors.js';
import { jobDecider, jobStream, type ActiveJob, type WebhookState } from '../domain/jobs/job.js';
import { loadJob } from '../projections/jobs.js';
import { findRun, type RunView } from '../projections/runs.js';
import { execute, load } from './commands.js';
import { checkRunValues } from './job-definitions.js';
import { checkQueueRoom, claimIdempotencyKey, recordQueuedRun, signalRun, type Log } from './runs.js';
import type { Services } from './services.js';

/*
 * A Job's inbound webhook: a URL of its own (/api/v1/hooks/jobs/<jobId>) that a CI pipeline, a
 * portal or a script calls to start a Run, with a secret of the Job's own (never a user's
 * token): issued and rotated (a new secret, shown once) and revoked from the Job. The secret is
 * sealed with the service key in the Job's events; the caller proves it holds it either
 *
 * - hmac: `X-Geoflow-Timestamp` (Unix seconds, within 5 minutes of ours) and
 *   `X-Geoflow-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<delivery id>.<body>">`, so a
 *   captured request cannot be replayed later or under another delivery id; or
 * - bearer: `Authorization: Bearer <secret>` (for callers that cannot sign).
 *
 * `X-Geoflow-Delivery` (the caller's delivery id) makes the call idempotent: the same id within
 * 24 hours answers the Run the first call started. The body may carry `{"parameters": {…}}`.
 * Any failure to authenticate is the same 401, whether the Job exists or not.
 */

export const SIGNATURE_TOLERANCE_MS = 5 * 60_000;
const SECRET_PREFIX = 'whsec_';
const sealContext = (jobId: string) => `job:${jobId}:webhook`;

export interface IssuedWebhook {
  auth: WebhookState['auth'];
  /** Shown once: the answer of issue and rotate. */
  secret: string;
  created_at: string;
  rotated_at: string | null;
}

/** Creates the Job's webhook, or rotates it (a new secret; the old one stops working at once). */
export async function issueWebhook(services: Services, ownerId: string, jobId: string, auth: WebhookState['auth']): Promise<IssuedWebhook> {
  await loadJob(services.pool, ownerId, jobId);
  const secret = `${SECRET_PREFIX}${randomBytes(32).toString('base64url')}`;
  const sealedSecret = services.cipher.encrypt(secret, sealContext(jobId));
  const result = await execute(services, jobStream(jobId), jobDecider, {
    type: 'IssueWebhook',
    jobId,
    actorId: ownerId,
    auth,
    sealedSecret,
    at: services.clock(),
  });
  if (result) await services.projections.waitFor(BigInt(result.position));
  const webhook = ((await loadJob(services.pool, ownerId, jobId)).state as ActiveJob).webhook!;
  return { auth: webhook.auth, secret, created_at: webhook.created_at, rotated_at: webhook.rotated_at };
}

export async function revokeWebhook(services: Services, ownerId: string, jobId: string): Promise<void> {
  const result = await execute(services, jobStream(jobId), jobDecider, { type: 'RevokeWebhook', jobId, actorId: ownerId, at: services.clock() });
  if (result) await services.projections.waitFor(BigInt(result.position));
}

/** What a webhook call brings: the headers that authenticate it, and the body as sent. */
export interface WebhookCall {
  jobId: string;
  authorization?: string | undefined;
  signature?: string | undefined;
  timestamp?: string | undefined;
  deliveryId?: string | undefined;
  rawBody: Buffer;
}

const refused = () =>
  new DomainError('unauthorized', 'The webhook call is not authenticated: wrong or missing signature, token or timestamp, or no webhook for this URL');

/** The signature the caller must send for these parts (exported for clients' tests and docs). */
export function signatureOf(secret: string, timestamp: string, deliveryId: string, body: Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${deliveryId}.`).update(body).digest('hex')}`;
}

const same = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** Whether a call proves it holds the secret, by the Job's auth mode (pure but for the clock reading given). */
export function authenticCall(webhook: Pick<WebhookState, 'auth'>, secret: string, call: Omit<WebhookCall, 'jobId'>, now: number): boolean {
  if (webhook.auth === 'bearer') {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(call.authorization ?? '');
    return Boolean(match && same(match[1]!, secret));
  }
  if (!call.signature || !call.timestamp || !/^\d{1,12}$/.test(call.timestamp)) return false;
  if (Math.abs(now - Number(call.timestamp) * 1000) > SIGNATURE_TOLERANCE_MS) return false;
  return same(call.signature, signatureOf(secret, call.timestamp, call.deliveryId ?? '', call.rawBody));
}

/** The body of a call: empty, or a JSON object with optional `parameters`. */
function parametersOf(raw: Buffer): Record<string, unknown> {
  if (raw.length === 0) return {};
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new DomainError('validation_error', 'The webhook body is not JSON: send nothing, or {"parameters": {…}}');
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw new DomainError('validation_error', 'The webhook body must be a JSON object');
  const parameters = (body as { parameters?: unknown }).parameters;
  if (parameters === undefined || parameters === null) return {};
  if (typeof parameters !== 'object' || Array.isArray(parameters)) {
    throw new DomainError('validation_error', 'Invalid request body: body.parameters: an object of parameter values', {
      issues: [{ path: 'body.parameters', message: 'an object of parameter values' }],
    });
  }
  return parameters as Record<string, unknown>;
}

/**
 * A webhook call: authenticated by the Job's secret, then a Run like Run Now's with trigger
 * `webhook` (a disabled Job refuses it: 409; its failures count towards disabling the Job).
 * The same delivery id within 24 hours answers the same Run (`replayed`).
 */
export async function triggerByWebhook(services: Services, call: WebhookCall, log: Log): Promise<{ run: RunView; replayed: boolean }> {
  const { state } = await load(services, jobStream(call.jobId), jobDecider);
  if (state.status !== 'active' || !state.webhook) throw refused();
  let secret: string;
  try {
    secret = services.cipher.decrypt(state.webhook.sealed_secret, sealContext(call.jobId));
  } catch {
    throw refused();
  }
  if (!authenticCall(state.webhook, secret, call, services.clock().getTime())) throw refused();

  const given = parametersOf(call.rawBody);
  const { ownerId } = state;
  let runId = services.newId('run');
  let replayed = false;
  if (call.deliveryId) {
    const claim = await claimIdempotencyKey(services, ownerId, call.jobId, `webhook\n${call.deliveryId}`, runId);
    runId = claim.runId;
    replayed = claim.replayed;
    if (replayed) {
      const existing = await findRun(services.pool, runId);
      if (existing) return { run: existing, replayed };
    }
  }
  if (!state.enabled) throw new DomainError('conflict', 'The Job is disabled: enable it to let its webhook start Runs', { enabled: false });
  const parameters = await checkRunValues(services, ownerId, state.definition, given);
  await checkQueueRoom(services, call.jobId);
  const ticket = {
    runId,
    jobId: call.jobId,
    ownerId,
    trigger: 'webhook' as const,
    retryOf: null,
    scheduledFor: null,
    parameters,
    ...(call.deliveryId ? { deliveryId: call.deliveryId } : {}),
  };
  try {
    await signalRun(services, ticket);
  } catch (error) {
    log.error({ err: error, jobId: call.jobId }, 'could not hand the webhook Run to Temporal');
    throw new DomainError('internal_error', 'The Run could not be started: the workflow service does not answer; nothing was recorded, try again');
  }
  const queued = await recordQueuedRun(services, ticket);
  await services.projections.waitFor(BigInt(queued.position));
  const run = await findRun(services.pool, runId);
  if (!run) throw new DomainError('internal_error', 'The Run was started but is not readable yet; ask again with the same delivery id');
  return { run, replayed };
}
