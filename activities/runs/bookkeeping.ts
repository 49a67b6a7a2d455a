import { load, record } from '../../application/commands.js';
import { recordQueuedRun } from '../../application/runs.js';
import type { Services } from '../../application/services.js';
import { DomainError } from '../../domain/errors.js';
import type { StepName } from '../../domain/jobs/definition.js';
import { jobDecider, jobStream, syncForRun } from '../../domain/jobs/job.js';
import type { RunError } from '../../domain/runs/facts.js';
import { runDecider, runStream, stepAtFault } from '../../domain/runs/run.js';
import type { ExistingRun } from '../../domain/runs/state.js';
import { domainErrorsAsFailures } from '../../temporal/failures.js';
import type { RunTicket } from '../../temporal/tickets.js';

export interface RunPlan {
  proceed: boolean;
  steps: StepName[];
  position: string;
  /** Heartbeat timeout of the step activities (SVC_HEARTBEAT_TIMEOUT_S); absent in histories recorded before it existed. */
  heartbeatTimeoutMs?: number;
}

interface BeginRunInput {
  ticket: RunTicket;
  workflowId: string;
  workflowRunId: string;
}

interface FinishRunInput {
  runId: string;
  outcome: 'succeeded' | 'failed' | 'cancelled';
  error?: RunError;
  /** The failure as each step of an activity that ran several would record it: the Run says which step failed. */
  byStep?: RunError[];
  reason?: string;
  skippedReason?: string | null;
  sync?: { cursor: unknown } | null;
}

/**
 * A Run's bookkeeping, around its steps: recording it queued, started and ended, removing its
 * files, cancelling the Runs of a deleted Job.
 */
export function bookkeepingActivities(services: Services) {
  return {
    /**
     * Records the Run as queued (if the API has not yet) and as started, with the sync state it
     * reads with. A Run cancelled while it waited, or of a Job deleted meanwhile, does not start.
     */
    async beginRun(input: BeginRunInput): Promise<RunPlan> {
      return domainErrorsAsFailures(async () => {
        const plan = await beginRunSteps(services, input);
        // The step activities' heartbeat timeout comes from this worker's settings, through the
        // workflow's history (a workflow cannot read the environment).
        return { ...plan, heartbeatTimeoutMs: services.config.heartbeatTimeoutMs };
      });
    },

    /**
     * Tells the Job how its Run ended (consecutive failures, the new sync cursor), then records it on the Run.
     * Returns where the event store stands, for whoever waits on the read models.
     */
    async finishRun(input: FinishRunInput): Promise<{ position: string; error?: RunError }> {
      return domainErrorsAsFailures(() => recordRunEnd(services, input));
    },

    async cleanupRun(input: { runId: string }): Promise<void> {
      await services.files.remove(input.runId);
    },

    /** The Job was deleted: the Runs still waiting are recorded as cancelled. */
    async cancelQueuedRuns(input: { runIds: string[]; reason: string }): Promise<void> {
      for (const runId of input.runIds) {
        if ((await load(services, runStream(runId), runDecider)).state.status === 'absent') continue;
        await record(services, runStream(runId), runDecider, { type: 'CancelRun', runId, reason: input.reason, at: services.clock() });
      }
    },
  };
}

async function readRun(services: Services, runId: string): Promise<ExistingRun> {
  const { state } = await load(services, runStream(runId), runDecider);
  if (state.status === 'absent') throw new DomainError('run_not_found', `Run ${runId} was not found`);
  return state;
}

const readJob = async (services: Services, jobId: string) => (await load(services, jobStream(jobId), jobDecider)).state;

/** Records the Run as queued (if the API has not yet) and as started; says whether it proceeds. */
async function beginRunSteps(services: Services, input: BeginRunInput): Promise<Omit<RunPlan, 'heartbeatTimeoutMs'>> {
  const { runId } = input.ticket;
  const queued = await recordQueuedRun(services, input.ticket);
  if (queued.status === 'skipped') return { proceed: false, steps: [], position: queued.position };
  const run = await readRun(services, runId);
  const steps = run.steps.map((s) => s.name);
  if (run.status === 'running') return { proceed: true, steps, position: '0' };
  if (run.status !== 'queued') return { proceed: false, steps, position: '0' };
  const job = await readJob(services, run.jobId);
  if (job.status !== 'active') {
    const outcome = await record(services, runStream(runId), runDecider, {
      type: 'CancelRun',
      runId,
      reason: 'The Job was deleted before this Run started',
      at: services.clock(),
    });
    return { proceed: false, steps, position: outcome.position };
  }
  const outcome = await record(services, runStream(runId), runDecider, {
    type: 'StartRun',
    runId,
    workflowId: input.workflowId,
    workflowRunId: input.workflowRunId,
    sync: syncForRun(job.sync),
    at: services.clock(),
  });
  return { proceed: true, steps, position: outcome.position };
}

async function recordRunEnd(services: Services, input: FinishRunInput): Promise<{ position: string; error?: RunError }> {
  const { runId } = input;
  const at = services.clock();
  const run = await readRun(services, runId);
  let error = input.error;
  if (input.outcome === 'failed' && input.byStep) {
    // An activity that ran several steps failed: the Run's record says in which.
    const atFault = stepAtFault(run);
    error = input.byStep.find((e) => e.step === atFault) ?? error;
  }
  const command =
    input.outcome === 'succeeded'
      ? ({ type: 'SucceedRun', runId, skippedReason: input.skippedReason ?? null, at } as const)
      : input.outcome === 'failed'
        ? ({ type: 'FailRun', runId, error: error!, at } as const)
        : ({ type: 'CancelRun', runId, reason: input.reason ?? 'cancelled', at } as const);
  const sync = input.outcome === 'succeeded' && run.sync ? { cursor: input.sync ? input.sync.cursor : run.sync.cursor, seq: run.sync.seq } : undefined;
  // The Job first: the jobs projector runs before the runs projector, so whoever sees the Run
  // ended also sees its Job's new cursor and counts. A retry after a crash between the two
  // records nothing new for the Job (it ignores a Run it has already recorded).
  const job = await record(services, jobStream(run.jobId), jobDecider, {
    type: 'RecordRunOutcome',
    jobId: run.jobId,
    runId,
    trigger: run.trigger,
    status: input.outcome,
    ...(sync ? { sync } : {}),
    maxConsecutiveFailures: services.config.jobMaxConsecutiveFailures,
    at,
  });
  const ran = await record(services, runStream(runId), runDecider, command);
  const position = BigInt(job.position) > BigInt(ran.position) ? job.position : ran.position;
  return error ? { position, error } : { position };
}
