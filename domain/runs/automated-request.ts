import type { RunTrigger } from './triggers.js';

/** Why an automated Run request (a schedule's fire, an on-change check, an after-trigger) started nothing. */
export type SkipReason = 'job_disabled' | 'beyond_catch_up' | 'already_waiting' | 'queue_full';

export interface RequestContext {
  trigger: RunTrigger;
  /** The triggers of the Job's Runs waiting to start, and how many run (the read model). */
  queued: RunTrigger[];
  running: number;
  /** A scheduled fire handled after the schedule's next fire time had passed (the worker or Temporal was behind, or down). */
  superseded: boolean;
  maxQueued: number;
}

/**
 * Whether an automated request that passed the Job and catch-up checks becomes a Run. A Run of
 * the same trigger that merely waits for a worker (nothing runs) does not absorb it: a one-minute
 * schedule starts a Run every minute, even when the worker is seconds behind. It folds into that
 * waiting Run when the Job is busy (a Run in progress: a schedule faster than its Runs keeps one
 * waiting, not ten) or when it is a catch-up (a later fire has come due since: one Run for the
 * fires missed). A full queue refuses it.
 */
export function automatedRequestSkip(c: RequestContext): SkipReason | null {
  const sameWaits = c.queued.includes(c.trigger);
  if (sameWaits && (c.running > 0 || c.superseded)) return 'already_waiting';
  if (c.queued.length >= c.maxQueued) return 'queue_full';
  return null;
}
