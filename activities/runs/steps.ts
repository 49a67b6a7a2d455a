import { ApplicationFailure, Context } from '@temporalio/activity';
import { mkdirSync } from 'node:fs';
import { record } from '../../application/commands.js';
import { stepProgressOf, type TransferContext } from '../../application/transfers.js';
import { DomainError } from '../../domain/errors.js';
import type { StepName } from '../../domain/jobs/definition.js';
import type { RunStats, StepLog, StepProgress } from '../../domain/runs/facts.js';
import { runDecider, runStream } from '../../domain/runs/run.js';
import type { ExistingRun } from '../../domain/runs/state.js';
import { domainErrorsAsFailures, runErrorOf } from '../../temporal/failures.js';
import type { ProcessingWarning } from '../../geo/warnings.js';
import { withSpan } from '../../platform/tracing.js';
import { startHeartbeats } from '../heartbeats.js';
import { observeStep, type StepOutcome } from './step-metrics.js';
import type { StepServices } from './step-services.js';

/*
 * The machinery every step of a Run shares: each step activity records its own start and finish
 * on the Run (idempotent, so a retried attempt appends nothing twice), heartbeats while it works
 * so a dead worker's attempt is retried elsewhere, and leaves its files under the Run's folder
 * for the next step.
 */

/** A step's work: the Run, its folder, and where to say how far it is (heartbeats and the Run record). */
export type StepWork<T> = (
  run: ExistingRun,
  dir: string,
  progress: (p: StepProgress) => void,
) => Promise<{ result: T; stats?: Partial<RunStats>; skipped?: boolean; warnings?: ProcessingWarning[]; log?: StepLog }>;

/** Progress is recorded on the Run at most this often (heartbeats carry every update). */
const PROGRESS_RECORD_MS = 5_000;

/**
 * Records the step's start, runs it with heartbeats, records its finish with what it counted.
 * `handOver: false` when the next step runs in the same activity: its files then stay on this
 * worker (a retry of the activity does the step again).
 */
export async function runStep<T>(services: StepServices, runId: string, name: StepName, work: StepWork<T>, handOver = true): Promise<T> {
  const began = performance.now();
  let run: ExistingRun | null = null;
  let outcome: StepOutcome = 'failed';
  // A span per step (an activity may run two), and its duration in the step histogram.
  return withSpan(`run step ${name}`, { 'geoflow.run_id': runId, 'geoflow.step': name }, async () => {
    try {
      const seen: StepWork<T> = (r, dir, progress) => {
        run = r;
        return work(r, dir, progress);
      };
      const done = await attemptStep(services, runId, name, seen, handOver);
      outcome = done.skipped ? 'skipped' : 'succeeded';
      return done.result;
    } catch (error) {
      if (Context.current().cancellationSignal.aborted) outcome = 'cancelled';
      await noteFailedAttempt(services, runId, name, error);
      throw error;
    } finally {
      observeStep(services, name, run, outcome, (performance.now() - began) / 1000);
    }
  });
}

/**
 * A failure Temporal will retry (connection refused, timeouts, 5xx, a crash) is noted on the Run,
 * so that whoever watches a Run that keeps `running` sees why; one it will not retry fails the
 * Run instead. The note never changes the failure that Temporal sees.
 */
async function noteFailedAttempt(services: StepServices, runId: string, name: StepName, error: unknown): Promise<void> {
  if (error instanceof ApplicationFailure && error.nonRetryable) return;
  const { info, cancellationSignal } = Context.current();
  if (cancellationSignal.aborted) return;
  await record(services, runStream(runId), runDecider, {
    type: 'NoteFailedAttempt',
    runId,
    step: name,
    attempt: info.attempt,
    error: runErrorOf(error, name),
    at: services.clock(),
  }).catch((noteError: unknown) => services.log.warn({ runId, step: name, err: noteError }, 'could not note a failed attempt on the Run'));
}

async function attemptStep<T>(
  services: StepServices,
  runId: string,
  name: StepName,
  work: StepWork<T>,
  handOver: boolean,
): Promise<{ result: T; skipped: boolean }> {
  const { files } = services;
  return domainErrorsAsFailures(async () => {
    // The Run as the start leaves it: one read of its stream for both.
    const started = await record(services, runStream(runId), runDecider, { type: 'StartStep', runId, step: name, at: services.clock() });
    if (started.state.status === 'absent') throw new DomainError('run_not_found', `Run ${runId} was not found`);
    const run = started.state;
    const heartbeat = startHeartbeats(services.config.heartbeatTimeoutMs);
    const { cancellationSignal } = Context.current();
    const recorder = progressRecorder(services, runId, name);
    const progress = (p: StepProgress) => {
      heartbeat.progress(p);
      recorder.offer(heartbeat.latest()!);
    };
    try {
      const done = await work(run, await files.workDir(runId, name), progress).catch((error) => {
        // Cancelled (the Job was deleted): say so, rather than with whatever the aborted transfer threw.
        throw cancellationSignal.aborted ? cancellationSignal.reason : error;
      });
      // Stored before the step is recorded done: the next step may run on another worker, and
      // a retry of it after this worker dies finds its input in storage. (A delivery's folder
      // holds only its scratch.)
      if (name !== 'deliver' && handOver) await files.publish(runId, name);
      // The last progress lands before the finish (a note on a finished step is dropped).
      await recorder.stop();
      await record(services, runStream(runId), runDecider, {
        type: 'FinishStep',
        runId,
        step: name,
        status: done.skipped ? 'skipped' : 'succeeded',
        stats: done.stats ?? {},
        ...(done.warnings?.length ? { warnings: done.warnings } : {}),
        ...(done.log ? { log: done.log } : {}),
        at: services.clock(),
      });
      return { result: done.result, skipped: done.skipped ?? false };
    } finally {
      heartbeat.stop();
      await recorder.stop();
    }
  });
}

/**
 * Notes a step's progress on the Run every PROGRESS_RECORD_MS at most, one write at a time, so
 * the Run page, `svc jobs run --wait` and the Python client see a long write move; a failed
 * note is logged, never fails the step.
 */
function progressRecorder(services: StepServices, runId: string, name: StepName) {
  let pending: StepProgress | null = null;
  let lastAt = 0;
  let writing: Promise<void> = Promise.resolve();
  let stopped = false;
  const flush = () => {
    if (!pending || stopped) return;
    const p = pending;
    pending = null;
    lastAt = Date.now();
    writing = writing.then(() =>
      record(services, runStream(runId), runDecider, { type: 'NoteStepProgress', runId, step: name, progress: p, at: services.clock() }).then(
        () => undefined,
        (error: unknown) => services.log.warn({ runId, step: name, err: error }, 'could not note progress on the Run'),
      ),
    );
  };
  return {
    offer(p: StepProgress) {
      pending = p;
      if (Date.now() - lastAt >= PROGRESS_RECORD_MS) flush();
    },
    async stop() {
      flush();
      stopped = true;
      await writing;
    },
  };
}

/** What a step that talks to a Source or Destination gives its connector: the step's folder, the Job input limit, cancellation and progress. */
export function transferContext(services: Pick<StepServices, 'log' | 'config'>, dir: string, progress: (p: StepProgress) => void): TransferContext {
  mkdirSync(dir, { recursive: true });
  return {
    log: services.log,
    workDir: dir,
    // A Run reads what its Source holds, up to the Job input limit (not the interactive upload limit).
    maxBytes: services.config.maxJobInputBytes,
    signal: Context.current().cancellationSignal,
    progress: (info) => progress(stepProgressOf(info)),
  };
}
