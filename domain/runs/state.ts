import type { JobDefinition, StepName } from '../jobs/definition.js';
import type { ParameterValues } from '../jobs/parameters.js';
import type { NotificationRecord } from '../notifications/subscriptions.js';
import type { RunError, RunStats, RunWarning, StepLog, StepProgress } from './facts.js';
import type { RunStatus, StepStatus } from './statuses.js';
import type { RunTrigger } from './triggers.js';

/* A Run as its events fold it (domain/runs/run.ts evolves it; the Runs read model stores it). */

/** The Run of another Job whose end started this one (an `after` trigger), and how long the chain is so far. */
export interface TriggeredBy {
  job_id: string;
  run_id: string;
  depth: number;
}

/** What a retry ran: the Job as it is now (default), or the failed Run's own snapshot and values. */
export type RetryDefinition = 'current' | 'original';

/** The sync state a Run read with (domain/jobs/job.ts syncForRun). */
export interface RunSync {
  cursor: unknown;
  reinitialize: boolean;
  seq: number;
}

export interface StepState {
  name: StepName;
  status: StepStatus;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  /** Attempts of the step that failed (absent in Runs recorded before this was kept: 0). */
  failed_attempts?: number;
  /** The error of the latest failed attempt. */
  last_error?: RunError | null;
  /** What the step reported last while it worked (absent before it reported, or in older Runs). */
  progress?: StepProgress | null;
  /** What the step read and wrote, once it finished (absent in older Runs). */
  log?: StepLog | null;
}

export interface ExistingRun {
  status: RunStatus;
  jobId: string;
  ownerId: string;
  trigger: RunTrigger;
  attempt: number;
  snapshot: JobDefinition;
  parameters: ParameterValues;
  triggeredBy: TriggeredBy | null;
  retryDefinition: RetryDefinition | null;
  deliveryId: string | null;
  steps: StepState[];
  stats: RunStats;
  /** The steps' warnings, in order (absent in Runs recorded before they were kept). */
  warnings?: RunWarning[];
  sync: RunSync | null;
  retriedBy: string | null;
  /** When the Run was queued, and for a scheduled Run the fire time meant (what its metrics measure from). */
  queuedAt?: string;
  scheduledFor?: string | null;
  /** Notifications about this Run, as they were delivered or given up on (absent in older Runs). */
  notifications?: NotificationRecord[];
  /** When it was queued, started and finished, and how it ended (absent in states folded before they were kept). */
  createdAt?: string;
  startedAt?: string | null;
  finishedAt?: string | null;
  error?: RunError | null;
  skippedReason?: string | null;
}
export type RunState = { status: 'absent' } | ExistingRun;
