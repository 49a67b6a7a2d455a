import { sql, type DatabasePool, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import type { ConnectionKind } from '../domain/connections/kinds.js';
import { notFound } from '../domain/errors.js';
import { jobDecider, type ActiveJob, type JobEvent, type JobState } from '../domain/jobs/job.js';
import { afterWhen, type AfterWhen } from '../domain/jobs/triggers.js';
import { runStatuses } from '../domain/runs/statuses.js';
import type { StoredEvent } from '../eventstore/port.js';
import { isoTime, isoTimeOrNull } from '../platform/db.js';
import { readPage, type Page, type PageRequest } from './pagination.js';
import { createOwnedTable, type Projector } from './projector.js';

const jobs = (schema: string) => sql.identifier([schema, 'jobs']);

/**
 * Jobs as the routes read them. The row keeps the decider's own state (evolved here with the
 * decider's evolve, so the read model cannot drift from the write side) plus the columns that
 * lists and checks query: owner, the Source and Destination it uses (deleting those is refused
 * while a Job uses them), and its newest Run, which Run events keep current.
 */
export const jobsProjector: Projector = {
  name: 'jobs',
  // 2: upstream_job_ids (after-triggers), and the state's webhook, triggers and parameters.
  version: 2,
  tables: ['jobs'],
  async createTables(tx, schema) {
    await createOwnedTable(
      tx,
      schema,
      'jobs',
      sql.fragment`name text NOT NULL, source_id text NOT NULL, destination_id text, enabled boolean NOT NULL, upstream_job_ids text[] NOT NULL DEFAULT '{}',
        state jsonb NOT NULL, last_run_id text, last_run_status text, last_run_finished_at timestamptz`,
    );
    await tx.query(sql.unsafe`CREATE INDEX IF NOT EXISTS jobs_source ON ${jobs(schema)} (source_id)`);
    await tx.query(sql.unsafe`CREATE INDEX IF NOT EXISTS jobs_destination ON ${jobs(schema)} (destination_id)`);
    await tx.query(sql.unsafe`CREATE INDEX IF NOT EXISTS jobs_last_run ON ${jobs(schema)} (last_run_id)`);
    await tx.query(sql.unsafe`CREATE INDEX IF NOT EXISTS jobs_upstream ON ${jobs(schema)} USING GIN (upstream_job_ids)`);
  },
  async apply(tx, schema, event) {
    const t = jobs(schema);
    const d = event.data as Record<string, any>;
    switch (event.type) {
      case 'RunQueued':
        await tx.query(sql.unsafe`UPDATE ${t} SET last_run_id = ${d.run_id}, last_run_status = 'queued', last_run_finished_at = NULL WHERE id = ${d.job_id}`);
        return;
      case 'RunStarted':
        await tx.query(sql.unsafe`UPDATE ${t} SET last_run_status = 'running' WHERE last_run_id = ${d.run_id}`);
        return;
      case 'RunSucceeded':
      case 'RunFailed':
      case 'RunCancelled': {
        const status = { RunSucceeded: 'succeeded', RunFailed: 'failed', RunCancelled: 'cancelled' }[event.type];
        await tx.query(sql.unsafe`UPDATE ${t} SET last_run_status = ${status}, last_run_finished_at = ${d.at} WHERE last_run_id = ${d.run_id}`);
        return;
      }
      default:
        break;
    }
    if (!event.type.startsWith('Job')) return;
    await applyJobEvent(tx, schema, event);
  },
};

async function applyJobEvent(tx: DatabaseTransactionConnection, schema: string, event: StoredEvent) {
  const t = jobs(schema);
  const e = event as unknown as JobEvent;
  const id = e.data.job_id;
  if (e.type === 'JobDeleted') {
    await tx.query(sql.unsafe`DELETE FROM ${t} WHERE id = ${id}`);
    return;
  }
  const stored = await tx.maybeOneFirst(sql.type(z.object({ state: z.unknown() }))`SELECT state FROM ${t} WHERE id = ${id} FOR UPDATE`);
  const before = (stored as JobState | null) ?? jobDecider.initialState();
  const state = jobDecider.evolve(before, e);
  if (state.status !== 'active') return;
  const json = sql.jsonb(state as never);
  const upstream = sql.array(
    state.definition.triggers.after.map((a) => a.job_id),
    'text',
  );
  if (e.type === 'JobCreated') {
    await tx.query(sql.unsafe`INSERT INTO ${t} (id, owner_id, name, source_id, destination_id, enabled, upstream_job_ids, state, created_at, updated_at)
      VALUES (${id}, ${state.ownerId}, ${state.definition.name}, ${state.definition.source_id}, ${state.definition.destination_id}, ${state.enabled}, ${upstream},
        ${json}, ${e.data.at}, ${e.data.at})
      ON CONFLICT (id) DO NOTHING`);
    return;
  }
  // Run bookkeeping on the Job changes no field a user edits: updated_at stays.
  const edited = e.type !== 'JobRunRecorded' && e.type !== 'JobSyncAdvanced';
  await tx.query(sql.unsafe`UPDATE ${t} SET name = ${state.definition.name}, source_id = ${state.definition.source_id},
    destination_id = ${state.definition.destination_id}, enabled = ${state.enabled}, upstream_job_ids = ${upstream}, state = ${json}
    ${edited ? sql.fragment`, updated_at = ${e.data.at}` : sql.fragment``} WHERE id = ${id}`);
}

/** A Job as the use cases read it: the decider's state, its Source's type (does it sync?) and its newest Run. */
const jobRow = z.object({
  id: z.string(),
  state: z.custom<ActiveJob>(),
  source_type: z.string().nullable(),
  last_run_id: z.string().nullable(),
  last_run_status: z.enum(runStatuses).nullable(),
  last_run_finished_at: isoTimeOrNull,
  created_at: isoTime,
  updated_at: isoTime,
  /** The Jobs that run after this one, with the Run ends that start them. */
  followers: z.array(z.object({ id: z.string(), name: z.string(), when: z.enum(afterWhen) })),
});
export type JobRow = z.infer<typeof jobRow>;

const jobColumns = sql.fragment`j.id, j.state, c.type AS source_type, j.last_run_id, j.last_run_status, j.last_run_finished_at, j.created_at, j.updated_at,
  (SELECT coalesce(json_agg(json_build_object('id', f.id, 'name', f.name, 'when',
      (SELECT a->>'when' FROM jsonb_array_elements(f.state->'definition'->'triggers'->'after') a WHERE a->>'job_id' = j.id LIMIT 1))
    ORDER BY f.created_at, f.id), '[]'::json)
   FROM rm.jobs f WHERE f.upstream_job_ids @> ARRAY[j.id]) AS followers`;
const jobFrom = sql.fragment`rm.jobs j LEFT JOIN rm.connections c ON c.id = j.source_id AND c.kind = 'source'`;

/** The owner's Job; another owner's, or none, is job_not_found. */
export async function loadJob(pool: DatabasePool, ownerId: string, id: string): Promise<JobRow> {
  const row = await pool.maybeOne(sql.type(jobRow)`SELECT ${jobColumns} FROM ${jobFrom} WHERE j.id = ${id} AND j.owner_id = ${ownerId}`);
  if (!row) throw notFound('job_not_found', 'Job', id);
  return row;
}

/** The owner's Jobs, newest first. */
export async function listJobs(pool: DatabasePool, ownerId: string, page: PageRequest): Promise<Page<JobRow>> {
  return readPage(pool, jobRow, sql.fragment`SELECT ${jobColumns} FROM ${jobFrom}`, sql.fragment`j.owner_id = ${ownerId}`, page, 'j');
}

/** Which of these ids are Jobs of the owner. */
export async function ownedJobIds(pool: DatabasePool, ownerId: string, ids: string[]): Promise<Set<string>> {
  const rows = await pool.anyFirst(
    sql.type(z.object({ id: z.string() }))`SELECT id FROM rm.jobs WHERE owner_id = ${ownerId} AND id = ANY(${sql.array(ids, 'text')})`,
  );
  return new Set(rows);
}

/** The owner's Jobs and the Jobs each runs after (for cycle checks). */
export async function upstreamGraph(pool: DatabasePool, ownerId: string): Promise<Map<string, string[]>> {
  const rows = await pool.any(
    sql.type(z.object({ id: z.string(), upstream: z.array(z.string()) }))`SELECT id, upstream_job_ids AS upstream FROM rm.jobs
      WHERE owner_id = ${ownerId} AND cardinality(upstream_job_ids) > 0`,
  );
  return new Map(rows.map((r) => [r.id, [...r.upstream]]));
}

/** The Jobs that run after a Job, with the Run ends that start them. */
export async function followersOf(pool: DatabasePool, ownerId: string, jobId: string) {
  const rows = await pool.any(
    sql.type(z.object({ id: z.string(), name: z.string(), enabled: z.boolean(), after: z.unknown() }))`SELECT id, name, enabled,
      state->'definition'->'triggers'->'after' AS after FROM rm.jobs
      WHERE owner_id = ${ownerId} AND ${jobId} = ANY(upstream_job_ids) ORDER BY created_at, id`,
  );
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    enabled: r.enabled,
    when: ((r.after as { job_id: string; when: AfterWhen }[]) ?? []).find((a) => a.job_id === jobId)?.when ?? ('succeeded' as AfterWhen),
  }));
}

/** Jobs of the owner that use a saved connection: deleting it is refused while they exist. */
export async function jobsUsing(pool: DatabasePool, kind: ConnectionKind, id: string, ownerId: string) {
  const column = sql.identifier([kind === 'source' ? 'source_id' : 'destination_id']);
  const rows = await pool.any(
    sql.type(
      z.object({ id: z.string(), name: z.string() }),
    )`SELECT id, name FROM rm.jobs WHERE ${column} = ${id} AND owner_id = ${ownerId} ORDER BY created_at, id`,
  );
  return [...rows];
}

/** Jobs of the owner whose notifications name a channel: deleting it is refused while they exist. */
export async function jobsNotifying(pool: DatabasePool, channelId: string, ownerId: string) {
  const rows = await pool.any(
    sql.type(z.object({ id: z.string(), name: z.string() }))`SELECT id, name FROM rm.jobs
      WHERE owner_id = ${ownerId} AND state -> 'definition' -> 'notifications' @> ${sql.jsonb([{ channel_id: channelId }])} ORDER BY created_at, id`,
  );
  return [...rows];
}
