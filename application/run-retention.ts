import { WorkflowNotFoundError } from '@temporalio/client';
import { sql } from 'slonik';
import { z } from 'zod';
import { runStream } from '../domain/runs/run.js';
import { forgetRun } from '../projections/runs.js';
import { notifyWorkflowId, runWorkflowId } from '../temporal/ids.js';
import type { Services } from './services.js';

/*
 * Run retention (SVC_RUN_RETENTION_DAYS, default 90; 0 keeps Runs forever). A finished Run older
 * than that goes whole: the histories of its workflows still in Temporal (its own `run-<id>` and
 * its notifications'), its files, its events (the `run-<id>` stream) and its read-model row, in
 * that order, so a pass cut short is finished by the next one (every step is idempotent and the
 * row, by which the next pass finds the Run, goes last). A deleted Job's Runs go the same way;
 * until then their owner can still read them. The Job's own stream keeps its one-line record of
 * each Run (JobRunRecorded), which its consecutive-failure count and sync cursor need.
 *
 * Temporal deletes closed workflow histories by itself after its namespace's retention (the dev
 * server's default is 24 hours); deleting them here covers a namespace that keeps them longer.
 * Every API process runs the pruning; an advisory lock lets one of them work at a time.
 */

/** Runs removed per batch; a pass goes on until none are due. */
const BATCH = 200;
/** How often the API prunes. */
const EVERY_MS = 3_600_000;

async function deleteWorkflow(services: Pick<Services, 'temporal' | 'config'>, workflowId: string): Promise<void> {
  if (!services.temporal) return;
  try {
    await services.temporal.workflowService.deleteWorkflowExecution({ namespace: services.config.temporalNamespace, workflowExecution: { workflowId } });
  } catch (error) {
    // Gone already (the namespace's retention came first), or never started.
    if (error instanceof WorkflowNotFoundError || (error as { code?: number }).code === 5) return;
    throw error;
  }
}

/** Removes one finished Run everywhere it is kept. */
export async function pruneRun(services: Pick<Services, 'temporal' | 'config' | 'files' | 'store' | 'pool'>, runId: string): Promise<void> {
  for (const id of [runWorkflowId(runId), notifyWorkflowId(runId, 'outcome'), notifyWorkflowId(runId, 'auto_disable'), notifyWorkflowId(runId, 'slow')]) {
    await deleteWorkflow(services, id);
  }
  await services.files.remove(runId);
  await services.store.deleteStream(runStream(runId));
  await forgetRun(services.pool, runId);
}

/** One pass: every finished Run past the retention, oldest first. Answers how many went. */
export async function pruneRuns(services: Services, now = services.clock()): Promise<{ runs: number }> {
  const days = services.config.runRetentionDays;
  if (!days) return { runs: 0 };
  const cutoff = new Date(now.getTime() - days * 86_400_000).toISOString();
  return services.pool.connect(async (connection) => {
    const locked = await connection.oneFirst(sql.type(z.object({ ok: z.boolean() }))`SELECT pg_try_advisory_lock(hashtext('run-retention')) AS ok`);
    if (!locked) return { runs: 0 };
    let runs = 0;
    try {
      for (;;) {
        const due = await connection.anyFirst(
          sql.type(z.object({ id: z.string() }))`SELECT id FROM rm.runs WHERE finished_at < ${cutoff} ORDER BY finished_at, id LIMIT ${BATCH}`,
        );
        for (const id of due) await pruneRun(services, id);
        runs += due.length;
        if (due.length < BATCH) return { runs };
      }
    } finally {
      await connection.query(sql.unsafe`SELECT pg_advisory_unlock(hashtext('run-retention'))`);
    }
  });
}

export function scheduleRunRetention(services: Services, everyMs = EVERY_MS): () => void {
  const pass = () =>
    pruneRuns(services).then(
      (r) => r.runs && services.log.info(r, `removed the Runs that finished more than ${services.config.runRetentionDays} days ago`),
      (error) => services.log.error({ err: error }, 'Run retention failed; it tries again within the hour'),
    );
  const first = setTimeout(pass, 60_000);
  first.unref();
  const timer = setInterval(pass, everyMs);
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
