import { describe, expect, it } from 'vitest';
import { deciderSpec } from '../../test/support/decider.js';
import type { JobDefinition } from '../jobs/definition.js';
import { runDecider, type RunCommand } from './run.js';
import type { ExistingRun } from './state.js';
import { queueRun, startRun } from '../../test/support/run-commands.js';

const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
const { state, decide, play, given } = deciderSpec(runDecider);

const snapshot = { name: 'j' } as JobDefinition;
const queue = queueRun(t(0), { snapshot, steps: ['extract', 'transform', 'deliver'] });
const start = startRun(t(1));
const step = (name: 'extract' | 'transform' | 'deliver', s: number, finish: number, stats = {}): RunCommand[] => [
  { type: 'StartStep', runId: 'run_1', step: name, at: t(s) },
  { type: 'FinishStep', runId: 'run_1', step: name, status: 'succeeded', stats, at: t(finish) },
];

describe('run decider', () => {
  it('moves queued → running → succeeded with each step timed and counted', () => {
    const history = play([
      queue,
      start,
      ...step('extract', 1, 3, { features_read: 10, bytes_read: 500 }),
      ...step('transform', 3, 4),
      ...step('deliver', 4, 7, { features_written: 10 }),
      { type: 'SucceedRun', runId: 'run_1', skippedReason: null, at: t(7) },
    ]);
    const run = state(history) as ExistingRun;
    expect(run.status).toBe('succeeded');
    expect(run.steps.map((s) => [s.name, s.status, s.duration_ms])).toEqual([
      ['extract', 'succeeded', 2000],
      ['transform', 'succeeded', 1000],
      ['deliver', 'succeeded', 3000],
    ]);
    expect(run.stats).toEqual({ features_read: 10, bytes_read: 500, features_written: 10, bytes_written: null });
  });

  it('is idempotent: every repeated command (a retried activity) appends nothing', () => {
    const history = play([queue, start, ...step('extract', 1, 2)]);
    for (const again of [queue, start, ...step('extract', 1, 2)]) expect(decide(history, again)).toEqual([]);
    const done = play(
      [{ type: 'FailRun', runId: 'run_1', error: { code: 'source_failed', message: 'x', step: 'transform', retryable: false }, at: t(3) }],
      history,
    );
    expect(decide(done, { type: 'FailRun', runId: 'run_1', error: { code: 'other', message: 'y', step: null, retryable: false }, at: t(4) })).toEqual([]);
    expect(decide(done, { type: 'CancelRun', runId: 'run_1', reason: 'late', at: t(4) })).toEqual([]);
    expect(decide(done, { type: 'SucceedRun', runId: 'run_1', skippedReason: null, at: t(4) })).toEqual([]);
  });

  it('a failure marks its step failed and the steps never reached skipped', () => {
    const history = play([
      queue,
      start,
      ...step('extract', 1, 2),
      { type: 'StartStep', runId: 'run_1', step: 'transform', at: t(2) },
      { type: 'FailRun', runId: 'run_1', error: { code: 'invalid_transformation', message: 'bad', step: 'transform', retryable: false }, at: t(5) },
    ]);
    expect((state(history) as ExistingRun).steps.map((s) => [s.name, s.status, s.duration_ms])).toEqual([
      ['extract', 'succeeded', 1000],
      ['transform', 'failed', 3000],
      ['deliver', 'skipped', null],
    ]);
  });

  it('an unchanged source skips the rest of the Run, which still succeeds', () => {
    const history = play([queue, start, ...step('extract', 1, 2), { type: 'SucceedRun', runId: 'run_1', skippedReason: 'source_unchanged', at: t(2) }]);
    expect((state(history) as ExistingRun).steps.map((s) => s.status)).toEqual(['succeeded', 'skipped', 'skipped']);
  });

  it('a queued Run can be cancelled before it starts, and then never starts', () => {
    const history = play([queue, { type: 'CancelRun', runId: 'run_1', reason: 'job_deleted', at: t(1) }]);
    expect(state(history).status).toBe('cancelled');
    expect(decide(history, start)).toEqual([]);
  });

  it('only a failed Run can be retried, once (409 otherwise), by its owner', () => {
    const retry = (actorId: string, retryRunId: string): RunCommand => ({ type: 'MarkRetried', runId: 'run_1', actorId, retryRunId, at: t(3) });
    const running = play([queue, start]);
    given(running)
      .when(retry('usr_a', 'run_2'))
      .thenRefuses('conflict', /is running; only a failed Run can be retried/);
    const failed = play([{ type: 'FailRun', runId: 'run_1', error: { code: 'x', message: 'x', step: 'extract', retryable: true }, at: t(2) }], running);
    given(failed)
      .when(retry('usr_b', 'run_2'))
      .thenRefuses('run_not_found', /not found/);
    given(failed)
      .when(retry('usr_a', 'run_2'))
      .then([{ type: 'RunRetried', data: { run_id: 'run_1', retry_run_id: 'run_2', at: t(3).toISOString() } }]);
    const retried = play([retry('usr_a', 'run_2')], failed);
    given(retried).when(retry('usr_a', 'run_2')).thenNothing();
    given(retried)
      .when(retry('usr_a', 'run_3'))
      .thenRefuses('conflict', /already retried by run_2/);
  });

  it('notes a failed attempt of a running step once per attempt, and keeps it after the step succeeds', () => {
    const error = { code: 'source_failed', message: 'http://x answered HTTP 503', step: 'extract' as const, retryable: true, reason: 'server_error' };
    const note = (attempt: number): RunCommand => ({ type: 'NoteFailedAttempt', runId: 'run_1', step: 'extract', attempt, error, at: t(3) });
    const running = play([queue, start, { type: 'StartStep', runId: 'run_1', step: 'extract', at: t(2) }]);
    const noted = play([note(1), note(1)], running);
    expect(noted.filter((e) => e.type === 'RunStepAttemptFailed')).toHaveLength(1);
    expect((state(noted) as ExistingRun).steps[0]).toMatchObject({ status: 'running', failed_attempts: 1, last_error: error });
    const after = play([note(2), { type: 'FinishStep', runId: 'run_1', step: 'extract', status: 'succeeded', at: t(9) }], noted);
    expect((state(after) as ExistingRun).steps[0]).toMatchObject({ status: 'succeeded', failed_attempts: 2, last_error: error });
    // Not for a step that is not running.
    expect(decide(after, note(3))).toEqual([]);
  });

  it('notes the progress of a running step, keeps the latest after it finishes, and drops a note that comes late', () => {
    const progress = (bytes: number, percent: number): RunCommand => ({
      type: 'NoteStepProgress',
      runId: 'run_1',
      step: 'transform',
      progress: { bytes_written: bytes, percent },
      at: t(4),
    });
    const running = play([queue, start, ...step('extract', 1, 2), { type: 'StartStep', runId: 'run_1', step: 'transform', at: t(3) }]);
    const noted = play([progress(1_000, 10), progress(9_000, 90)], running);
    expect((state(noted) as ExistingRun).steps[1]).toMatchObject({ status: 'running', progress: { bytes_written: 9_000, percent: 90 } });
    const finished = play([{ type: 'FinishStep', runId: 'run_1', step: 'transform', status: 'succeeded', at: t(6) }], noted);
    expect((state(finished) as ExistingRun).steps[1]).toMatchObject({ status: 'succeeded', progress: { bytes_written: 9_000, percent: 90 } });
    expect(decide(finished, progress(10_000, 100))).toEqual([]);
    // Not for a step that has not started.
    expect(decide(running, { type: 'NoteStepProgress', runId: 'run_1', step: 'deliver', progress: { bytes_written: 1 }, at: t(4) })).toEqual([]);
  });
});
