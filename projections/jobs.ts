import { sql, type DatabasePool, type DatabaseTransactionConnection } from 'slonik';
import { z } from 'zod';
import type { ConnectionKind } from '../domain/connections/connection.js';
import { notFound } from '../domain/errors.js';
import { jobDecider, type JobEvent, type JobState } from '../domain/jobs/job.js';
import type { StoredEvent } from '../eventstore/port.js';
import { isoTime, isoTimeOrNull } from '../platform/db.js';
import { keysetWhere, limitPlusOne, pageFrom, type Page, type PageRequest } from './pagination.js';
import type { Projector } from './projector.js';

const jobs = (schema: string) => sql.identifier([schema, 'jobs']);

/**
 * Jobs as the routes read them. The row keeps the decider's own state (evolved here with the
 * decider's evolve, so the read model cannot drift from the write side) plus the columns that
 * lists and checks query: owner, the Source and Destination it uses (deleting those is refused
 * while a Job uses them), and its newest Run, which Run events keep current.
 */
export const jobsProjector: Projector = {
  name: 'jobs',
  version: 1,
  tables: ['jobs'],
  async createTables(tx, schema) {
    await tx.query(sql.unsafe`CREATE TABLE IF NOT EXISTS ${jobs(schema)} (
      id text PRIMARY KEY,
      owner_id text NOT NULL,
      name text NOT NULL,
      source_id text NOT NULL,
      destination_id text,
      enabled boolean NOT NULL,
      state jsonb NOT NULL,
      last_run_id text,
      last_run_status text,
      last_run_finished_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL)`);
    await tx.query(sql.unsafe`CREATE INDEX IF NOT EXISTS jobs_owner ON ${jobs(schema)} (owner_id, created_at DESC, id DESC)`);
    await tx.query(sql.unsafe`CREATE INDEX IF NOT EXISTS jobs_source ON ${jobs(schema)} (source_id)`);
    await tx.query(sql.unsafe`CREATE INDEX IF NOT EXISTS jobs_destination ON ${jobs(schema)} (destination_id)`);
    await tx.query(sql.unsafe`CREATE INDEX IF NOT EXISTS jobs_last_run ON ${jobs(schema)} (last_run_id)`);
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
  if (e.type === 'JobCreated') {
    await tx.query(sql.unsafe`INSERT INTO ${t} (id, owner_id, name, source_id, destination_id, enabled, state, created_at, updated_at)
      VALUES (${id}, ${state.ownerId}, ${state.definition.name}, ${state.definition.source_id}, ${state.definition.destination_id}, ${state.enabled}, ${json}, ${e.data.at}, ${e.data.at})
      ON CONFLICT (id) DO NOTHING`);
    return;
  }
  // Run bookkeeping on the Job changes no field a user edits: updated_at stays.
  const edited = e.type !== 'JobRunRecorded' && e.type !== 'JobSyncAdvanced';
  await tx.query(sql.unsafe`UPDATE ${t} SET name = ${state.definition.name}, source_id = ${state.definition.source_id},
    destination_id = ${state.definition.destination_id}, enabled = ${state.enabled}, state = ${json}
    ${edited ? sql.fragment`, updated_at = ${e.data.at}` : sql.fragment``} WHERE id = ${id}`);
}

/** A Job as the use cases read it: the decider's state, its Source's type (does it sync?) and its newest Run. */
const jobRow = z.object({
  id: z.string(),
  state: z.unknown(),
  source_type: z.string().nullable(),
  last_run_id: z.string().nullable(),
  last_run_status: z.string().nullable(),
  last_run_finished_at: isoTimeOrNull,
  created_at: isoTime,
  updated_at: isoTime,
});
export type JobRow = z.infer<typeof jobRow>;

const jobColumns = sql.fragment`j.id, j.state, c.type AS source_type, j.last_run_id, j.last_run_status, j.last_run_finished_at, j.created_at, j.updated_at`;
const jobFrom = sql.fragment`rm.jobs j LEFT JOIN rm.connections c ON c.id = j.source_id AND c.kind = 'source'`;

/** The owner's Job; another owner's, or none, is job_not_found. */
export async function loadJob(pool: DatabasePool, ownerId: string, id: string): Promise<JobRow> {
  const row = await pool.maybeOne(sql.type(jobRow)`SELECT ${jobColumns} FROM ${jobFrom} WHERE j.id = ${id} AND j.owner_id = ${ownerId}`);
  if (!row) throw notFound('job_not_found', 'Job', id);
  return row;
}

/** The owner's Jobs, newest first. */
export async function listJobs(pool: DatabasePool, ownerId: string, page: PageRequest): Promise<Page<JobRow>> {
  const rows = await pool.any(sql.type(jobRow)`SELECT ${jobColumns} FROM ${jobFrom}
    WHERE j.owner_id = ${ownerId} AND ${keysetWhere(page, 'j')}
    ORDER BY j.created_at DESC, j.id DESC LIMIT ${limitPlusOne(page)}`);
  return pageFrom(rows, page);
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
