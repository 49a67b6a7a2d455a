import { sql, type DatabasePool } from 'slonik';
import { z } from 'zod';
import { DomainError } from '../domain/errors.js';
import type { StepProgress } from '../domain/runs/facts.js';
import { createAppTable } from '../platform/db.js';

/*
 * How far a long synchronous request has got: a Workspace import from a Source (the API
 * transfers), a convert and a delivery (a worker does the work while the request waits). The
 * client names the request with a `progress_id` of its own choosing and reads
 * GET /api/v1/progress/{progress_id} while it waits, from any API replica.
 *
 * Progress is not a domain fact (nothing decides on it, and it is worthless an hour later), so
 * like the browser sessions it lives in a plain table of the application's (app.operation_progress),
 * keyed by owner and id: one user cannot read, or overwrite, another's.
 */

export const PROGRESS_ID_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;
export type ProgressOperation = 'import' | 'convert' | 'deliver';
/**
 * What the request is doing now, where it does more than one thing: an import transfers, then
 * inspects what arrived; a convert runs the pipeline, then writes the output (only the writing
 * has a percentage). A delivery only transfers.
 */
export const PROGRESS_PHASES = ['transfer', 'inspect', 'pipeline', 'write'] as const;
export type ProgressPhase = (typeof PROGRESS_PHASES)[number];
/** A step's figures, and the phase they belong to. */
export type RequestProgress = StepProgress & { phase?: ProgressPhase };
export type ProgressStatus = 'running' | 'completed' | 'failed';

/** Rows older than this are removed (opportunistically, as a new one starts). */
const KEEP_MS = 24 * 60 * 60 * 1000;
/** A worker or transfer reports many times a second at most this often reaches the table. */
const WRITE_EVERY_MS = 1_000;

export async function createProgressTable(pool: DatabasePool): Promise<void> {
  await createAppTable(
    pool,
    sql.fragment`CREATE TABLE IF NOT EXISTS app.operation_progress (
      owner_id text NOT NULL,
      id text NOT NULL,
      operation text NOT NULL,
      status text NOT NULL,
      progress jsonb NOT NULL,
      started_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (owner_id, id))`,
  );
}

export interface ProgressKey {
  ownerId: string;
  progressId: string;
}

/**
 * Starts (or restarts: an id used again describes the new request) what GET /progress shows for
 * one request, with what is known up front (a delivery's total is the output's size).
 */
export async function startProgress(
  pool: DatabasePool,
  key: ProgressKey,
  operation: ProgressOperation,
  now: Date,
  progress: RequestProgress = {},
): Promise<void> {
  const at = now.toISOString();
  await pool.query(sql.unsafe`INSERT INTO app.operation_progress (owner_id, id, operation, status, progress, started_at, updated_at)
    VALUES (${key.ownerId}, ${key.progressId}, ${operation}, 'running', ${JSON.stringify(progress)}::jsonb, ${at}, ${at})
    ON CONFLICT (owner_id, id) DO UPDATE SET operation = EXCLUDED.operation, status = 'running', progress = EXCLUDED.progress,
      started_at = EXCLUDED.started_at, updated_at = EXCLUDED.updated_at`);
  await pool.query(sql.unsafe`DELETE FROM app.operation_progress WHERE updated_at < ${new Date(now.getTime() - KEEP_MS).toISOString()}`);
}

/** The request's end: its last figures stay readable (a poll that arrives late sees 100 %). */
export async function finishProgress(pool: DatabasePool, key: ProgressKey, status: Exclude<ProgressStatus, 'running'>, now: Date): Promise<void> {
  const done = status === 'completed' ? sql.unsafe`progress || jsonb_build_object('percent', 100)` : sql.unsafe`progress`;
  await pool.query(sql.unsafe`UPDATE app.operation_progress SET status = ${status}, progress = ${done}, updated_at = ${now.toISOString()}
    WHERE owner_id = ${key.ownerId} AND id = ${key.progressId}`);
}

/**
 * Runs `work` between startProgress and finishProgress, so every way out of a request (an error
 * included) ends its progress. Without a progress id the work just runs.
 */
export async function withProgress<T>(
  services: { pool: DatabasePool; clock: () => Date },
  key: ProgressKey | null,
  start: { operation: ProgressOperation; progress: RequestProgress },
  work: () => Promise<T>,
): Promise<T> {
  if (!key) return work();
  await startProgress(services.pool, key, start.operation, services.clock(), start.progress);
  try {
    const result = await work();
    await finishProgress(services.pool, key, 'completed', services.clock());
    return result;
  } catch (error) {
    await finishProgress(services.pool, key, 'failed', services.clock()).catch(() => undefined);
    throw error;
  }
}

/**
 * A reporter for the process doing the work: it merges the updates it is given and writes the
 * latest at most once a second, one write at a time, so a transfer reporting every few MiB never
 * waits on the database and the table never falls behind by more than a second.
 */
export function progressWriter(pool: DatabasePool, key: ProgressKey, onError: (error: unknown) => void) {
  let latest: RequestProgress = {};
  let writtenAt = 0;
  let writing: Promise<void> | null = null;
  let pending = false;
  const write = () => {
    pending = false;
    writtenAt = Date.now();
    writing = pool
      .query(sql.unsafe`UPDATE app.operation_progress SET progress = progress || ${JSON.stringify(latest)}::jsonb, updated_at = now()
        WHERE owner_id = ${key.ownerId} AND id = ${key.progressId} AND status = 'running'`)
      .then(
        () => undefined,
        (error: unknown) => onError(error),
      )
      .finally(() => {
        writing = null;
        if (pending) schedule();
      });
  };
  let timer: NodeJS.Timeout | null = null;
  const schedule = () => {
    pending = true;
    if (writing || timer) return;
    const wait = Math.max(0, writtenAt + WRITE_EVERY_MS - Date.now());
    timer = setTimeout(() => {
      timer = null;
      write();
    }, wait);
  };
  return {
    report(update: RequestProgress) {
      latest = { ...latest, ...update };
      schedule();
    },
  };
}

/** What a worker or the API gives the work it runs: the writer's report, or nothing when no one follows the request. */
export function progressReporter(
  services: { pool: DatabasePool; log: { warn(obj: object, msg: string): void } },
  key: ProgressKey | undefined | null,
): ((update: RequestProgress) => void) | undefined {
  if (!key) return undefined;
  const writer = progressWriter(services.pool, key, (error) => services.log.warn({ err: error }, 'progress could not be recorded'));
  return (update) => writer.report(update);
}

const progressRow = z.object({
  id: z.string(),
  operation: z.string(),
  status: z.string(),
  progress: z.record(z.string(), z.unknown()),
  started_at: z.string(),
  updated_at: z.string(),
});

export async function readProgress(pool: DatabasePool, ownerId: string, progressId: string) {
  if (!PROGRESS_ID_PATTERN.test(progressId)) {
    throw new DomainError('invalid_parameter', 'progress_id takes 8–64 letters, digits, _ or -', { progress_id: progressId.slice(0, 100) });
  }
  const row = await pool.maybeOne(sql.type(progressRow)`SELECT id, operation, status, progress,
      to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS started_at,
      to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS updated_at
    FROM app.operation_progress WHERE owner_id = ${ownerId} AND id = ${progressId}`);
  if (!row) {
    throw new DomainError('not_found', 'No request with this progress_id has started (yet): it appears once the server has begun the work', {
      progress_id: progressId,
    });
  }
  const p = row.progress as RequestProgress;
  const total = p.bytes_total !== undefined && p.bytes_total > 0 ? p.bytes_total : undefined;
  // The share done: the work's own when it reports one (GDAL's percent), else bytes over the total.
  const percent = p.percent ?? (total !== undefined && p.bytes_written !== undefined ? Math.min(100, (100 * p.bytes_written) / total) : null);
  return {
    progress_id: row.id,
    operation: row.operation as ProgressOperation,
    status: row.status as ProgressStatus,
    phase: p.phase ?? null,
    bytes_written: p.bytes_written ?? null,
    bytes_total: total ?? null,
    features_written: p.features_written ?? null,
    percent: percent === null ? null : Math.round(percent * 10) / 10,
    started_at: row.started_at,
    updated_at: row.updated_at,
  };
}
