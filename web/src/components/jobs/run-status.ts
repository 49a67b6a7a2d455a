/** How Runs, their steps and Job schedules read in the app: badges, durations, sentences. */
import { h } from '../../dom.js';
import type { Job, Run, RunStatus, RunStep } from '../../types.js';

const RUN_LABELS: Record<string, string> = {
  queued: 'Queued',
  running: 'Running',
  succeeded: 'Succeeded',
  failed: 'Failed',
  cancelled: 'Cancelled',
  pending: 'Pending',
  skipped: 'Skipped',
};

export const STEP_LABELS: Record<string, string> = {
  extract: 'Read from the Source',
  transform: 'Transform',
  python: 'Python step',
  convert: 'Convert',
  deliver: 'Deliver to the Destination',
};

export const TRIGGER_LABELS: Record<string, string> = {
  manual: 'Run Now',
  schedule: 'Schedule',
  retry: 'Retry',
  on_change: 'Source changed',
  webhook: 'Webhook',
  after: 'After another Job',
};

const SKIPPED: Record<string, string> = {
  source_unchanged: 'The Source had not changed since the last Run: the later steps were skipped and nothing was delivered.',
};

/** Why a Run skipped its later steps, in words. */
export const skippedText = (reason: string) => SKIPPED[reason] ?? reason.replace(/_/g, ' ');

export const isFinished = (status: RunStatus) => status === 'succeeded' || status === 'failed' || status === 'cancelled';

/** A status badge for a Run or a step; the text says it, the colour only repeats it. */
export function statusBadge(status: RunStatus | RunStep['status']): HTMLElement {
  return h('span', { class: `badge run-${status}`, 'data-status': status }, RUN_LABELS[status] ?? status);
}

/** 870 ms → "0.9 s", 75 s → "1 min 15 s". */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const minutes = Math.floor(ms / 60_000);
  const seconds = Math.round((ms % 60_000) / 1000);
  if (minutes < 60) return `${minutes} min${seconds ? ` ${seconds} s` : ''}`;
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** A Run's duration: finished − started, or so far while it runs. */
export function runDuration(run: Pick<Run, 'started_at' | 'finished_at'>, now = Date.now()): number | null {
  if (!run.started_at) return null;
  const end = run.finished_at ? Date.parse(run.finished_at) : now;
  return Math.max(0, end - Date.parse(run.started_at));
}

/** "Every day at 02:30 (Europe/Berlin)": the server's words for the Job's schedule, as it was set. */
export function scheduleText(job: Pick<Job, 'schedule' | 'schedule_description'>): string {
  if (!job.schedule) return 'No schedule';
  const text = job.schedule_description ?? job.schedule.kind;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** Why a disabled Job is disabled, in the server's words (a sentence; null when it disabled itself for no reason it told). */
export function disabledReason(job: Pick<Job, 'enabled' | 'disabled_reason'>): string | null {
  return job.enabled ? null : job.disabled_reason || null;
}

/** The stages a Run runs: `stages` from the server, else inferred by the spec's rules (an explicit flag wins, else the fields). */
export function jobStages(job: Job): { transform: boolean; python: boolean; convert: boolean } {
  if (job.stages) return job.stages;
  const p = job.pipeline ?? {};
  return {
    transform: p.transform ?? !!(job.operations?.length || job.sql || job.recipe_id),
    python: p.python ?? !!job.python_script,
    convert: p.convert ?? !!job.output_format,
  };
}
