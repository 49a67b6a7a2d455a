import type { JobDefinition } from '../../domain/jobs/definition.js';
import type { RunCommand } from '../../domain/runs/run.js';

/*
 * The commands a Run's unit specs start from: run_1 of job_1, queued by hand and started, with
 * what a spec changes given as overrides.
 */

type Queue = Extract<RunCommand, { type: 'QueueRun' }>;
type Start = Extract<RunCommand, { type: 'StartRun' }>;

/** QueueRun of run_1 (job_1, usr_a, attempt 1, by hand, extract then deliver), at `at`. */
export const queueRun = (at: Date, overrides: Partial<Omit<Queue, 'type'>> = {}): Queue => ({
  type: 'QueueRun',
  runId: 'run_1',
  jobId: 'job_1',
  ownerId: 'usr_a',
  trigger: 'manual',
  attempt: 1,
  retryOf: null,
  snapshot: { name: 'j' } as JobDefinition,
  steps: ['extract', 'deliver'],
  scheduledFor: null,
  parameters: {},
  triggeredBy: null,
  retryDefinition: null,
  deliveryId: null,
  at,
  ...overrides,
});

/** StartRun of run_1 by its workflow, at `at`. */
export const startRun = (at: Date, overrides: Partial<Omit<Start, 'type'>> = {}): Start => ({
  type: 'StartRun',
  runId: 'run_1',
  workflowId: 'run-run_1',
  workflowRunId: 'abc',
  sync: { cursor: null, reinitialize: false, seq: 0 },
  at,
  ...overrides,
});
