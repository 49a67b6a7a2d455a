import { DomainError } from '../errors.js';

/*
 * Who is told what about a Job's Runs: a Job lists its subscriptions (a channel and the events it
 * wants), and these pure rules say which event a Run's end is and which channels hear of it.
 * What a delivery did is recorded on the Run (NotificationRecord). No I/O, no clock.
 */

/**
 * - failure: a Run failed;
 * - auto_disable: the Job disabled itself after repeated failed scheduled Runs;
 * - recovery: a Run succeeded after the Job's previous finished Run had failed;
 * - success: a Run succeeded (opt-in: every Run);
 * - slow: a Run is still running after the subscription's `slow_after_seconds`.
 */
export const notificationEvents = ['failure', 'auto_disable', 'recovery', 'success', 'slow'] as const;
export type NotificationEvent = (typeof notificationEvents)[number];

export interface Subscription {
  channel_id: string;
  events: NotificationEvent[];
  /** With `slow`: how long a Run may run before the channel is told. */
  slow_after_seconds: number | null;
}

/** One delivery of one notification to one channel, as the Run records it. */
export interface NotificationRecord {
  /** `<event>:<channel id>`: a Run tells a channel about an event once. */
  id: string;
  event: NotificationEvent;
  channel_id: string;
  channel_type: string;
  channel_name: string;
  status: 'delivered' | 'failed';
  /** Attempts made (a failed one after its retries ran out, or at once for a refusal that cannot change). */
  attempts: number;
  /** Why the last attempt failed, secret-free; null when delivered. */
  error: string | null;
  at: string;
}

export const notificationId = (event: NotificationEvent, channelId: string) => `${event}:${channelId}`;

const refuse = (path: string, message: string) =>
  new DomainError('validation_error', `Invalid request body: body.${path}: ${message}`, { issues: [{ path: `body.${path}`, message }] });

/** The rules a Job's subscriptions follow beyond their shape: each channel once, `slow` with its threshold and only with it. */
export function checkSubscriptions(subscriptions: Subscription[]): void {
  const seen = new Set<string>();
  subscriptions.forEach((s, i) => {
    if (seen.has(s.channel_id)) throw refuse(`notifications.${i}.channel_id`, `channel ${s.channel_id} is listed twice: give it one entry with every event`);
    seen.add(s.channel_id);
    if (s.events.length === 0) throw refuse(`notifications.${i}.events`, 'name at least one event');
    if (s.events.includes('slow') && !s.slow_after_seconds) throw refuse(`notifications.${i}.slow_after_seconds`, 'the slow event needs slow_after_seconds');
    if (!s.events.includes('slow') && s.slow_after_seconds)
      throw refuse(`notifications.${i}.slow_after_seconds`, 'slow_after_seconds is used with the slow event');
  });
}

/**
 * The events a finished Run is, most specific first: a failure; a success, which is also a
 * recovery when the Job's previous finished Run had failed. A cancelled Run is none.
 */
export function outcomeEvents(status: 'succeeded' | 'failed' | 'cancelled', previous: 'succeeded' | 'failed' | null): NotificationEvent[] {
  if (status === 'failed') return ['failure'];
  if (status === 'succeeded') return previous === 'failed' ? ['recovery', 'success'] : ['success'];
  return [];
}

/**
 * Which channels hear of something that is any of `candidates` (most specific first), and as
 * which event: each subscribed channel once, as the first candidate it subscribed to (a channel
 * with both recovery and success is told of a recovery once, as a recovery).
 */
export function recipients(
  subscriptions: readonly Subscription[],
  candidates: readonly NotificationEvent[],
): { channelId: string; event: NotificationEvent }[] {
  const out: { channelId: string; event: NotificationEvent }[] = [];
  for (const s of subscriptions) {
    const event = candidates.find((c) => s.events.includes(c));
    if (event) out.push({ channelId: s.channel_id, event });
  }
  return out;
}

/** The slow watches of a Run: each channel subscribed to `slow`, with its threshold, soonest first. */
export function slowWatches(subscriptions: readonly Subscription[]): { channelId: string; afterSeconds: number }[] {
  return subscriptions
    .filter((s) => s.events.includes('slow') && s.slow_after_seconds)
    .map((s) => ({ channelId: s.channel_id, afterSeconds: s.slow_after_seconds! }))
    .sort((a, b) => a.afterSeconds - b.afterSeconds);
}

/** Whether a Run is slow for a threshold at `now`: still running past it, or finished after running longer. */
export function isSlow(run: { startedAt: string | null; finishedAt: string | null; running: boolean }, afterSeconds: number, now: Date): boolean {
  if (!run.startedAt) return false;
  const end = run.running ? now.getTime() : run.finishedAt ? Date.parse(run.finishedAt) : now.getTime();
  return end - Date.parse(run.startedAt) > afterSeconds * 1000;
}
