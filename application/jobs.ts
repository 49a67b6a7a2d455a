import { connectorByType } from '../connectors/registry.js';
import { DomainError } from '../domain/errors.js';
import { stagesOf, withDefaults, type JobDefinition, type Stage } from '../domain/jobs/definition.js';
import { jobDecider, jobStream, type JobCommand } from '../domain/jobs/job.js';
import { describeSchedule, nextFireTimes } from '../domain/jobs/schedule.js';
import type { RunStatus } from '../domain/runs/statuses.js';
import { followersOf, listJobs as readJobs, loadJob, type JobRow } from '../projections/jobs.js';
import type { Page, PageRequest } from '../projections/pagination.js';
import { execute } from './commands.js';
import { jobDefinitionFrom, type JobBody } from './job-definitions.js';
import type { Services } from './services.js';

/*
 * The Job use cases: create, replace, delete, enable and disable a Job, reset its sync; read one
 * or a page of them. A body is checked and turned into the definition the Job stores in
 * application/job-definitions.ts; the Job's decider (domain/jobs/job.ts) decides, its read model
 * (projections/jobs.ts) answers, and each answer is a JobView. Runs of a Job start in
 * application/runs.ts.
 */

export type { JobBody };

/** How many coming fire times a Job shows. */
export const NEXT_RUNS = 5;

/**
 * A Job as the use cases answer it: its definition (fields added after it was saved filled in
 * with their "none"), the stages a Run of it runs, its schedule's next fire times and its state.
 */
export type JobView = Omit<JobDefinition, 'creation_options' | 'notifications'> & {
  id: string;
  creation_options: NonNullable<JobDefinition['creation_options']> | null;
  notifications: NonNullable<JobDefinition['notifications']>;
  stages: Record<Stage, boolean>;
  enabled: boolean;
  /** Why the Job disabled itself (repeated failed automated Runs); null otherwise. */
  disabled_reason: string | null;
  next_run_at: string | null;
  next_run_times: string[];
  schedule_description: string | null;
  /** The webhook trigger, if issued, without its sealed secret. */
  webhook: { auth: 'hmac' | 'bearer'; created_at: string; rotated_at: string | null } | null;
  followers: JobRow['followers'];
  last_run: { id: string; status: RunStatus; finished_at: string | null } | null;
  sync: { supported: boolean; cursor: unknown; updated_at: string | null; reset_pending: boolean; reinitialize_pending: boolean };
  created_at: string;
  updated_at: string;
};

/** What the read model's row of a Job says, as of `now` (its next fire times). */
export function jobView(row: JobRow, now: Date): JobView {
  const { state } = row;
  const d = withDefaults(state.definition);
  const next = state.enabled && d.schedule ? nextFireTimes(d.schedule, now, NEXT_RUNS).map((t) => t.toISOString()) : [];
  return {
    id: row.id,
    ...d,
    creation_options: d.creation_options ?? null,
    notifications: d.notifications ?? [],
    stages: stagesOf(d),
    enabled: state.enabled,
    disabled_reason: state.disabledReason?.kind === 'consecutive_failures' ? state.disabledReason.message : null,
    next_run_at: next[0] ?? null,
    next_run_times: next,
    schedule_description: d.schedule ? describeSchedule(d.schedule) : null,
    webhook: state.webhook ? { auth: state.webhook.auth, created_at: state.webhook.created_at, rotated_at: state.webhook.rotated_at } : null,
    followers: row.followers,
    last_run: row.last_run_id ? { id: row.last_run_id, status: row.last_run_status ?? 'queued', finished_at: row.last_run_finished_at } : null,
    sync: {
      supported: Boolean(row.source_type && connectorByType(row.source_type)?.source?.incremental),
      cursor: state.sync.cursor ?? null,
      updated_at: state.sync.updated_at,
      reset_pending: state.sync.reset_pending,
      reinitialize_pending: state.sync.reinitialize_pending,
    },
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** The owner's Job (another owner's is job_not_found). */
export const showJob = async (services: Services, ownerId: string, id: string): Promise<JobView> =>
  jobView(await loadJob(services.pool, ownerId, id), services.clock());

/** The owner's Jobs, newest first. */
export async function listJobs(services: Services, ownerId: string, page: PageRequest): Promise<Page<JobView>> {
  const rows = await readJobs(services.pool, ownerId, page);
  const now = services.clock();
  return { items: rows.items.map((row) => jobView(row, now)), next_cursor: rows.next_cursor };
}

/** Runs a Job command; the answer waits for the read models and, briefly, for the Job's Schedule to follow. */
async function change(services: Services, command: JobCommand): Promise<void> {
  const result = await execute(services, jobStream(command.jobId), jobDecider, command);
  if (result && services.reactors) {
    await services.reactors
      .waitFor(result.position, 5_000)
      .catch((error) => services.log.warn({ err: error, jobId: command.jobId }, 'the Job schedule is catching up'));
  }
}

export async function createJob(services: Services, ownerId: string, body: JobBody): Promise<JobView> {
  const definition = await jobDefinitionFrom(services, ownerId, body);
  const jobId = services.newId('job');
  await change(services, { type: 'CreateJob', jobId, actorId: ownerId, definition, enabled: body.enabled ?? true, at: services.clock() });
  return showJob(services, ownerId, jobId);
}

/** Replaces a Job's definition; stage flags the body does not mention keep their stored value. */
export async function updateJob(services: Services, ownerId: string, jobId: string, body: JobBody): Promise<JobView> {
  const stored = (await loadJob(services.pool, ownerId, jobId)).state;
  const definition = await jobDefinitionFrom(services, ownerId, body, stored.definition, jobId);
  await change(services, {
    type: 'UpdateJob',
    jobId,
    actorId: ownerId,
    definition,
    ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
    at: services.clock(),
  });
  return showJob(services, ownerId, jobId);
}

/**
 * Deletes a Job: its Schedules go, and a Run in progress is cancelled. Refused (409) while other
 * Jobs run after it (`details.jobs`), as a Source a Job reads cannot be deleted.
 */
export async function deleteJob(services: Services, ownerId: string, jobId: string): Promise<void> {
  await loadJob(services.pool, ownerId, jobId);
  const followers = await followersOf(services.pool, ownerId, jobId);
  if (followers.length) {
    throw new DomainError('conflict', `Other Jobs run after this one: ${followers.map((f) => f.name).join(', ')}; remove it from their triggers first`, {
      jobs: followers.map(({ id, name }) => ({ id, name })),
    });
  }
  await change(services, { type: 'DeleteJob', jobId, actorId: ownerId, at: services.clock() });
}

/** What a Job's switches do: enable, disable, forget the sync cursor, rebuild the target on the next Run. */
export type JobSwitch = 'EnableJob' | 'DisableJob' | 'ResetSync' | 'ReinitializeSync';

export async function switchJob(services: Services, ownerId: string, jobId: string, type: JobSwitch): Promise<JobView> {
  await change(services, { type, jobId, actorId: ownerId, at: services.clock() });
  return showJob(services, ownerId, jobId);
}
