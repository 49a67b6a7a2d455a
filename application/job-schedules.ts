import {
  ScheduleNotFoundError,
  ScheduleOverlapPolicy,
  WorkflowNotFoundError,
  type CalendarSpec,
  type DayOfWeek,
  type Month,
  type ScheduleOptionsAction,
  type ScheduleSpec,
} from '@temporalio/client';
import { createHash } from 'node:crypto';
import { jobDecider, jobStream, type JobState } from '../domain/jobs/job.js';
import type { JobSchedule } from '../domain/jobs/schedule.js';
import { compileSchedule, type UtcCalendar } from '../domain/jobs/schedule-spec.js';
import type { Projector } from '../projections/projector.js';
import { jobWorkflowId, scheduledRunWorkflowId, scheduleIdOf, watchScheduleIdOf, watchWorkflowId } from '../temporal/ids.js';
import { load } from './commands.js';
import type { Services } from './services.js';

/*
 * Each Job has up to two Temporal Schedules, kept equal to the Job by a reactor: it follows the
 * event store like a projection (its own checkpoint, in rm.checkpoints) and, for each Job event,
 * makes them match the Job's current state, creating, updating, pausing (disabled, by hand or
 * after repeated failures) or deleting them:
 * - `schedule-job-<jobId>`, the Job's `schedule`: UTC calendars compiled from it
 *   (domain/jobs/schedule-spec.ts; Temporal's own timezone calendars fire some times of the
 *   repeated autumn hour twice or an hour late), or an interval;
 * - `schedule-job-<jobId>-watch`, its on-change trigger: every N minutes, a check of its Source.
 * A write never talks to Temporal itself, so a Temporal outage delays schedule changes instead
 * of losing them, and a restart of the API, the worker or the Temporal server loses nothing.
 * Deleting a Job also cancels its coordinator, which cancels a Run in progress cleanly.
 *
 * Overlap: the Job's Schedule buffers one fire while the previous fire's Run request is still in
 * flight (BUFFER_ONE) and drops further ones: a request that is merely late (a busy worker) loses
 * no fire, while a worker that was down finds at most two requests waiting, not one per missed
 * fire. Whether a request becomes a Run is the application's rule (application/runs.ts
 * requestAutomatedRun: a Run waiting behind a running one, or a catch-up fire, folds; a Run that
 * merely waits for a worker does not absorb the next minute's fire). The on-change Schedule skips
 * a check while the previous one runs (SKIP): a check is not worth making late. Temporal takes a
 * fire missed while it was itself down within the catch-up window (SVC_SCHEDULE_CATCHUP_MIN), and
 * the Run request refuses one older than that window, so a worker back after a long outage does
 * not run yesterday's fire.
 */

const months: Month[] = ['JANUARY', 'FEBRUARY', 'MARCH', 'APRIL', 'MAY', 'JUNE', 'JULY', 'AUGUST', 'SEPTEMBER', 'OCTOBER', 'NOVEMBER', 'DECEMBER'];
const weekdays: DayOfWeek[] = ['SUNDAY', 'MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY'];

/** Sorted values as Temporal ranges (runs of consecutive values). */
function ranges(values: number[]): { start: number; end: number }[] {
  const out: { start: number; end: number }[] = [];
  for (const v of values) {
    const last = out.at(-1);
    if (last && last.end === v - 1) last.end = v;
    else out.push({ start: v, end: v });
  }
  return out;
}
const named = <T>(values: number[], name: (n: number) => T) => ranges(values).map((r) => ({ start: name(r.start), end: name(r.end) }));

function calendarSpec(c: UtcCalendar): CalendarSpec {
  return {
    ...(c.years ? { year: ranges(c.years) } : {}),
    ...(c.months ? { month: named(c.months, (n) => months[n - 1]!) } : {}),
    ...(c.days ? { dayOfMonth: ranges(c.days) } : {}),
    ...(c.weekdays ? { dayOfWeek: named(c.weekdays, (n) => weekdays[n]!) } : {}),
    hour: ranges(c.hours),
    minute: ranges(c.minutes),
    comment: c.comment,
  };
}

/** The Temporal spec of a Job's schedule: UTC calendars, or an interval with its phase. */
export function temporalSpecOf(schedule: JobSchedule, now: Date): ScheduleSpec {
  const compiled = compileSchedule(schedule, now);
  if (compiled.interval) return { intervals: [{ every: compiled.interval.everyMs, offset: compiled.interval.phaseMs }] };
  return { calendars: compiled.calendars.map(calendarSpec), timezone: 'UTC' };
}

/** The on-change check's spec: every N minutes, at an offset of its own (1000 Jobs checked each minute are not checked at once). */
export function watchSpecOf(jobId: string, everyMinutes: number): ScheduleSpec {
  const every = everyMinutes * 60_000;
  const spread = createHash('sha256').update(jobId).digest().readUInt32BE(0) % (every / 1000);
  return { intervals: [{ every, offset: spread * 1000 }] };
}

type Active = Extract<JobState, { status: 'active' | 'deleted' }>;

const noteOf = (state: Active) =>
  state.enabled ? 'enabled' : state.disabledReason?.kind === 'consecutive_failures' ? state.disabledReason.message : 'disabled by its owner';

function action(services: Pick<Services, 'config'>, workflowType: string, workflowId: string, args: unknown[]): ScheduleOptionsAction {
  return { type: 'startWorkflow', workflowType, workflowId, taskQueue: services.config.taskQueue, args };
}

type Outcome = 'created' | 'updated' | 'deleted' | 'absent';

/** Makes one Schedule exist with these options, or not exist (options null). Idempotent. */
async function putSchedule(
  services: Pick<Services, 'temporal'>,
  scheduleId: string,
  options: Parameters<NonNullable<Services['temporal']>['schedule']['create']>[0] | null,
): Promise<Outcome> {
  const client = services.temporal;
  if (!client) throw new Error('schedules need a Temporal client');
  const handle = client.schedule.getHandle(scheduleId);
  if (!options) {
    try {
      await handle.delete();
      return 'deleted';
    } catch (error) {
      if (error instanceof ScheduleNotFoundError) return 'absent';
      throw error;
    }
  }
  const { scheduleId: _, ...rest } = options;
  try {
    await handle.update(() => rest as never);
    return 'updated';
  } catch (error) {
    if (!(error instanceof ScheduleNotFoundError)) throw error;
  }
  await client.schedule.create(options);
  return 'created';
}

/** Makes the Job's Temporal Schedules match its current state (idempotent): its schedule, and its on-change check. */
export async function syncJobSchedule(
  services: Pick<Services, 'store' | 'temporal' | 'config' | 'clock'>,
  jobId: string,
): Promise<{ schedule: Outcome; watch: Outcome }> {
  const { state } = await load(services, jobStream(jobId), jobDecider);
  const active = state.status === 'active' ? state : null;
  const paused = active ? { paused: !active.enabled, note: noteOf(active) } : undefined;
  const catchupWindow = services.config.scheduleCatchupMs;
  const schedule = active?.definition.schedule;
  const onChange = active?.definition.triggers.on_change;
  return {
    schedule: await putSchedule(
      services,
      scheduleIdOf(jobId),
      schedule
        ? {
            scheduleId: scheduleIdOf(jobId),
            spec: temporalSpecOf(schedule, services.clock()),
            action: action(services, 'scheduledRunWorkflow', scheduledRunWorkflowId(jobId), [{ jobId, ownerId: active!.ownerId }]),
            policies: { overlap: ScheduleOverlapPolicy.BUFFER_ONE, catchupWindow },
            state: paused!,
          }
        : null,
    ),
    watch: await putSchedule(
      services,
      watchScheduleIdOf(jobId),
      onChange
        ? {
            scheduleId: watchScheduleIdOf(jobId),
            spec: watchSpecOf(jobId, onChange.every_minutes),
            action: action(services, 'watchSourceWorkflow', watchWorkflowId(jobId), [{ jobId, ownerId: active!.ownerId }]),
            // A check missed while Temporal was down is not worth making late: the next one comes.
            policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: '10 seconds' },
            state: paused!,
          }
        : null,
    ),
  };
}

/** Cancels the Job's coordinator (and with it a Run in progress); nothing to do when none runs. */
export async function cancelJobRuns(services: Pick<Services, 'temporal'>, jobId: string): Promise<void> {
  try {
    await services.temporal!.workflow.getHandle(jobWorkflowId(jobId)).cancel();
  } catch (error) {
    if (!(error instanceof WorkflowNotFoundError)) throw error;
  }
}

const scheduleEvents = new Set(['JobCreated', 'JobUpdated', 'JobEnabled', 'JobDisabled', 'JobDeleted']);

/**
 * The reactor: a Projector without tables, run by its own ProjectionRunner (so read-your-writes
 * never waits on Temporal, and projection rebuilds leave it out). A failure (Temporal down) rolls
 * its batch back and it tries again from its checkpoint.
 */
export function jobScheduleReactor(services: Pick<Services, 'store' | 'temporal' | 'config' | 'clock'>): Projector {
  return {
    name: 'job-schedules',
    // 2: the Job's Schedule buffers one fire instead of skipping it; a new version replays every
    // Job event once, so Schedules made before are updated to the new policy.
    version: 2,
    tables: [],
    async createTables() {
      /* state lives in Temporal */
    },
    async apply(_tx, _schema, event) {
      if (!scheduleEvents.has(event.type)) return;
      const jobId = String(event.data.job_id);
      await syncJobSchedule(services, jobId);
      if (event.type === 'JobDeleted') await cancelJobRuns(services, jobId);
    },
  };
}
