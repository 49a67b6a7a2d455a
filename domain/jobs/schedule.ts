import { DomainError } from '../errors.js';
import { CronError, normalizeCron, parseCron, type LocalCalendar } from './cron.js';
import {
  addDays,
  compareDates,
  daysInMonth,
  instantOf,
  localDateAt,
  MINUTE,
  naiveOf,
  normalizeTimezone,
  standardOffset,
  steadyOffset,
  weekdayOf,
  type LocalDate,
} from './zones.js';

export type { LocalCalendar } from './cron.js';
export { normalizeTimezone } from './zones.js';

/*
 * When a Job's schedule fires, as pure functions of the schedule and an instant (no clock).
 *
 * Two families:
 * - wall-clock kinds (daily, weekly, monthly, cron) name times on the clock of an IANA timezone.
 *   Each named time runs once: a time the clocks skip runs shifted forward by the gap, a time
 *   the clocks repeat runs at its first occurrence (zones.ts: RFC 5545's rule). Temporal's own
 *   calendar handles repeated hours unevenly (west of Greenwich it fires such a time twice, east
 *   of it some times shift by an hour or vanish; docs/decisions.md), so the Temporal Schedule is
 *   given these instants compiled to UTC (schedule-spec.ts) and never the timezone itself.
 * - `interval` counts elapsed time, every N minutes, whatever the clocks do; its phase follows
 *   the timezone's standard time, so every 15 minutes runs at :00, :15, :30, :45 and every 60 on
 *   the hour.
 */

export const weekdayNames = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
export type Weekday = (typeof weekdayNames)[number];
export const scheduleKinds = ['daily', 'weekly', 'monthly', 'cron', 'interval'] as const;
export type ScheduleKind = (typeof scheduleKinds)[number];

interface AtTime {
  hour: number;
  minute: number;
}
export type DailySchedule = { kind: 'daily'; timezone: string } & AtTime;
export type WeeklySchedule = { kind: 'weekly'; timezone: string; days: Weekday[] } & AtTime;
export type MonthlySchedule = { kind: 'monthly'; timezone: string; days: (number | 'last')[] } & AtTime;
export interface CronSchedule {
  kind: 'cron';
  timezone: string;
  expression: string;
}
export interface IntervalSchedule {
  kind: 'interval';
  timezone: string;
  every_minutes: number;
}
export type JobSchedule = DailySchedule | WeeklySchedule | MonthlySchedule | CronSchedule | IntervalSchedule;

/** Longest interval: a year. */
export const MAX_INTERVAL_MINUTES = 525_600;
/** How far ahead a schedule must fire at least once (Feb 29 fires every four years). */
const SEARCH_YEARS = 8;

const refuse = (field: string, message: string) =>
  new DomainError('validation_error', `Invalid request body: ${field}: ${message}`, { issues: [{ path: field, message }] });

/** The calendars a wall-clock schedule fires on; none for an interval. */
export function calendarsOf(schedule: JobSchedule): LocalCalendar[] {
  const at = (s: AtTime) => ({ hours: [s.hour], minutes: [s.minute] });
  switch (schedule.kind) {
    case 'daily':
      return [{ months: null, days: null, lastDay: false, weekdays: null, ...at(schedule) }];
    case 'weekly':
      return [{ months: null, days: null, lastDay: false, weekdays: schedule.days.map((d) => weekdayNames.indexOf(d)), ...at(schedule) }];
    case 'monthly': {
      const numbers = schedule.days.filter((d): d is number => d !== 'last');
      return [{ months: null, days: numbers.length ? numbers : [], lastDay: schedule.days.includes('last'), weekdays: null, ...at(schedule) }];
    }
    case 'cron':
      return parseCron(schedule.expression);
    case 'interval':
      return [];
  }
}

/** Whether a local date is one a calendar fires on (month, day of month or last day, weekday). */
export function dateMatches(c: LocalCalendar, date: LocalDate, withWeekday = true): boolean {
  if (c.months && !c.months.includes(date.month)) return false;
  if (c.days !== null || c.lastDay) {
    const isLast = date.day === daysInMonth(date.year, date.month);
    if (!(c.days?.includes(date.day) || (c.lastDay && isLast))) return false;
  }
  return !withWeekday || !c.weekdays || c.weekdays.includes(weekdayOf(date));
}

/**
 * Checks a schedule as sent and returns it as stored: the timezone canonical, days sorted and
 * unique, a cron expression normalized. A schedule that never fires is refused. `field` names
 * it in the 422 (body.schedule).
 */
export function checkSchedule(schedule: JobSchedule, now: Date, field = 'body.schedule'): JobSchedule {
  const timezone = normalizeTimezone(schedule.timezone, `${field}.timezone`);
  let checked: JobSchedule;
  switch (schedule.kind) {
    case 'daily':
      checked = { kind: 'daily', timezone, hour: schedule.hour, minute: schedule.minute };
      break;
    case 'weekly': {
      const days = weekdayNames.filter((d) => schedule.days.includes(d));
      if (days.length === 0) throw refuse(`${field}.days`, 'name at least one day (mon … sun)');
      checked = { kind: 'weekly', timezone, days, hour: schedule.hour, minute: schedule.minute };
      break;
    }
    case 'monthly': {
      const numbers = [...new Set(schedule.days.filter((d): d is number => d !== 'last'))].sort((a, b) => a - b);
      const days: (number | 'last')[] = schedule.days.includes('last') ? [...numbers, 'last'] : numbers;
      if (days.length === 0) throw refuse(`${field}.days`, 'name at least one day of the month (1–31, or "last")');
      checked = { kind: 'monthly', timezone, days, hour: schedule.hour, minute: schedule.minute };
      break;
    }
    case 'cron': {
      const expression = normalizeCron(schedule.expression);
      try {
        parseCron(expression);
      } catch (error) {
        if (error instanceof CronError) throw refuse(`${field}.expression`, error.message);
        throw error;
      }
      checked = { kind: 'cron', timezone, expression };
      break;
    }
    case 'interval':
      checked = { kind: 'interval', timezone, every_minutes: schedule.every_minutes };
      break;
  }
  if (nextFireTimes(checked, now, 1).length === 0) throw refuse(field, `never fires (no matching date in the next ${SEARCH_YEARS} years)`);
  return checked;
}

/** The phase of an interval: fires at instants t with (t + the zone's standard offset) a multiple of the period. */
export function intervalPhase(schedule: IntervalSchedule, at: Date): number {
  const period = schedule.every_minutes * MINUTE;
  const offset = standardOffset(schedule.timezone, at.getUTCFullYear());
  return (((-offset % period) + period) % period) as number;
}

/** The fire instants of one local date, in order (duplicates folded: a gap may shift a time onto another). */
export function firesOnDate(schedule: JobSchedule, calendars: LocalCalendar[], date: LocalDate): number[] {
  const matching = calendars.filter((c) => dateMatches(c, date));
  if (matching.length === 0) return [];
  const offset = steadyOffset(schedule.timezone, date);
  const out = new Set<number>();
  for (const c of matching) {
    for (const hour of c.hours) {
      for (const minute of c.minutes) {
        const wall = { ...date, hour, minute };
        out.add(offset === null ? instantOf(schedule.timezone, wall).instant : naiveOf(wall) - offset);
      }
    }
  }
  return [...out].sort((a, b) => a - b);
}

/** The next `count` fire times strictly after `after` (fewer only when the schedule fires less within 8 years). */
export function nextFireTimes(schedule: JobSchedule, after: Date, count = 5): Date[] {
  if (count <= 0) return [];
  if (schedule.kind === 'interval') {
    const period = schedule.every_minutes * MINUTE;
    const phase = intervalPhase(schedule, after);
    const k = Math.floor((after.getTime() - phase) / period) + 1;
    return Array.from({ length: count }, (_, i) => new Date(phase + (k + i) * period));
  }
  const calendars = calendarsOf(schedule);
  const out: number[] = [];
  // A day early: the local date at `after` may still have times to come, or a fire of the day
  // before may be shifted past it.
  let date = addDays(localDateAt(schedule.timezone, after.getTime()), -1);
  const last = addDays(date, Math.round(SEARCH_YEARS * 366));
  let settled = false;
  while (compareDates(date, last) <= 0) {
    const fires = firesOnDate(schedule, calendars, date).filter((t) => t > after.getTime());
    for (const t of fires) if (!out.includes(t)) out.push(t);
    // One more date after the count is reached: a shifted time may sort before the next day's.
    if (settled) break;
    if (out.length >= count) settled = true;
    date = addDays(date, 1);
  }
  return out
    .sort((a, b) => a - b)
    .slice(0, count)
    .map((t) => new Date(t));
}

/** Whether a fire is too old to run now: the catch-up window after its time has passed (null: not a scheduled fire). */
export function missedBeyondCatchUp(scheduledFor: Date | null, now: Date, windowMs: number): boolean {
  return scheduledFor !== null && now.getTime() - scheduledFor.getTime() > windowMs;
}

export const nextFireTime = (schedule: JobSchedule, after: Date): Date | null => nextFireTimes(schedule, after, 1)[0] ?? null;

const pad = (n: number) => String(n).padStart(2, '0');
const dayNames = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** A schedule in words, for people (the Temporal UI's comment, the API's `description`). */
export function describeSchedule(s: JobSchedule): string {
  const at = 'hour' in s ? `${pad(s.hour)}:${pad(s.minute)}` : '';
  switch (s.kind) {
    case 'daily':
      return `every day at ${at} (${s.timezone})`;
    case 'weekly':
      return `every ${s.days.map((d) => dayNames[weekdayNames.indexOf(d)]).join(', ')} at ${at} (${s.timezone})`;
    case 'monthly':
      return `on day ${s.days.map((d) => (d === 'last' ? 'last' : String(d))).join(', ')} of every month at ${at} (${s.timezone})`;
    case 'cron':
      return `cron "${s.expression}" (${s.timezone})`;
    case 'interval':
      return s.every_minutes === 1 ? 'every minute' : `every ${s.every_minutes} minutes (${s.timezone} standard time)`;
  }
}
