import type { RunTrigger } from '../domain/jobs/job.js';

/**
 * What a Job's coordinator needs to run one Run (signalled to it by application/runs.ts, carried
 * in workflow payloads); everything else is read from the event store. Workflow-safe.
 */
export interface RunTicket {
  runId: string;
  jobId: string;
  ownerId: string;
  trigger: RunTrigger;
  /** The failed Run a retry repeats (its Job snapshot is reused). */
  retryOf: string | null;
  /** Scheduled Runs: the fire time (ISO). */
  scheduledFor: string | null;
}
