import type { RunTrigger } from '../domain/runs/triggers.js';
import type { RetryDefinition, TriggeredBy } from '../domain/runs/state.js';

/**
 * What a Job's coordinator needs to run one Run (signalled to it by application/runs.ts, carried
 * in workflow payloads); everything else is read from the event store. Workflow-safe.
 */
export interface RunTicket {
  runId: string;
  jobId: string;
  ownerId: string;
  trigger: RunTrigger;
  /** The failed Run a retry repeats. */
  retryOf: string | null;
  /** A retry's definition: the Job as it is now, or the failed Run's snapshot (tickets from before this existed: original). */
  retryDefinition?: RetryDefinition;
  /** Scheduled Runs: the fire time (ISO). */
  scheduledFor: string | null;
  /**
   * The W3C traceparent of the request that asked for the Run, with traces on: the Run's
   * workflow joins that request's trace, not the trace of whichever request started the Job's
   * coordinator (workflows/trace-interceptors.ts).
   */
  traceparent?: string;
  /** Parameter values as given (Run Now, webhook); checked and completed with defaults when the Run is recorded. */
  parameters?: Record<string, unknown>;
  /** `after` Runs: the Run of the other Job whose end started this one. */
  triggeredBy?: TriggeredBy;
  /** Webhook Runs: the caller's delivery id. */
  deliveryId?: string;
}
