import { beforeEach, describe, expect, it } from 'vitest';
import type { ExistingRun } from '../domain/runs/state.js';
import { registry } from '../platform/metrics.js';
import { observeRunEvents } from './run-metrics.js';

/** A metric's samples as prom-client holds them (name suffixes _count, _sum, _bucket for histograms). */
async function values(name: string) {
  const metric = registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  return (await metric.get()).values;
}
const sample = async (name: string, metricName: string, labels: Record<string, string | number>) =>
  (await values(name)).find(
    (v) => ((v as { metricName?: string }).metricName ?? name) === metricName && Object.entries(labels).every(([k, x]) => v.labels[k] === x),
  )?.value;

const run = (extra: Partial<ExistingRun> = {}): ExistingRun =>
  ({
    status: 'queued',
    jobId: 'job_1',
    ownerId: 'usr_1',
    trigger: 'schedule',
    attempt: 1,
    steps: [],
    sync: null,
    retriedBy: null,
    queuedAt: '2026-01-01T10:00:00.000Z',
    scheduledFor: '2026-01-01T09:59:58.000Z',
    ...extra,
  }) as unknown as ExistingRun;

describe('observeRunEvents', () => {
  beforeEach(() => registry.resetMetrics());

  it('counts a start once, with the wait since queueing and, for a scheduled Run, its lateness against the fire time', async () => {
    observeRunEvents(run(), [{ type: 'RunStarted', data: { run_id: 'run_1', at: '2026-01-01T10:00:03.000Z' } }]);
    expect(await sample('geoflow_runs_started_total', 'geoflow_runs_started_total', { job_id: 'job_1', trigger: 'schedule' })).toBe(1);
    expect(await sample('geoflow_run_queue_wait_seconds', 'geoflow_run_queue_wait_seconds_sum', { trigger: 'schedule' })).toBe(3);
    expect(await sample('geoflow_schedule_lateness_seconds', 'geoflow_schedule_lateness_seconds_sum', {})).toBe(5);
    // Five seconds late falls in the 5 s bucket, not the 2 s one.
    expect(await sample('geoflow_schedule_lateness_seconds', 'geoflow_schedule_lateness_seconds_bucket', { le: 2 })).toBe(0);
    expect(await sample('geoflow_schedule_lateness_seconds', 'geoflow_schedule_lateness_seconds_bucket', { le: 5 })).toBe(1);
  });

  it('measures no lateness for a Run Now', async () => {
    observeRunEvents(run({ trigger: 'manual', scheduledFor: null }), [{ type: 'RunStarted', data: { run_id: 'run_1', at: '2026-01-01T10:00:01.000Z' } }]);
    expect(await sample('geoflow_runs_started_total', 'geoflow_runs_started_total', { trigger: 'manual' })).toBe(1);
    expect((await sample('geoflow_schedule_lateness_seconds', 'geoflow_schedule_lateness_seconds_count', {})) ?? 0).toBe(0);
  });

  it('counts each end by status, with the time since queueing', async () => {
    const running = run({ status: 'running', trigger: 'retry' });
    observeRunEvents(running, [{ type: 'RunSucceeded', data: { run_id: 'r', skipped_reason: null, at: '2026-01-01T10:01:00.000Z' } }]);
    observeRunEvents(running, [{ type: 'RunFailed', data: { run_id: 'r', error: {}, at: '2026-01-01T10:00:30.000Z' } }]);
    observeRunEvents(running, [{ type: 'RunCancelled', data: { run_id: 'r', reason: 'x', at: '2026-01-01T10:00:10.000Z' } }]);
    for (const status of ['succeeded', 'failed', 'cancelled'])
      expect(await sample('geoflow_runs_finished_total', 'geoflow_runs_finished_total', { job_id: 'job_1', trigger: 'retry', status })).toBe(1);
    expect(await sample('geoflow_run_duration_seconds', 'geoflow_run_duration_seconds_sum', { trigger: 'retry', status: 'succeeded' })).toBe(60);
  });

  it('counts nothing for other events, an absent Run, or a Run recorded before its queue time was kept', async () => {
    observeRunEvents(run(), [{ type: 'RunStepStarted', data: { run_id: 'r', step: 'extract', at: '2026-01-01T10:00:00.000Z' } }]);
    observeRunEvents({ status: 'absent' }, [{ type: 'RunStarted', data: { at: '2026-01-01T10:00:00.000Z' } }]);
    expect(await sample('geoflow_runs_started_total', 'geoflow_runs_started_total', {})).toBeUndefined();
    observeRunEvents(run({ queuedAt: undefined, scheduledFor: undefined }), [{ type: 'RunStarted', data: { at: '2026-01-01T10:00:00.000Z' } }]);
    expect(await sample('geoflow_runs_started_total', 'geoflow_runs_started_total', {})).toBe(1);
    expect(await sample('geoflow_run_queue_wait_seconds', 'geoflow_run_queue_wait_seconds_count', { trigger: 'schedule' })).toBeUndefined();
  });
});
