import { describe, expect, it } from 'vitest';
import type { JobDefinition } from '../jobs/job.js';
import { runDecider, type ExistingRun, type RunCommand, type RunEvent } from './run.js';

const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const given = (events: RunEvent[]) => events.reduce(runDecider.evolve, runDecider.initialState());
const when = (events: RunEvent[], command: RunCommand) => runDecider.decide(command, given(events));
/** Applies commands in order, as the worker would, and returns the whole history. */
const play = (commands: RunCommand[], history: RunEvent[] = []) => commands.reduce((h, c) => [...h, ...when(h, c)], history);

const snapshot = { name: 'j' } as JobDefinition;
const queue: RunCommand = {
  type: 'QueueRun', runId: 'run_1', jobId: 'job_1', ownerId: 'usr_a', trigger: 'manual', attempt: 1, retryOf: null, snapshot,
  steps: ['extract', 'transform', 'deliver'], scheduledFor: null, at: t(0),
};
const start: RunCommand = { type: 'StartRun', runId: 'run_1', workflowId: 'run-run_1', workflowRunId: 'abc', sync: { cursor: null, reinitialize: false, seq: 0 }, at: t(1) };
const step = (name: 'extract' | 'transform' | 'deliver', s: number, finish: number, stats = {}): RunCommand[] => [
  { type: 'StartStep', runId: 'run_1', step: name, at: t(s) },
  { type: 'FinishStep', runId: 'run_1', step: name, status: 'succeeded', stats, at: t(finish) },
];

describe('run decider', () => {
  it('moves queued → running → succeeded with each step timed and counted', () => {
    const history = play([queue, start, ...step('extract', 1, 3, { features_read: 10, bytes_read: 500 }), ...step('transform', 3, 4), ...step('deliver', 4, 7, { features_written: 10 }), { type: 'SucceedRun', runId: 'run_1', skippedReason: null, at: t(7) }]);
    const state = given(history) as ExistingRun;
    expect(state.status).toBe('succeeded');
    expect(state.steps.map((s) => [s.name, s.status, s.duration_ms])).toEqual([['extract', 'succeeded', 2000], ['transform', 'succeeded', 1000], ['deliver', 'succeeded', 3000]]);
    expect(state.stats).toEqual({ features_read: 10, bytes_read: 500, features_written: 10, bytes_written: null });
  });

  it('is idempotent: every repeated command (a retried activity) appends nothing', () => {
    const history = play([queue, start, ...step('extract', 1, 2)]);
    for (const again of [queue, start, ...step('extract', 1, 2)]) expect(when(history, again)).toEqual([]);
    const done = play([{ type: 'FailRun', runId: 'run_1', error: { code: 'source_failed', message: 'x', step: 'transform', retryable: false }, at: t(3) }], history);
    expect(when(done, { type: 'FailRun', runId: 'run_1', error: { code: 'other', message: 'y', step: null, retryable: false }, at: t(4) })).toEqual([]);
    expect(when(done, { type: 'CancelRun', runId: 'run_1', reason: 'late', at: t(4) })).toEqual([]);
    expect(when(done, { type: 'SucceedRun', runId: 'run_1', skippedReason: null, at: t(4) })).toEqual([]);
  });

  it('a failure marks its step failed and the steps never reached skipped', () => {
    const history = play([queue, start, ...step('extract', 1, 2), { type: 'StartStep', runId: 'run_1', step: 'transform', at: t(2) },
      { type: 'FailRun', runId: 'run_1', error: { code: 'invalid_transformation', message: 'bad', step: 'transform', retryable: false }, at: t(5) }]);
    expect((given(history) as ExistingRun).steps.map((s) => [s.name, s.status, s.duration_ms])).toEqual([['extract', 'succeeded', 1000], ['transform', 'failed', 3000], ['deliver', 'skipped', null]]);
  });

  it('an unchanged source skips the rest of the Run, which still succeeds', () => {
    const history = play([queue, start, ...step('extract', 1, 2), { type: 'SucceedRun', runId: 'run_1', skippedReason: 'source_unchanged', at: t(2) }]);
    expect((given(history) as ExistingRun).steps.map((s) => s.status)).toEqual(['succeeded', 'skipped', 'skipped']);
  });

  it('a queued Run can be cancelled before it starts, and then never starts', () => {
    const history = play([queue, { type: 'CancelRun', runId: 'run_1', reason: 'job_deleted', at: t(1) }]);
    expect(given(history).status).toBe('cancelled');
    expect(when(history, start)).toEqual([]);
  });

  it('only a failed Run can be retried, once (409 otherwise), by its owner', () => {
    const running = play([queue, start]);
    expect(() => when(running, { type: 'MarkRetried', runId: 'run_1', actorId: 'usr_a', retryRunId: 'run_2', at: t(2) })).toThrow(/only a failed Run/);
    const failed = play([{ type: 'FailRun', runId: 'run_1', error: { code: 'x', message: 'x', step: 'extract', retryable: true }, at: t(2) }], running);
    expect(() => when(failed, { type: 'MarkRetried', runId: 'run_1', actorId: 'usr_b', retryRunId: 'run_2', at: t(2) })).toThrow(/not found/);
    const retried = play([{ type: 'MarkRetried', runId: 'run_1', actorId: 'usr_a', retryRunId: 'run_2', at: t(3) }], failed);
    expect(when(retried, { type: 'MarkRetried', runId: 'run_1', actorId: 'usr_a', retryRunId: 'run_2', at: t(3) })).toEqual([]);
    expect(() => when(retried, { type: 'MarkRetried', runId: 'run_1', actorId: 'usr_a', retryRunId: 'run_3', at: t(3) })).toThrow(/already retried by run_2/);
  });

  it('notes a failed attempt of a running step once per attempt, and keeps it after the step succeeds', () => {
    const error = { code: 'source_failed', message: 'http://x answered HTTP 503', step: 'extract' as const, retryable: true, reason: 'server_error' };
    const note = (attempt: number): RunCommand => ({ type: 'NoteFailedAttempt', runId: 'run_1', step: 'extract', attempt, error, at: t(3) });
    const running = play([queue, start, { type: 'StartStep', runId: 'run_1', step: 'extract', at: t(2) }]);
    const noted = play([note(1), note(1)], running);
    expect(noted.filter((e) => e.type === 'RunStepAttemptFailed')).toHaveLength(1);
    expect((given(noted) as ExistingRun).steps[0]).toMatchObject({ status: 'running', failed_attempts: 1, last_error: error });
    const after = play([note(2), { type: 'FinishStep', runId: 'run_1', step: 'extract', status: 'succeeded', at: t(9) }], noted);
    expect((given(after) as ExistingRun).steps[0]).toMatchObject({ status: 'succeeded', failed_attempts: 2, last_error: error });
    // Not for a step that is not running.
    expect(when(after, note(3))).toEqual([]);
  });

  it('notes the progress of a running step, keeps the latest after it finishes, and drops a note that comes late', () => {
    const progress = (bytes: number, percent: number): RunCommand => ({ type: 'NoteStepProgress', runId: 'run_1', step: 'transform', progress: { bytes_written: bytes, percent }, at: t(4) });
    const running = play([queue, start, ...step('extract', 1, 2), { type: 'StartStep', runId: 'run_1', step: 'transform', at: t(3) }]);
    const noted = play([progress(1_000, 10), progress(9_000, 90)], running);
    expect((given(noted) as ExistingRun).steps[1]).toMatchObject({ status: 'running', progress: { bytes_written: 9_000, percent: 90 } });
    const finished = play([{ type: 'FinishStep', runId: 'run_1', step: 'transform', status: 'succeeded', at: t(6) }], noted);
    expect((given(finished) as ExistingRun).steps[1]).toMatchObject({ status: 'succeeded', progress: { bytes_written: 9_000, percent: 90 } });
    expect(when(finished, progress(10_000, 100))).toEqual([]);
    // Not for a step that has not started.
    expect(when(running, { type: 'NoteStepProgress', runId: 'run_1', step: 'deliver', progress: { bytes_written: 1 }, at: t(4) })).toEqual([]);
  });
});
