import type { Client } from '@temporalio/client';
import { runWorkflowId } from '../../temporal/ids.js';

/* Where a Run's time went, read from its workflow's Temporal history (bench:runs). */

/** A history timestamp in epoch ms. */
const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;

export interface RunTimes {
  /** In the step activities (…Step), and in every activity (remote ones: local ones are markers). */
  steps: number;
  all: number;
  /** Activities scheduled but not yet started (waiting for a worker slot). */
  waiting: number;
  /** First event to last. */
  wall: number;
  /** Each remote activity's time by name; local activities (markers) counted. */
  byName: Map<string, number>;
  workflowTasks: number;
  localActivities: number;
  /** Epoch ms of the Run's workflow start, first activity scheduled, last activity completed, workflow end. */
  marks: { start: number; firstScheduled: number; lastCompleted: number; end: number };
  /** Each history event after the first, with the ms since the one before it (BENCH_TIMELINE=1 prints them). */
  timeline: { event: string; ms: number }[];
}

/** A history event's kind, from the one attributes field it has set (activityTaskScheduled, …). */
const eventName = (e: object) =>
  Object.entries(e)
    .find(([key, value]) => key.endsWith('EventAttributes') && value)?.[0]
    .replace(/EventAttributes$/, '') ?? 'event';

/** Where a Run's time went, from its workflow history. */
export async function activityTime(temporal: Client, runId: string): Promise<RunTimes> {
  const history = await temporal.workflow.getHandle(runWorkflowId(runId)).fetchHistory();
  const started = new Map<string, number>();
  const scheduled = new Map<string, number>();
  const names = new Map<string, string>();
  const byName = new Map<string, number>();
  let steps = 0;
  let all = 0;
  let waiting = 0;
  let workflowTasks = 0;
  let localActivities = 0;
  let firstScheduled = 0;
  let lastCompleted = 0;
  const events = history.events ?? [];
  for (const e of events) {
    const id = String(e.eventId);
    if (e.workflowTaskCompletedEventAttributes) workflowTasks += 1;
    if (e.markerRecordedEventAttributes?.markerName === 'core_local_activity') localActivities += 1;
    if (e.activityTaskScheduledEventAttributes) {
      names.set(id, e.activityTaskScheduledEventAttributes.activityType?.name ?? '');
      scheduled.set(id, ms(e.eventTime));
      firstScheduled ||= ms(e.eventTime);
    }
    if (e.activityTaskStartedEventAttributes) {
      const of = String(e.activityTaskStartedEventAttributes.scheduledEventId);
      started.set(of, ms(e.eventTime));
      waiting += ms(e.eventTime) - scheduled.get(of)!;
    }
    const done = e.activityTaskCompletedEventAttributes;
    if (done) {
      const name = names.get(String(done.scheduledEventId)) ?? '';
      const took = ms(e.eventTime) - started.get(String(done.scheduledEventId))!;
      lastCompleted = ms(e.eventTime);
      all += took;
      byName.set(name, (byName.get(name) ?? 0) + took);
      if (/Step$/.test(name)) steps += took;
    }
  }
  const start = ms(events[0]?.eventTime);
  const end = ms(events[events.length - 1]?.eventTime);
  const timeline = events.slice(1).map((e, i) => ({
    event: `${eventName(e)}${e.markerRecordedEventAttributes ? ' (local activity)' : ''}${
      e.activityTaskScheduledEventAttributes ? ` ${e.activityTaskScheduledEventAttributes.activityType?.name}` : ''
    }`,
    ms: ms(e.eventTime) - ms(events[i]!.eventTime),
  }));
  return { steps, all, waiting, wall: end - start, byName, workflowTasks, localActivities, marks: { start, firstScheduled, lastCompleted, end }, timeline };
}
