import { sql, type DatabasePool, type FragmentSqlToken } from 'slonik';
import { z } from 'zod';
import { notFound } from '../domain/errors.js';
import { withDefaults } from '../domain/jobs/definition.js';
import type { RunError } from '../domain/runs/facts.js';
import { runDecider, type RunEvent } from '../domain/runs/run.js';
import type { ExistingRun, RunState } from '../domain/runs/state.js';
import { runStatuses, type RunStatus } from '../domain/runs/statuses.js';
import { runTriggers, type RunTrigger } from '../domain/runs/triggers.js';
import { isoTime, isoTimeOrNull } from '../platform/db.js';
import { readPage, type Page, type PageRequest } from './pagination.js';
import { createOwnedTable, type Projector } from './projector.js';

const runs = (schema: string) => sql.identifier([schema, 'runs']);

/**
 * Runs as the routes read them: the decider's state (steps and stats, evolved with the decider's
 * own evolve) plus what the Run record shows beyond it (timestamps, error, workflow ids).
 */
export const runsProjector: Projector = {
  name: 'runs',
  // 2: triggered_by_run_id (after-triggers: which Run started which).
  version: 2,
  tables: ['runs'],
  follows: ['jobs'],
  async createTables(tx, schema) {
    await createOwnedTable(
      tx,
      schema,
      'runs',
      sql.fragment`job_id text NOT NULL, status text NOT NULL, trigger text NOT NULL, attempt integer NOT NULL, retry_of text, retried_by text,
        scheduled_for timestamptz, triggered_by_run_id text, state jsonb NOT NULL, skipped_reason text, error jsonb, workflow_id text, workflow_run_id text,
        started_at timestamptz, finished_at timestamptz`,
    );
    await tx.query(sql.unsafe`CREATE INDEX IF NOT EXISTS runs_job ON ${runs(schema)} (job_id, created_at DESC, id DESC)`);
    await tx.query(sql.unsafe`CREATE INDEX IF NOT EXISTS runs_job_status ON ${runs(schema)} (job_id, status, created_at DESC, id DESC)`);
    await tx.query(sql.unsafe`CREATE INDEX IF NOT EXISTS runs_triggered_by ON ${runs(schema)} (triggered_by_run_id) WHERE triggered_by_run_id IS NOT NULL`);
    await tx.query(sql.unsafe`CREATE INDEX IF NOT EXISTS runs_finished ON ${runs(schema)} (finished_at) WHERE finished_at IS NOT NULL`);
  },
  async apply(tx, schema, event) {
    if (!event.type.startsWith('Run')) return;
    const t = runs(schema);
    const e = event as unknown as RunEvent;
    const id = e.data.run_id;
    const stored = await tx.maybeOneFirst(sql.type(z.object({ state: z.unknown() }))`SELECT state FROM ${t} WHERE id = ${id} FOR UPDATE`);
    const state = runDecider.evolve((stored as RunState | null) ?? runDecider.initialState(), e);
    if (state.status === 'absent') return;
    const json = sql.jsonb(state as never);
    const at = e.data.at;
    switch (e.type) {
      case 'RunQueued':
        await tx.query(sql.unsafe`INSERT INTO ${t} (id, job_id, owner_id, status, trigger, attempt, retry_of, scheduled_for, triggered_by_run_id, state, created_at, updated_at)
          VALUES (${id}, ${e.data.job_id}, ${e.data.owner_id}, ${state.status}, ${e.data.trigger}, ${e.data.attempt}, ${e.data.retry_of}, ${e.data.scheduled_for},
            ${e.data.triggered_by?.run_id ?? null}, ${json}, ${at}, ${at}) ON CONFLICT (id) DO NOTHING`);
        return;
      case 'RunStarted':
        await tx.query(sql.unsafe`UPDATE ${t} SET status = ${state.status}, state = ${json}, started_at = ${at}, workflow_id = ${e.data.workflow_id},
          workflow_run_id = ${e.data.workflow_run_id}, updated_at = ${at} WHERE id = ${id}`);
        return;
      case 'RunSucceeded':
        await tx.query(
          sql.unsafe`UPDATE ${t} SET status = ${state.status}, state = ${json}, skipped_reason = ${e.data.skipped_reason}, finished_at = ${at}, updated_at = ${at} WHERE id = ${id}`,
        );
        return;
      case 'RunFailed':
        await tx.query(
          sql.unsafe`UPDATE ${t} SET status = ${state.status}, state = ${json}, error = ${sql.jsonb(e.data.error as never)}, finished_at = ${at}, updated_at = ${at} WHERE id = ${id}`,
        );
        return;
      case 'RunCancelled':
        await tx.query(sql.unsafe`UPDATE ${t} SET status = ${state.status}, state = ${json},
          error = ${sql.jsonb({ code: 'cancelled', message: e.data.reason, step: null, retryable: false })}, finished_at = ${at}, updated_at = ${at} WHERE id = ${id}`);
        return;
      case 'RunRetried':
        await tx.query(sql.unsafe`UPDATE ${t} SET retried_by = ${e.data.retry_run_id}, state = ${json}, updated_at = ${at} WHERE id = ${id}`);
        return;
      default:
        await tx.query(sql.unsafe`UPDATE ${t} SET state = ${json}, updated_at = ${at} WHERE id = ${id}`);
    }
  },
};

/** A Run's row as stored: the record's columns beside the folded state. */
const runRow = z.object({
  id: z.string(),
  job_id: z.string(),
  status: z.enum(runStatuses),
  trigger: z.enum(runTriggers),
  attempt: z.number(),
  retry_of: z.string().nullable(),
  retried_by: z.string().nullable(),
  scheduled_for: isoTimeOrNull,
  state: z.unknown(),
  skipped_reason: z.string().nullable(),
  error: z.unknown(),
  workflow_id: z.string().nullable(),
  workflow_run_id: z.string().nullable(),
  created_at: isoTime,
  started_at: isoTimeOrNull,
  finished_at: isoTimeOrNull,
  /** The Runs of other Jobs this Run's end started (after-triggers). */
  started_runs: z.array(z.object({ job_id: z.string(), run_id: z.string() })),
});
type RunRow = z.infer<typeof runRow>;

/**
 * A Run as the use cases and the API read it: the record's columns and what its folded state
 * holds, with the fields Runs recorded before they existed filled in with their "none".
 */
export type RunView = ReturnType<typeof runView>;

function runView(row: RunRow) {
  const state = row.state as ExistingRun;
  return {
    id: row.id,
    job_id: row.job_id,
    status: row.status,
    trigger: row.trigger,
    attempt: row.attempt,
    retry_of: row.retry_of,
    retried_by: row.retried_by,
    retry_definition: state.retryDefinition ?? null,
    parameters: state.parameters ?? {},
    triggered_by: state.triggeredBy ? { job_id: state.triggeredBy.job_id, run_id: state.triggeredBy.run_id } : null,
    started_runs: [...row.started_runs],
    delivery_id: state.deliveryId ?? null,
    scheduled_for: row.scheduled_for,
    created_at: row.created_at,
    started_at: row.started_at,
    finished_at: row.finished_at,
    steps: state.steps.map((s) => ({
      ...s,
      failed_attempts: s.failed_attempts ?? 0,
      last_error: s.last_error ?? null,
      progress: s.progress ?? null,
      log: s.log ?? null,
    })),
    stats: state.stats,
    skipped_reason: row.skipped_reason,
    warnings: state.warnings ?? [],
    error: (row.error ?? null) as RunError | null,
    workflow_id: row.workflow_id,
    workflow_run_id: row.workflow_run_id,
    job_snapshot: {
      ...withDefaults(state.snapshot),
      notifications: state.snapshot.notifications ?? [],
      creation_options: state.snapshot.creation_options ?? null,
    },
    notifications: state.notifications ?? [],
  };
}

const runColumns = sql.fragment`id, job_id, status, trigger, attempt, retry_of, retried_by, scheduled_for, state, skipped_reason, error, workflow_id,
  workflow_run_id, created_at, started_at, finished_at,
  (SELECT coalesce(json_agg(json_build_object('job_id', s.job_id, 'run_id', s.id) ORDER BY s.created_at, s.id), '[]'::json)
    FROM rm.runs s WHERE s.triggered_by_run_id = rm.runs.id) AS started_runs`;

/** The owner's Run of that Job; any other is run_not_found. */
export async function loadRun(pool: DatabasePool, ownerId: string, jobId: string, runId: string): Promise<RunView> {
  const row = await pool.maybeOne(sql.type(runRow)`SELECT ${runColumns} FROM rm.runs WHERE id = ${runId} AND job_id = ${jobId} AND owner_id = ${ownerId}`);
  if (!row) throw notFound('run_not_found', 'Run', runId);
  return runView(row);
}

/** A Run by its id alone, if the read model has it yet (a repeated Idempotency-Key's Run). */
export async function findRun(pool: DatabasePool, runId: string): Promise<RunView | null> {
  const row = await pool.maybeOne(sql.type(runRow)`SELECT ${runColumns} FROM rm.runs WHERE id = ${runId}`);
  return row && runView(row);
}

/** A page of Runs, newest first, of one status if asked. */
async function readRunPage(pool: DatabasePool, where: FragmentSqlToken, page: PageRequest & { status?: RunStatus | undefined }): Promise<Page<RunView>> {
  const status = page.status ? sql.fragment` AND status = ${page.status}` : sql.fragment``;
  const rows = await readPage(pool, runRow, sql.fragment`SELECT ${runColumns} FROM rm.runs`, sql.fragment`${where}${status}`, page);
  return { items: rows.items.map(runView), next_cursor: rows.next_cursor };
}

/** A Job's Runs, newest first, of one status if asked. */
export async function listRuns(
  pool: DatabasePool,
  ownerId: string,
  jobId: string,
  page: PageRequest & { status?: RunStatus | undefined },
): Promise<Page<RunView>> {
  return readRunPage(pool, sql.fragment`job_id = ${jobId} AND owner_id = ${ownerId}`, page);
}

/** The triggers of the Runs of a Job that wait, and how many run (0 or 1). */
export async function waitingOrRunning(pool: DatabasePool, jobId: string): Promise<{ queued: RunTrigger[]; running: number }> {
  const rows = await pool.any(
    sql.type(
      z.object({ status: z.string(), trigger: z.enum(runTriggers) }),
    )`SELECT status, trigger FROM rm.runs WHERE job_id = ${jobId} AND status IN ('queued', 'running')`,
  );
  return { queued: rows.filter((r) => r.status === 'queued').map((r) => r.trigger), running: rows.filter((r) => r.status === 'running').length };
}

/** Whether the owner has Runs of this Job (it may have been deleted since: its Runs stay until retention removes them). */
export async function hasRuns(pool: DatabasePool, ownerId: string, jobId: string): Promise<boolean> {
  return pool.exists(sql.unsafe`SELECT 1 FROM rm.runs WHERE job_id = ${jobId} AND owner_id = ${ownerId}`);
}

/** The owner's Runs across Jobs (deleted Jobs' too), newest first, of one Job or status if asked. */
export async function listOwnerRuns(
  pool: DatabasePool,
  ownerId: string,
  page: PageRequest & { status?: RunStatus | undefined; job_id?: string | undefined },
): Promise<Page<RunView>> {
  return readRunPage(pool, page.job_id ? sql.fragment`owner_id = ${ownerId} AND job_id = ${page.job_id}` : sql.fragment`owner_id = ${ownerId}`, page);
}

/**
 * Removes a pruned Run's row (application/run-retention.ts): its events are gone from the store
 * already, so a rebuild would not bring it back either.
 */
export async function forgetRun(pool: DatabasePool, runId: string): Promise<void> {
  await pool.query(sql.unsafe`DELETE FROM rm.runs WHERE id = ${runId}`);
}

/** How many Runs of a Job wait to run. */
export async function queuedRuns(pool: DatabasePool, jobId: string): Promise<number> {
  return pool.oneFirst(sql.type(z.object({ n: z.coerce.number() }))`SELECT count(*) AS n FROM rm.runs WHERE job_id = ${jobId} AND status = 'queued'`);
}
