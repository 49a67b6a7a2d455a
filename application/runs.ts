import { WorkflowIdReusePolicy } from '@temporalio/client';
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import { DomainError } from '../domain/errors.js';
import { plannedSteps, type JobDefinition } from '../domain/jobs/definition.js';
import { jobDecider, jobStream, ownedJob, type ActiveJob } from '../domain/jobs/job.js';
import { isAutomated } from '../domain/runs/triggers.js';
import { resolveValues, type ParameterValues } from '../domain/jobs/parameters.js';
import { missedBeyondCatchUp, nextFireTime } from '../domain/jobs/schedule.js';
import { automatedRequestSkip, type SkipReason } from '../domain/runs/automated-request.js';
import { runDecider, runStream } from '../domain/runs/run.js';
import type { ExistingRun, RetryDefinition, RunState } from '../domain/runs/state.js';
import type { RunStatus } from '../domain/runs/statuses.js';
import { WrongExpectedRevisionError } from '../eventstore/port.js';
import { loadJob } from '../projections/jobs.js';
import type { PageRequest } from '../projections/pagination.js';
import { findRun, hasRuns, listOwnerRuns, listRuns as readRuns, loadRun, queuedRuns, waitingOrRunning, type RunView } from '../projections/runs.js';
import { currentTraceparent } from '../platform/tracing.js';
import { jobWorkflowId } from '../temporal/ids.js';
import type { RunTicket } from '../temporal/tickets.js';
import { load, record } from './commands.js';
import { checkRunValues } from './job-definitions.js';
import type { Services } from './services.js';

/*
 * Where a Job's Run starts: Run Now (runNow) and a retry (retryRun) here, and the automated
 * requests (requestAutomatedRun: a schedule's fire, an on-change check, another Job's Run that
 * ended, through their activities and reactor; a webhook through application/webhooks.ts),
 * all through the same signalRun and recordQueuedRun. Every Run of a Job goes through the Job's coordinator workflow
 * (`job-<jobId>`, workflows/job-runs.ts), which runs them one at a time in the order they came:
 * that is what makes "two Runs of one Job never run at once" true by construction. A request
 * is a ticket signalled to the coordinator (signal-with-start: stored by Temporal even while no
 * worker runs, so Run Now answers at once) and then recorded as RunQueued. Both halves are
 * idempotent and the Run's workflow records RunQueued itself before it starts, so a process that
 * dies between the two leaves nothing half-done.
 */

/**
 * Runs that may wait behind the running one, per Job (checked when a Run is requested; a burst
 * of simultaneous requests can pass it by a few). A request beyond it is refused with 409
 * run_queue_full; a scheduled Run beyond it is skipped.
 */
export const MAX_QUEUED_RUNS = 10;

/** How long a repeated Idempotency-Key returns the same Run. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 3_600_000;

/**
 * A Run id derived from what asked for it (a Schedule's workflow id, an on-change check's, the
 * upstream Run and the Job of an after-trigger): a retried request asks for the same Run.
 */
export function derivedRunId(seed: string): string {
  const digest = createHash('sha256').update(seed).digest();
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let id = '';
  for (let i = 0; i < 20; i++) id += alphabet[digest[i]! % 62];
  return `run_${id}`;
}

const keyStream = (ownerId: string, jobId: string, key: string) => `runkey-${createHash('sha256').update(`${ownerId}\n${jobId}\n${key}`).digest('hex')}`;

/**
 * Claims an Idempotency-Key for a Run of a Job: the first request within 24 h gets `runId`
 * (the one proposed), a repeat gets the Run the first one claimed. Two simultaneous requests
 * race on the key's stream and exactly one wins.
 */
export async function claimIdempotencyKey(
  services: Pick<Services, 'store' | 'clock'>,
  ownerId: string,
  jobId: string,
  key: string,
  proposedRunId: string,
): Promise<{ runId: string; replayed: boolean }> {
  const stream = keyStream(ownerId, jobId, key);
  for (let attempt = 0; attempt < 3; attempt++) {
    const history = await services.store.readStream(stream);
    const last = history[history.length - 1];
    const now = services.clock();
    if (last && now.getTime() - Date.parse(String(last.data.at)) < IDEMPOTENCY_WINDOW_MS) return { runId: String(last.data.run_id), replayed: true };
    try {
      await services.store.appendToStream(
        stream,
        [{ type: 'RunKeyClaimed', data: { run_id: proposedRunId, at: now.toISOString() } }],
        last ? last.revision : 'no_stream',
      );
      return { runId: proposedRunId, replayed: false };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError)) throw error;
    }
  }
  throw new DomainError('conflict', 'The Idempotency-Key is being used by another request right now; try again');
}

/** Refuses a new Run when MAX_QUEUED_RUNS already wait for this Job (read model). */
export async function checkQueueRoom(services: Pick<Services, 'pool'>, jobId: string): Promise<void> {
  const queued = await queuedRuns(services.pool, jobId);
  if (queued >= MAX_QUEUED_RUNS) {
    throw new DomainError('run_queue_full', `${queued} Runs of this Job are already waiting; try again when they have run`, {
      queued,
      max_queued: MAX_QUEUED_RUNS,
    });
  }
}

/** Hands a ticket to the Job's coordinator, starting it if it is not running. */
export async function signalRun(services: Pick<Services, 'temporal' | 'config'>, ticket: RunTicket): Promise<void> {
  if (!services.temporal) throw new Error('Runs need a Temporal client');
  const traceparent = currentTraceparent();
  await services.temporal.workflow.signalWithStart('jobRunsWorkflow', {
    workflowId: jobWorkflowId(ticket.jobId),
    taskQueue: services.config.taskQueue,
    args: [{ jobId: ticket.jobId }],
    signal: 'enqueueRun',
    signalArgs: [traceparent ? { ...ticket, traceparent } : ticket],
    // A finished coordinator is started again; a running one gets the ticket.
    workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
  });
}

/**
 * Refuses, before a retry's ticket is signalled, what the Run's decider would refuse when the
 * retry is recorded (a Run that did not fail, or was retried already: 409; another owner's: 404):
 * the decider's own rule, decided on the Run as it stands, not a second copy of it.
 */
export async function checkRetryable(services: Pick<Services, 'store' | 'clock'>, ownerId: string, runId: string): Promise<void> {
  const { state } = await load(services, runStream(runId), runDecider);
  runDecider.decide({ type: 'MarkRetried', runId, actorId: ownerId, retryRunId: '', at: services.clock() }, state);
}

/**
 * What a retry runs: the Job as it is now with the failed Run's values (those the Job still
 * declares; defaults for the rest), or, as it was, the failed Run's own snapshot and values.
 */
export function retryPlan(failed: ExistingRun, job: ActiveJob, definition: RetryDefinition): { snapshot: JobDefinition; parameters: ParameterValues } {
  if (definition === 'original') return { snapshot: failed.snapshot, parameters: failed.parameters };
  const declared = new Set(job.definition.parameters.map((p) => p.name));
  const kept = Object.fromEntries(Object.entries(failed.parameters).filter(([name]) => declared.has(name)));
  return { snapshot: job.definition, parameters: resolveValues(job.definition.parameters, kept, 'parameters') };
}

/**
 * Records a ticket as RunQueued, with the Job snapshot and parameter values it will run with:
 * the Job as it is now with the values given (defaults for the rest), or for a retry what
 * retryPlan says (the failed Run is marked as retried by this one). Idempotent: the API and the
 * Run's workflow both call it, and whichever comes second appends nothing. An automated Run of
 * a Job that is disabled or gone is not recorded (`skipped`).
 */
export async function recordQueuedRun(
  services: Pick<Services, 'store' | 'clock'>,
  ticket: RunTicket,
): Promise<{ position: string; status: RunState['status'] | 'skipped' }> {
  // The API and the Run's workflow may record the same ticket at the same moment: the one whose
  // append loses reads what the other wrote (every command in here is idempotent).
  for (let attempt = 0; ; attempt++) {
    try {
      return await recordQueuedRunOnce(services, ticket);
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError) || attempt >= 3) throw error;
    }
  }
}

async function recordQueuedRunOnce(
  services: Pick<Services, 'store' | 'clock'>,
  ticket: RunTicket,
): Promise<{ position: string; status: RunState['status'] | 'skipped' }> {
  const at = services.clock();
  const existing = await load(services, runStream(ticket.runId), runDecider);
  // Recorded already (by the Run's workflow, or a repeated request): where its stream stands.
  if (existing.state.status !== 'absent') return { position: existing.position.toString(), status: existing.state.status };
  let snapshot: JobDefinition;
  let parameters: ParameterValues;
  let attempt = 1;
  const { state: jobState } = await load(services, jobStream(ticket.jobId), jobDecider);
  // Tickets signalled before retries could take the current definition retried the snapshot.
  const retryDefinition = ticket.retryOf ? (ticket.retryDefinition ?? 'original') : null;
  if (ticket.retryOf) {
    const failed = (await load(services, runStream(ticket.retryOf), runDecider)).state;
    if (failed.status === 'absent' || failed.jobId !== ticket.jobId)
      throw new DomainError('run_not_found', `Run ${ticket.retryOf} was not found`, { id: ticket.retryOf });
    const plan = retryPlan(failed, ownedJob(jobState, ticket.ownerId, ticket.jobId), retryDefinition!);
    await record(services, runStream(ticket.retryOf), runDecider, {
      type: 'MarkRetried',
      runId: ticket.retryOf,
      actorId: ticket.ownerId,
      retryRunId: ticket.runId,
      at,
    });
    ({ snapshot, parameters } = plan);
    attempt = failed.attempt + 1;
  } else {
    if (isAutomated(ticket.trigger) && (jobState.status !== 'active' || !jobState.enabled)) return { position: '0', status: 'skipped' };
    snapshot = ownedJob(jobState, ticket.ownerId, ticket.jobId).definition;
    parameters = resolveValues(snapshot.parameters, ticket.parameters ?? {});
  }
  const outcome = await record(services, runStream(ticket.runId), runDecider, {
    type: 'QueueRun',
    runId: ticket.runId,
    jobId: ticket.jobId,
    ownerId: ticket.ownerId,
    trigger: ticket.trigger,
    attempt,
    retryOf: ticket.retryOf,
    snapshot,
    steps: plannedSteps(snapshot),
    scheduledFor: ticket.scheduledFor ? new Date(ticket.scheduledFor) : null,
    parameters,
    triggeredBy: ticket.triggeredBy ?? null,
    retryDefinition,
    deliveryId: ticket.deliveryId ?? null,
    at,
  });
  return { position: outcome.position, status: outcome.state.status };
}

/** Where a use case logs what it cannot say to the caller (the request's logger). */
export type Log = Pick<Logger, 'error'>;

/** Hands a ticket to the Job's coordinator, records the Run, waits for the read model. */
async function requestRun(services: Services, ticket: RunTicket, log: Log): Promise<RunView> {
  try {
    await signalRun(services, ticket);
  } catch (error) {
    log.error({ err: error, jobId: ticket.jobId }, 'could not hand the Run to Temporal');
    throw new DomainError('service_unavailable', 'The Run could not be started: the workflow service does not answer; nothing was recorded, try again shortly');
  }
  const queued = await recordQueuedRun(services, ticket);
  await services.projections.waitFor(BigInt(queued.position));
  return loadRun(services.pool, ticket.ownerId, ticket.jobId, ticket.runId);
}

/**
 * Run Now: a queued Run of the owner's Job, answered at once (it runs behind a Run in progress).
 * The same Idempotency-Key within 24 hours gives back the Run the first request started
 * (`replayed`), and finishes that request's work if it did not get as far as recording it.
 */
export async function runNow(
  services: Services,
  ownerId: string,
  jobId: string,
  idempotencyKey: string | undefined,
  log: Log,
  parameters: Record<string, unknown> = {},
): Promise<{ run: RunView; replayed: boolean }> {
  const job = await loadJob(services.pool, ownerId, jobId);
  let runId = services.newId('run');
  let replayed = false;
  if (idempotencyKey) {
    const claim = await claimIdempotencyKey(services, ownerId, jobId, idempotencyKey, runId);
    runId = claim.runId;
    replayed = claim.replayed;
    if (replayed) {
      const existing = await findRun(services.pool, runId);
      if (existing) return { run: existing, replayed };
      // The first request claimed the key but did not get its Run recorded: finish its work.
    }
  }
  await checkRunValues(services, ownerId, (job.state as ActiveJob).definition, parameters);
  await checkQueueRoom(services, jobId);
  const run = await requestRun(services, { runId, jobId, ownerId, trigger: 'manual', retryOf: null, scheduledFor: null, parameters }, log);
  return { run, replayed };
}

/**
 * A new Run after a failed one, linked to it (409 for a Run that did not fail or was retried
 * already): by default with the Job as it is now (the fix the failed Run's page asks for), or
 * with the failed Run's own snapshot and values (`original`). The Run records which.
 */
export async function retryRun(
  services: Services,
  ownerId: string,
  jobId: string,
  runId: string,
  log: Log,
  definition: RetryDefinition = 'current',
): Promise<RunView> {
  const job = (await loadJob(services.pool, ownerId, jobId)).state as ActiveJob;
  await loadRun(services.pool, ownerId, jobId, runId);
  await checkRetryable(services, ownerId, runId);
  if (definition === 'current') {
    const { state: failed } = await load(services, runStream(runId), runDecider);
    const plan = retryPlan(failed as ExistingRun, job, 'current');
    await checkRunValues(services, ownerId, plan.snapshot, plan.parameters);
  }
  await checkQueueRoom(services, jobId);
  const ticket: RunTicket = { runId: services.newId('run'), jobId, ownerId, trigger: 'retry', retryOf: runId, retryDefinition: definition, scheduledFor: null };
  return requestRun(services, ticket, log);
}

export type { SkipReason };

/**
 * An automated Run request (a schedule's fire, an on-change check that found a change, another
 * Job's Run that ended): a Run like Run Now's, with these rules, so automation never piles up.
 * Skipped: when the Job is disabled or gone; a scheduled fire older than the catch-up window;
 * otherwise as domain/runs/automated-request.ts decides (a Run of the same trigger waiting
 * behind a running one, or a catch-up fire, folds into it; a full queue refuses). A request
 * seen before (the same Run id: a retried activity) finishes what it started.
 */
export async function requestAutomatedRun(
  services: Pick<Services, 'store' | 'clock' | 'pool' | 'temporal' | 'config' | 'log'>,
  ticket: RunTicket,
): Promise<{ runId: string | null; skipped?: SkipReason }> {
  const job = (await load(services, jobStream(ticket.jobId), jobDecider)).state;
  if (job.status !== 'active' || !job.enabled || job.ownerId !== ticket.ownerId) return { runId: null, skipped: 'job_disabled' };
  const known = (await load(services, runStream(ticket.runId), runDecider)).state.status !== 'absent';
  if (!known) {
    const skip = (skipped: SkipReason, message: string) => {
      services.log.info({ jobId: ticket.jobId, trigger: ticket.trigger, scheduledFor: ticket.scheduledFor, skipped }, message);
      return { runId: null, skipped };
    };
    const now = services.clock();
    const scheduledFor = ticket.scheduledFor ? new Date(ticket.scheduledFor) : null;
    if (missedBeyondCatchUp(scheduledFor, now, services.config.scheduleCatchupMs)) {
      return skip('beyond_catch_up', 'scheduled Run skipped: its fire time is older than the catch-up window (SVC_SCHEDULE_CATCHUP_MIN)');
    }
    const schedule = job.definition.schedule;
    const next = scheduledFor && schedule ? nextFireTime(schedule, scheduledFor) : null;
    const waiting = await waitingOrRunning(services.pool, ticket.jobId);
    const skipped = automatedRequestSkip({
      trigger: ticket.trigger,
      queued: waiting.queued,
      running: waiting.running,
      superseded: next !== null && next.getTime() <= now.getTime(),
      maxQueued: MAX_QUEUED_RUNS,
    });
    if (skipped === 'already_waiting') return skip(skipped, `${ticket.trigger} Run skipped: one already waits to run after the one in progress`);
    if (skipped) return skip(skipped, 'automated Run skipped: the Job has too many Runs waiting');
  }
  await signalRun(services, ticket);
  const queued = await recordQueuedRun(services, ticket);
  return queued.status === 'skipped' ? { runId: null, skipped: 'job_disabled' } : { runId: ticket.runId };
}

/**
 * The owner's Job, or a deleted Job of the owner's that still has Runs: a deleted Job's Runs stay
 * readable until retention removes them (application/run-retention.ts). Neither is job_not_found.
 */
async function requireJobOrItsRuns(services: Services, ownerId: string, jobId: string): Promise<void> {
  try {
    await loadJob(services.pool, ownerId, jobId);
  } catch (error) {
    if (!(error instanceof DomainError) || error.code !== 'job_not_found' || !(await hasRuns(services.pool, ownerId, jobId))) throw error;
  }
}

/** The Runs of the owner's Job (deleted or not), newest first, of one status if asked. */
export async function listRuns(services: Services, ownerId: string, jobId: string, page: PageRequest & { status?: RunStatus | undefined }) {
  await requireJobOrItsRuns(services, ownerId, jobId);
  return readRuns(services.pool, ownerId, jobId, page);
}

/** The owner's Runs of every Job, a deleted Job's too, newest first; of one Job or status if asked. */
export const listAllRuns = (services: Services, ownerId: string, page: PageRequest & { status?: RunStatus | undefined; job_id?: string | undefined }) =>
  listOwnerRuns(services.pool, ownerId, page);

/** One Run of the owner's Job (deleted or not). */
export async function showRun(services: Services, ownerId: string, jobId: string, runId: string): Promise<RunView> {
  await requireJobOrItsRuns(services, ownerId, jobId);
  return loadRun(services.pool, ownerId, jobId, runId);
}
