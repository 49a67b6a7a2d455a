import {
  ActivityCancellationType,
  ApplicationFailure,
  CancellationScope,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { RunArtifact } from '../activities/runs/artifact.js';
import { runErrorOf } from '../temporal/failures.js';
import type { RunTicket } from '../temporal/tickets.js';
import type { StepName } from '../domain/jobs/definition.js';
import type { RunError } from '../domain/runs/facts.js';
import { timeouts, withHeartbeatTimeout } from '../temporal/timeouts.js';

// The Run's bookkeeping (record that it started, how it ended; remove its folder) as local
// activities: they run inside the workflow task that decides them, so a Run costs three server
// round trips fewer (docs/decisions.md, "cheaper Runs"). Histories recorded before the change
// scheduled them as activities; `patched` keeps those replaying (and Runs started by an older
// worker finishing) with the same commands.
const LOCAL_BOOKKEEPING = 'local-bookkeeping';
// A Job with no step between extract and deliver runs both in one activity (extractAndDeliverStep,
// activities/runs/extract-and-deliver.ts). Histories from before took two; `patched` keeps them
// replaying.
const EXTRACT_AND_DELIVER = 'extract-and-deliver';
const remoteBookkeeping = proxyActivities<Activities>(timeouts.record);
const localBookkeeping = proxyLocalActivities<Activities>(timeouts.localRecord);
// A cancelled step finishes its own cleanup (a delivery rolls back its staging) before the Run
// records that it was cancelled.
const waitForCancel = { cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED };

export interface RunResult {
  runId: string;
  status: 'succeeded' | 'failed' | 'cancelled' | 'skipped';
  position: string;
}

/**
 * One Run of a Job, workflow id `run-<runId>`, started by the Job's coordinator: extract →
 * transform → python → convert → deliver (the stages the Job has), each an activity with a
 * named timeout and retry profile that records its own start and finish; the Run's own start and
 * end are recorded by local activities. Transient remote
 * failures are retried with backoff inside an activity's profile; a permanent one (or retries
 * spent) fails the Run with a classified error, and the workflow itself then fails so the Temporal
 * UI shows it. An unchanged source (ETag / Last-Modified) skips the later steps. Deterministic:
 * every clock read, id and I/O is in an activity.
 */
export async function runJobWorkflow(ticket: RunTicket): Promise<RunResult> {
  const { runId } = ticket;
  const info = workflowInfo();
  const { beginRun, finishRun, cleanupRun } = patched(LOCAL_BOOKKEEPING) ? localBookkeeping : remoteBookkeeping;
  const plan = await beginRun({ ticket, workflowId: info.workflowId, workflowRunId: info.runId });
  if (!plan.proceed) return { runId, status: 'skipped', position: plan.position };
  const { extractStep, deliverStep, extractAndDeliverStep } = proxyActivities<Activities>({
    ...withHeartbeatTimeout(timeouts.runTransfer, plan.heartbeatTimeoutMs),
    ...waitForCancel,
  });
  const { transformStep, pythonStep, convertStep } = proxyActivities<Activities>({
    ...withHeartbeatTimeout(timeouts.processing, plan.heartbeatTimeoutMs),
    ...waitForCancel,
  });

  let step: StepName = 'extract';
  // Which of the two a failure of the one activity belongs to, the Run's record says (finishRun).
  const together = plan.steps.length === 2 && patched(EXTRACT_AND_DELIVER);
  // The one activity removes the Run's files when it succeeds: no local activity left to do it.
  let cleaned = false;
  try {
    if (together) {
      const { unchanged, sync } = await extractAndDeliverStep({ runId });
      cleaned = true;
      const { position } = await finishRun({ runId, outcome: 'succeeded', skippedReason: unchanged ? 'source_unchanged' : null, sync });
      return { runId, status: 'succeeded', position };
    }
    const extracted = await extractStep({ runId });
    const sync = extracted.sync;
    if (extracted.unchanged) {
      const { position } = await finishRun({ runId, outcome: 'succeeded', skippedReason: 'source_unchanged', sync });
      return { runId, status: 'succeeded', position };
    }
    let current: RunArtifact = extracted.artifact;
    if (plan.steps.includes('transform')) {
      step = 'transform';
      current = await transformStep({ runId, input: current });
    }
    if (plan.steps.includes('python')) {
      step = 'python';
      current = await pythonStep({ runId, input: current });
    }
    if (plan.steps.includes('convert')) {
      step = 'convert';
      current = await convertStep({ runId, input: current });
    }
    step = 'deliver';
    await deliverStep({ runId, input: current });
    const { position } = await finishRun({ runId, outcome: 'succeeded', skippedReason: null, sync });
    return { runId, status: 'succeeded', position };
  } catch (error) {
    // A step interrupted by the cancellation may fail with its own error: the scope says what happened.
    if (isCancellation(error) || CancellationScope.current().consideredCancelled) {
      await CancellationScope.nonCancellable(() => finishRun({ runId, outcome: 'cancelled', reason: 'The Run was cancelled (its Job was deleted)' }));
      throw error;
    }
    const candidate: RunError = runErrorOf(error, step);
    const byStep = together ? { byStep: [candidate, runErrorOf(error, 'deliver')] } : {};
    const ended = await CancellationScope.nonCancellable(() => finishRun({ runId, outcome: 'failed', error: candidate, ...byStep }));
    const failure = ended.error ?? candidate;
    throw ApplicationFailure.create({
      type: 'RunFailed',
      message: `${failure.code}: ${failure.message}`,
      nonRetryable: true,
      details: [{ ...failure, position: ended.position }],
    });
  } finally {
    if (!cleaned) await CancellationScope.nonCancellable(() => cleanupRun({ runId }));
  }
}
