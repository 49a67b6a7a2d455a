import { DomainError } from '../errors.js';

/*
 * What starts a Job's Runs besides a person and its schedule, as values and pure rules:
 * - on change: the Source is checked every N minutes with its connector's cheap check (ETag,
 *   checksum, project version, cursor), and a change starts a Run;
 * - after: the Job runs when a Run of another Job of the same owner ends as named; cycles are
 *   refused when a Job is saved, and a chain longer than MAX_CHAIN_DEPTH stops (a cycle two
 *   concurrent saves slipped past still cannot run for ever).
 * Webhooks are the Job's own state (a secret), not part of its definition: job.ts.
 */

export const afterWhen = ['succeeded', 'failed', 'any'] as const;
export type AfterWhen = (typeof afterWhen)[number];

export interface AfterTrigger {
  job_id: string;
  /** Which ends of the other Job's Runs start this Job: succeeded, failed, or either (never cancelled). */
  when: AfterWhen;
}

export interface JobTriggers {
  /** Check the Source every N minutes; null: no on-change trigger. */
  on_change: { every_minutes: number } | null;
  after: AfterTrigger[];
}

export const noTriggers: JobTriggers = { on_change: null, after: [] };
export const MAX_AFTER = 10;
export const MAX_CHAIN_DEPTH = 20;
/** Longest on-change interval: a day (a daily check is what a schedule is for). */
export const MAX_CHECK_MINUTES = 1440;

/**
 * Whether a Run of an upstream Job that ended so starts the downstream Job. A Run that found its
 * Source unchanged wrote nothing new, so it starts nothing.
 */
export function afterMatches(when: AfterWhen, status: string, skippedReason: string | null): boolean {
  if (status === 'succeeded') return skippedReason === null && (when === 'succeeded' || when === 'any');
  if (status === 'failed') return when === 'failed' || when === 'any';
  return false;
}

/**
 * The cycle that saving `jobId` with these upstream Jobs would close, as the Jobs along it
 * (`[jobId, …, jobId]`), or null. `upstreamsOf` answers for the other Jobs as they are saved.
 */
export function findCycle(jobId: string, upstreams: readonly string[], upstreamsOf: (id: string) => readonly string[]): string[] | null {
  // A cycle through jobId: some upstream of it depends, through upstream links, on jobId.
  const path = new Map<string, string | null>();
  const queue: string[] = [];
  for (const u of upstreams) {
    if (u === jobId) return [jobId, jobId];
    if (!path.has(u)) {
      path.set(u, null);
      queue.push(u);
    }
  }
  while (queue.length) {
    const current = queue.shift()!;
    for (const next of upstreamsOf(current)) {
      if (next === jobId) {
        // jobId starts current, which starts … the upstream that would start jobId again.
        const chain = [current];
        for (let at = path.get(current) ?? null; at !== null; at = path.get(at) ?? null) chain.push(at);
        return [jobId, ...chain, jobId];
      }
      if (!path.has(next)) {
        path.set(next, current);
        queue.push(next);
      }
    }
  }
  return null;
}

export function cycleError(cycle: string[]): DomainError {
  const message = `the Jobs would start each other in a circle: ${cycle.join(' → ')}`;
  return new DomainError('validation_error', `Invalid request body: body.triggers.after: ${message}`, {
    issues: [{ path: 'body.triggers.after', message }],
    cycle,
  });
}
