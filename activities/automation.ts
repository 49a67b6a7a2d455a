import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { load } from '../application/commands.js';
import { derivedRunId, requestAutomatedRun, type SkipReason } from '../application/runs.js';
import type { Services } from '../application/services.js';
import { sourceChanged } from '../application/transfers.js';
import { jobDecider, jobStream } from '../domain/jobs/job.js';
import { resolveValues } from '../domain/jobs/parameters.js';
import { waitingOrRunning } from '../projections/runs.js';
import { domainErrorsAsFailures } from '../temporal/failures.js';

/*
 * What starts Runs without a person, on the worker: a Schedule's fire (workflows/scheduled-run.ts)
 * and an on-change check (workflows/watch-source.ts). Both ask for a Run through
 * application/runs.ts requestAutomatedRun, with a Run id derived from their workflow's id, so a
 * retried activity asks for the same Run.
 */

interface ScheduledRunInput {
  jobId: string;
  ownerId: string;
  workflowId: string;
  scheduledFor: string | null;
}

interface ChangeCheckInput {
  jobId: string;
  ownerId: string;
  workflowId: string;
}

export interface ChangeCheckResult {
  /** null when no check was made (the Job is disabled, a Run is waiting or running) or it failed. */
  changed: boolean | null;
  runId: string | null;
  skipped?: SkipReason | 'run_in_progress' | 'check_failed' | 'no_trigger';
}

/** A check may not hang a worker slot: past this it is given up (the next one comes). */
const CHECK_DEADLINE_MS = 60_000;

export function automationActivities(services: Services) {
  return {
    /** A Schedule fired: ask for a Run as Run Now does (application/runs.ts says when it is skipped). */
    async requestScheduledRun(input: ScheduledRunInput): Promise<{ runId: string | null }> {
      return domainErrorsAsFailures(async () => {
        const { runId } = await requestAutomatedRun(services, {
          runId: derivedRunId(input.workflowId),
          jobId: input.jobId,
          ownerId: input.ownerId,
          trigger: 'schedule',
          retryOf: null,
          scheduledFor: input.scheduledFor,
        });
        return { runId };
      });
    },

    /**
     * An on-change check: unless a Run of the Job waits or runs (it reads the Source anyway), ask
     * the Source's connector whether its data differs from what the last succeeded Run read
     * (the Job's sync cursor), without reading it; a change asks for a Run. A check that fails
     * is logged and left to the next one.
     */
    async checkSourceForChange(input: ChangeCheckInput): Promise<ChangeCheckResult> {
      const { state: job } = await load(services, jobStream(input.jobId), jobDecider);
      if (job.status !== 'active' || !job.enabled || job.ownerId !== input.ownerId) return { changed: null, runId: null, skipped: 'job_disabled' };
      if (!job.definition.triggers.on_change) return { changed: null, runId: null, skipped: 'no_trigger' };
      const busy = await waitingOrRunning(services.pool, input.jobId);
      if (busy.queued.length > 0 || busy.running > 0) return { changed: null, runId: null, skipped: 'run_in_progress' };
      const d = job.definition;
      const workDir = await mkdtemp(path.join(tmpdir(), 'svc-check-'));
      let changed: boolean;
      try {
        changed = await sourceChanged(
          services,
          {
            ownerId: job.ownerId,
            sourceId: d.source_id,
            resource: d.source_resource ?? {},
            parameters: resolveValues(d.parameters, {}),
            sync: job.sync.cursor === null ? null : { cursor: job.sync.cursor },
          },
          { log: services.log, workDir, maxBytes: services.config.maxJobInputBytes, signal: AbortSignal.timeout(CHECK_DEADLINE_MS) },
        );
      } catch (error) {
        services.log.warn({ jobId: input.jobId, err: error }, 'on-change check failed; the next one tries again');
        return { changed: null, runId: null, skipped: 'check_failed' };
      } finally {
        await rm(workDir, { recursive: true, force: true });
      }
      if (!changed) return { changed: false, runId: null };
      const requested = await domainErrorsAsFailures(() =>
        requestAutomatedRun(services, {
          runId: derivedRunId(input.workflowId),
          jobId: input.jobId,
          ownerId: input.ownerId,
          trigger: 'on_change',
          retryOf: null,
          scheduledFor: null,
        }),
      );
      return { changed: true, ...requested };
    },
  };
}
