import { ScheduleNotFoundError, ScheduleOverlapPolicy, WorkflowNotFoundError, type ScheduleOptionsAction, type ScheduleSpec } from '@temporalio/client';
import type { Month } from '@temporalio/client';
import { jobDecider, jobStream, type JobState } from '../domain/jobs/job.js';
import { gapDays, type JobSchedule } from '../domain/jobs/schedule.js';
import type { Projector } from '../projections/projector.js';
import { jobWorkflowId, scheduledRunWorkflowId, scheduleIdOf } from '../temporal/ids.js';
import { load } from './commands.js';
import type { Services } from './services.js';

/*
 * Each Job with a `schedule` has one Temporal Schedule, `schedule-job-<jobId>`, kept equal to
 * the Job by a reactor: it follows the event store like a projection (its own checkpoint, in
 * rm.checkpoints) and, for each Job event, makes the Schedule match the Job's current state,
 * creating, updating, pausing (disabled, by hand or after repeated failures) or deleting it.
 * A write never talks to Temporal itself, so a Temporal outage delays schedule changes instead
 * of losing them, and a restart of the API, the worker or the Temporal server loses nothing.
 * Deleting a Job also cancels its coordinator, which cancels a Run in progress cleanly.
 */

/** Years ahead for which the schedule names the DST gap days explicitly; renewed on every Job change. */
const GAP_YEARS = 20;
/** A fire missed while Temporal was down is still taken if it comes back within this window. */
const CATCHUP_WINDOW = '1 hour' as const;

const months: Month[] = ['JANUARY', 'FEBRUARY', 'MARCH', 'APRIL', 'MAY', 'JUNE', 'JULY', 'AUGUST', 'SEPTEMBER', 'OCTOBER', 'NOVEMBER', 'DECEMBER'];

/**
 * The Temporal spec of a daily schedule: the wall-clock time in the Job's timezone, plus one
 * dated entry per day on which that time does not exist (Temporal would skip those; we run them
 * once, shifted by the gap). See domain/jobs/schedule.ts for the rule.
 */
export function temporalSpecOf(schedule: JobSchedule, now: Date): ScheduleSpec {
  const gaps = gapDays(schedule, now, GAP_YEARS).map((w) => ({
    year: w.year,
    month: months[w.month - 1]!,
    dayOfMonth: w.day,
    hour: w.hour,
    minute: w.minute,
    comment: 'daylight-saving gap: the time runs shifted',
  }));
  return {
    calendars: [{ hour: schedule.hour, minute: schedule.minute, comment: `daily ${pad(schedule.hour)}:${pad(schedule.minute)}` }, ...gaps],
    timezone: schedule.timezone,
  };
}
const pad = (n: number) => String(n).padStart(2, '0');

function actionOf(services: Pick<Services, 'config'>, jobId: string, ownerId: string): ScheduleOptionsAction {
  return {
    type: 'startWorkflow',
    workflowType: 'scheduledRunWorkflow',
    workflowId: scheduledRunWorkflowId(jobId),
    taskQueue: services.config.taskQueue,
    args: [{ jobId, ownerId }],
  };
}

const noteOf = (state: Extract<JobState, { status: 'active' | 'deleted' }>) =>
  state.enabled ? 'enabled' : state.disabledReason?.kind === 'consecutive_failures' ? state.disabledReason.message : 'disabled by its owner';

/** Makes the Job's Temporal Schedule match its current state (idempotent). */
export async function syncJobSchedule(
  services: Pick<Services, 'store' | 'temporal' | 'config' | 'clock'>,
  jobId: string,
): Promise<'created' | 'updated' | 'deleted' | 'absent'> {
  const client = services.temporal;
  if (!client) throw new Error('schedules need a Temporal client');
  const { state } = await load(services, jobStream(jobId), jobDecider);
  const handle = client.schedule.getHandle(scheduleIdOf(jobId));
  if (state.status !== 'active' || !state.definition.schedule) {
    try {
      await handle.delete();
      return 'deleted';
    } catch (error) {
      if (error instanceof ScheduleNotFoundError) return 'absent';
      throw error;
    }
  }
  const options = {
    spec: temporalSpecOf(state.definition.schedule, services.clock()),
    action: actionOf(services, jobId, state.ownerId),
    policies: { overlap: ScheduleOverlapPolicy.ALLOW_ALL, catchupWindow: CATCHUP_WINDOW },
    state: { paused: !state.enabled, note: noteOf(state) },
  };
  try {
    await handle.update(() => options);
    return 'updated';
  } catch (error) {
    if (!(error instanceof ScheduleNotFoundError)) throw error;
  }
  await client.schedule.create({ scheduleId: scheduleIdOf(jobId), ...options });
  return 'created';
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
    version: 1,
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
