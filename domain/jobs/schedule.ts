import { DomainError } from '../errors.js';

/*
 * When a Job's schedule fires, as pure functions of the schedule and an instant (no clock).
 *
 * A `daily` schedule is a wall-clock time in an IANA timezone. Two days a year that time may
 * not exist (spring forward) or exist twice (fall back). Our rule, the same for the Temporal
 * Schedule that fires the Runs and for the `next_run_at` the API shows:
 * - a time that does not exist runs once, shifted forward by the gap (02:30 Europe/Berlin on
 *   the spring-forward day runs at 03:30 CEST);
 * - a time that exists twice runs once, at the occurrence Temporal's calendar picks (Go's
 *   time.Date: the offset in force at the naive instant; east of Greenwich that is the second
 *   occurrence, 02:30 CET in Berlin; west of it the first, 01:30 EDT in New York).
 * Temporal's calendar skips non-existent times, so the schedule carries one explicit entry per
 * gap day (`gapDays`); the integration suite checks Temporal's fire times against this module.
 */

export interface DailySchedule {
  kind: 'daily';
  /** Canonical IANA name (Europe/Berlin), as normalizeTimezone returns it. */
  timezone: string;
  hour: number;
  minute: number;
}
export type JobSchedule = DailySchedule;

/** A local date and time, as Temporal's calendar entries take it (month 1..12). */
export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(timezone: string): Intl.DateTimeFormat {
  let f = formatters.get(timezone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timezone, f);
  }
  return f;
}

/** The IANA name as stored (canonical: US/Eastern → America/New_York), or a 422 naming the field. */
export function normalizeTimezone(timezone: string): string {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    throw new DomainError('validation_error', `Invalid request body: body.schedule.timezone: "${timezone}" is not an IANA timezone (e.g. Europe/Berlin, UTC)`, {
      issues: [{ path: 'body.schedule.timezone', message: 'unknown IANA timezone' }],
    });
  }
}

/** The wall time at an instant in a timezone. */
export function wallTimeAt(timezone: string, instant: number): WallTime & { second: number } {
  const parts: Record<string, number> = {};
  for (const p of formatter(timezone).formatToParts(new Date(instant))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { year: parts.year!, month: parts.month!, day: parts.day!, hour: parts.hour!, minute: parts.minute!, second: parts.second! };
}

/** UTC offset (ms, east positive) in force at an instant. */
export function offsetAt(timezone: string, instant: number): number {
  const w = wallTimeAt(timezone, instant);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - Math.floor(instant / 1000) * 1000;
}

const sameWall = (a: WallTime, b: WallTime) => a.year === b.year && a.month === b.month && a.day === b.day && a.hour === b.hour && a.minute === b.minute;

/**
 * The instant a wall time fires at, by the rule above. `gap` says the time does not exist that
 * day; `fires` is then the shifted wall time (what the explicit schedule entry names).
 */
export function fireInstant(timezone: string, wall: WallTime): { instant: number; gap: boolean; fires: WallTime } {
  const naive = Date.UTC(wall.year, wall.month - 1, wall.day, wall.hour, wall.minute);
  // Go's time.Date, which Temporal's calendar uses: the offset at the naive instant, corrected
  // once if the result falls outside that offset's period.
  const first = offsetAt(timezone, naive);
  let instant = naive - first;
  const second = offsetAt(timezone, instant);
  if (second !== first) instant = naive - second;
  if (sameWall(wallTimeAt(timezone, instant), wall)) return { instant, gap: false, fires: wall };
  // Not a time of that day: shift it forward by the gap, i.e. read it with the offset before.
  const before = offsetAt(timezone, naive - 2 * DAY);
  instant = naive - before;
  const { second: _, ...fires } = wallTimeAt(timezone, instant);
  return { instant, gap: true, fires };
}

/** Calendar arithmetic on a local date (no timezone involved). */
function addDays(date: { year: number; month: number; day: number }, days: number) {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day) + days * DAY);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** The next `count` fire times strictly after `after`. */
export function nextFireTimes(schedule: JobSchedule, after: Date, count = 1): Date[] {
  const out: Date[] = [];
  // Start a day early: the local date at `after` may already be past today's time, or not yet.
  let date = addDays(wallTimeAt(schedule.timezone, after.getTime()), -1);
  for (let i = 0; out.length < count && i < count + 400; i++) {
    const { instant } = fireInstant(schedule.timezone, { ...date, hour: schedule.hour, minute: schedule.minute });
    if (instant > after.getTime()) out.push(new Date(instant));
    date = addDays(date, 1);
  }
  return out;
}

export const nextFireTime = (schedule: JobSchedule, after: Date): Date => nextFireTimes(schedule, after, 1)[0]!;

/** Instants in [from, to) where the timezone's offset changes (bisection on weekly samples). */
export function offsetTransitions(timezone: string, from: number, to: number): number[] {
  const out: number[] = [];
  const STEP = 7 * DAY;
  let a = from;
  let offA = offsetAt(timezone, a);
  while (a < to) {
    const b = Math.min(a + STEP, to);
    const offB = offsetAt(timezone, b);
    if (offB !== offA) {
      let lo = a;
      let hi = b;
      while (hi - lo > 60_000) {
        const mid = Math.floor((lo + hi) / 2 / 60_000) * 60_000;
        if (offsetAt(timezone, mid) === offA) lo = mid;
        else hi = mid;
      }
      out.push(hi);
    }
    a = b;
    offA = offB;
  }
  return out;
}

/**
 * The days within `years` after `from` on which the schedule's time does not exist, with the
 * shifted wall time it runs at instead: Temporal's calendar would skip them, so the schedule
 * names each one explicitly.
 */
export function gapDays(schedule: JobSchedule, from: Date, years: number): WallTime[] {
  const start = from.getTime();
  const end = start + Math.round(years * 365.25 * DAY);
  const out: WallTime[] = [];
  for (const t of offsetTransitions(schedule.timezone, start, end)) {
    // Only a forward jump makes a gap; the wall time it hides lies on the local dates around it.
    if (offsetAt(schedule.timezone, t) <= offsetAt(schedule.timezone, t - 60_000)) continue;
    const local = wallTimeAt(schedule.timezone, t - 60_000);
    for (const date of [local, addDays(local, 1)]) {
      const fired = fireInstant(schedule.timezone, { ...date, hour: schedule.hour, minute: schedule.minute });
      if (fired.gap && fired.instant >= start && !out.some((w) => sameWall(w, fired.fires))) out.push(fired.fires);
    }
  }
  return out;
}
