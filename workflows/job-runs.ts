import {
  CancellationScope,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  executeChild,
  isCancellation,
  proxyActivities,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { runWorkflowId } from '../temporal/ids.js';
import type { RunTicket } from '../temporal/tickets.js';
import { runJobWorkflow } from './run-job.js';
import { timeouts } from '../temporal/timeouts.js';

const { cancelQueuedRuns } = proxyActivities<Activities>(timeouts.record);

export const enqueueRunSignal = defineSignal<[RunTicket]>('enqueueRun');
export const jobRunsQuery = defineQuery<{ running: string | null; queued: string[] }>('runs');

/** How long an idle coordinator waits for the next Run before it finishes (a new request starts it again). */
const IDLE = '2 minutes';
/** Runs per coordinator history before it continues as new. */
const RUNS_PER_HISTORY = 100;
/** Run ids remembered to drop a ticket signalled twice. */
const SEEN = 200;

export interface JobRunsInput {
  jobId: string;
  /** Carried over when continuing as new. */
  queue?: RunTicket[];
  seen?: string[];
}

/**
 * The coordinator of one Job's Runs, workflow id `job-<jobId>`: Run requests (Run Now, retries,
 * schedule fires) arrive as tickets and run one at a time, in arrival order, each as its own
 * child workflow `run-<runId>`. A Run Now during a Run therefore waits behind it; the API
 * refuses requests beyond MAX_QUEUED_RUNS waiting ones. Cancelling this workflow (the Job was
 * deleted) cancels the Run in progress, cleanly, and records the waiting ones as cancelled.
 */
export async function jobRunsWorkflow(input: JobRunsInput): Promise<void> {
  const queue: RunTicket[] = [...(input.queue ?? [])];
  const seen: string[] = [...(input.seen ?? [])];
  let running: string | null = null;

  setHandler(enqueueRunSignal, (ticket) => {
    if (seen.includes(ticket.runId)) return;
    seen.push(ticket.runId);
    if (seen.length > SEEN) seen.splice(0, seen.length - SEEN);
    queue.push(ticket);
  });
  setHandler(jobRunsQuery, () => ({ running, queued: queue.map((t) => t.runId) }));

  let done = 0;
  try {
    for (;;) {
      if (!(await condition(() => queue.length > 0, IDLE))) {
        if (queue.length === 0) return;
        continue;
      }
      const ticket = queue.shift()!;
      running = ticket.runId;
      try {
        await executeChild(runJobWorkflow, {
          workflowId: runWorkflowId(ticket.runId),
          args: [ticket],
          // One workflow per Run, ever: a ticket seen twice cannot run the Run twice.
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          // Should this coordinator be terminated, its Run is cancelled (and records it) rather than orphaned.
          parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        });
      } catch (error) {
        if (isCancellation(error)) throw error;
        // A failed Run has recorded its failure; the next one runs.
      } finally {
        running = null;
      }
      done += 1;
      if (done >= RUNS_PER_HISTORY || workflowInfo().continueAsNewSuggested) {
        await condition(allHandlersFinished);
        await continueAsNew<typeof jobRunsWorkflow>({ jobId: input.jobId, queue, seen });
      }
    }
  } catch (error) {
    if (!isCancellation(error)) throw error;
    const waiting = queue.map((t) => t.runId);
    if (waiting.length)
      await CancellationScope.nonCancellable(() => cancelQueuedRuns({ runIds: waiting, reason: 'The Job was deleted before this Run started' }));
    throw error;
  }
}
