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
  /**
   * The W3C traceparent of the request that asked for the Run, with traces on: the Run's
   * workflow joins that request's trace, not the trace of whichever request started the Job's
   * coordinator (workflows/trace-interceptors.ts).
   */
  traceparent?: string;
}
