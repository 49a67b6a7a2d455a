import type { RunEvent } from '../domain/runs/run.js';
import type { RunState } from '../domain/runs/state.js';
import { metrics } from '../platform/metrics.js';

/*
 * A Run's counters and histograms, from the events its commands append (application/commands.ts
 * calls this after each append, in whichever process appended: the API for Run Now's queueing and
 * a cancel, the worker for the rest). An append happens once per change, however often an
 * activity is retried (deciders answer a repeat with no events), so each Run is counted once
 * across all processes: Prometheus sums the targets.
 */

const secondsBetween = (from: string | null | undefined, to: string) => {
  if (!from) return null;
  const ms = Date.parse(to) - Date.parse(from);
  return Number.isFinite(ms) ? Math.max(0, ms) / 1000 : null;
};

/** Counts what the events appended to a Run's stream say; `before` is the Run as the command found it. */
export function observeRunEvents(before: RunState, events: readonly { type: string; data: object }[]): void {
  if (before.status === 'absent') return;
  const labels = { job_id: before.jobId, trigger: before.trigger };
  for (const event of events as RunEvent[]) {
    switch (event.type) {
      case 'RunStarted': {
        metrics.runsStarted.inc(labels);
        const waited = secondsBetween(before.queuedAt, event.data.at);
        if (waited !== null) metrics.runQueueWait.observe({ trigger: before.trigger }, waited);
        const late = before.trigger === 'schedule' ? secondsBetween(before.scheduledFor, event.data.at) : null;
        if (late !== null) metrics.scheduleLateness.observe(late);
        break;
      }
      case 'RunSucceeded':
      case 'RunFailed':
      case 'RunCancelled': {
        const status = event.type === 'RunSucceeded' ? 'succeeded' : event.type === 'RunFailed' ? 'failed' : 'cancelled';
        metrics.runsFinished.inc({ ...labels, status });
        const took = secondsBetween(before.queuedAt, event.data.at);
        if (took !== null) metrics.runDuration.observe({ trigger: before.trigger, status }, took);
        break;
      }
    }
  }
}
