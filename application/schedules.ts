import { checkSchedule, describeSchedule, nextFireTimes, type JobSchedule } from '../domain/jobs/schedule.js';
import type { Services } from './services.js';

/**
 * A schedule before it is saved: checked exactly as a Job save checks it (the same 422s), in the
 * form a Job would store it, with its next fire times (the same computation as a Job's
 * next_run_times, and as the Temporal Schedule's).
 */
export function previewSchedule(
  services: Pick<Services, 'clock'>,
  request: { schedule: JobSchedule; count: number; after?: string | undefined },
): { schedule: JobSchedule; description: string; next_run_times: string[] } {
  const after = request.after ? new Date(request.after) : services.clock();
  const schedule = checkSchedule(request.schedule, services.clock());
  return {
    schedule,
    description: describeSchedule(schedule),
    next_run_times: nextFireTimes(schedule, after, request.count).map((t) => t.toISOString()),
  };
}
