import { describe, expect, it } from 'vitest';
import { disabledReason, duration, isFinished, jobStages, runDuration, scheduleText } from './run-status.js';
import type { Job } from '../../types.js';

describe('how Runs and schedules read', () => {
  it('says durations in the largest sensible unit', () => {
    expect(duration(null)).toBe('—');
    expect(duration(870)).toBe('0.9 s');
    expect(duration(12_400)).toBe('12 s');
    expect(duration(75_000)).toBe('1 min 15 s');
    expect(duration(120_000)).toBe('2 min');
    expect(duration(3_723_000)).toBe('1 h 2 min');
  });

  it('measures a Run from its start to its end, or to now while it runs', () => {
    expect(runDuration({ started_at: null, finished_at: null })).toBeNull();
    expect(runDuration({ started_at: '2026-01-01T00:00:00Z', finished_at: '2026-01-01T00:00:02.5Z' })).toBe(2500);
    expect(runDuration({ started_at: '2026-01-01T00:00:00Z', finished_at: null }, Date.parse('2026-01-01T00:01:00Z'))).toBe(60_000);
  });

  it('shows a schedule in the Job’s own timezone, zero-padded', () => {
    expect(scheduleText({ schedule: null, schedule_description: null })).toBe('No schedule');
    expect(
      scheduleText({ schedule: { kind: 'daily', timezone: 'Europe/Berlin', hour: 2, minute: 5 }, schedule_description: 'every day at 02:05 (Europe/Berlin)' }),
    ).toBe('Every day at 02:05 (Europe/Berlin)');
  });

  it('explains why a disabled Job is disabled, in the server’s sentence', () => {
    expect(disabledReason({ enabled: true, disabled_reason: 'ignored' })).toBeNull();
    expect(disabledReason({ enabled: false, disabled_reason: null })).toBeNull();
    expect(disabledReason({ enabled: false, disabled_reason: 'Paused for maintenance' })).toBe('Paused for maintenance');
    expect(disabledReason({ enabled: false, disabled_reason: '' })).toBeNull();
  });

  it('knows which statuses are final', () => {
    expect(['queued', 'running'].map((s) => isFinished(s as never))).toEqual([false, false]);
    expect(['succeeded', 'failed', 'cancelled'].map((s) => isFinished(s as never))).toEqual([true, true, true]);
  });

  it('takes the stages a Run runs from the server, or infers them by the spec’s rules', () => {
    const job = (extra: Partial<Job>) =>
      ({ operations: [], sql: null, recipe_id: null, python_script: null, output_format: null, pipeline: {}, ...extra }) as unknown as Job;
    expect(jobStages(job({ stages: { transform: false, python: true, convert: false } }))).toEqual({ transform: false, python: true, convert: false });
    expect(jobStages(job({ operations: [{ type: 'buffer' }], output_format: 'GPKG' }))).toEqual({ transform: true, python: false, convert: true });
    expect(jobStages(job({ operations: [{ type: 'buffer' }], pipeline: { transform: false } }))).toEqual({ transform: false, python: false, convert: false });
  });
});
