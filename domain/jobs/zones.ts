import { DomainError } from '../errors.js';

/*
 * Wall clocks in IANA timezones, as pure functions of an instant (no clock of their own): what
 * the schedules (schedule.ts) and their Temporal spec (schedule-spec.ts) are computed with.
 *
 * The rule for a wall time that a timezone skips or repeats (RFC 5545 §3.3.5, and TC39
 * Temporal's "compatible" disambiguation):
 * - a time that does not exist (the clocks jump forward over it) is read with the offset in
 *   force before the jump, i.e. it runs shifted forward by the gap (02:30 Europe/Berlin on the
 *   spring-forward day runs at 03:30 CEST);
 * - a time that exists twice (the clocks go back) is its first occurrence (02:30 Europe/Berlin on
 *   the autumn day is 02:30 CEST, 01:30 America/New_York is 01:30 EDT).
 */

/** A local calendar date (month 1..12). */
export interface LocalDate {
  year: number;
  month: number;
  day: number;
}
/** A local date and time, to the minute. */
export interface WallTime extends LocalDate {
  hour: number;
  minute: number;
}
/** An instant at which a timezone's UTC offset changes (offsets in ms, east positive). */
export interface Transition {
  at: number;
  before: number;
  after: number;
}

export const MINUTE = 60_000;
export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

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
export function normalizeTimezone(timezone: string, field = 'body.schedule.timezone'): string {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    throw new DomainError('validation_error', `Invalid request body: ${field}: "${timezone}" is not an IANA timezone (e.g. Europe/Berlin, UTC)`, {
      issues: [{ path: field, message: 'unknown IANA timezone' }],
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

/** A wall time read as if it were UTC: the arithmetic of local dates and times, no timezone involved. */
export const naiveOf = (w: LocalDate & Partial<WallTime>) => Date.UTC(w.year, w.month - 1, w.day, w.hour ?? 0, w.minute ?? 0);
export function dateOfNaive(naive: number): LocalDate {
  const d = new Date(naive);
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}
export const addDays = (date: LocalDate, days: number): LocalDate => dateOfNaive(naiveOf(date) + days * DAY);
/** 0 = Sunday … 6 = Saturday. */
export const weekdayOf = (date: LocalDate) => new Date(naiveOf(date)).getUTCDay();
export const daysInMonth = (year: number, month: number) => new Date(Date.UTC(year, month, 0)).getUTCDate();
export const compareDates = (a: LocalDate, b: LocalDate) => naiveOf(a) - naiveOf(b);
export const sameWall = (a: WallTime, b: WallTime) => a.year === b.year && a.month === b.month && a.day === b.day && a.hour === b.hour && a.minute === b.minute;

const transitionCache = new Map<string, Transition[]>();

/** The offset changes of one UTC year (weekly samples, then bisection to the minute); cached. */
function yearTransitions(timezone: string, year: number): Transition[] {
  const key = `${timezone}|${year}`;
  const cached = transitionCache.get(key);
  if (cached) return cached;
  const out: Transition[] = [];
  const from = Date.UTC(year, 0, 1);
  const to = Date.UTC(year + 1, 0, 1);
  const STEP = 7 * DAY;
  let a = from;
  let offA = offsetAt(timezone, a);
  while (a < to) {
    const b = Math.min(a + STEP, to);
    const offB = offsetAt(timezone, b);
    if (offB !== offA) {
      let lo = a;
      let hi = b;
      while (hi - lo > MINUTE) {
        const mid = Math.floor((lo + hi) / 2 / MINUTE) * MINUTE;
        if (offsetAt(timezone, mid) === offA) lo = mid;
        else hi = mid;
      }
      out.push({ at: hi, before: offA, after: offsetAt(timezone, hi) });
    }
    a = b;
    offA = offB;
  }
  transitionCache.set(key, out);
  return out;
}

/** Offset changes with `from <= at < to`, in order. */
export function transitionsBetween(timezone: string, from: number, to: number): Transition[] {
  const out: Transition[] = [];
  const first = new Date(from).getUTCFullYear();
  const last = new Date(to).getUTCFullYear();
  for (let year = first; year <= last; year++) for (const t of yearTransitions(timezone, year)) if (t.at >= from && t.at < to) out.push(t);
  return out;
}

/** The local dates whose wall clock a transition touches (the day it happens on; two days for one at midnight). */
export function transitionDates(t: Transition): LocalDate[] {
  const before = dateOfNaive(t.at + t.before - MINUTE);
  const after = dateOfNaive(t.at + t.after);
  const dates = [dateOfNaive(t.at + t.before)];
  for (const d of [before, after]) if (!dates.some((x) => compareDates(x, d) === 0)) dates.push(d);
  return dates.filter((d) => {
    // The minute before the change on its own date is not touched when the change is at midnight.
    const start = naiveOf(d);
    const lo = Math.min(t.at + t.before, t.at + t.after);
    const hi = Math.max(t.at + t.before, t.at + t.after);
    return hi > start && lo < start + DAY;
  });
}

/**
 * The instant a wall time stands for, by the rule above: `kind` says whether the time was
 * regular, skipped by the clocks (gap: shifted forward) or repeated (overlap: the first).
 */
export function instantOf(timezone: string, wall: WallTime): { instant: number; kind: 'regular' | 'gap' | 'overlap' } {
  const naive = naiveOf(wall);
  const near = transitionsBetween(timezone, naive - 2 * DAY, naive + 2 * DAY);
  if (near.length === 0) return { instant: naive - offsetAt(timezone, naive), kind: 'regular' };
  const offsets = [...new Set(near.flatMap((t) => [t.before, t.after]))];
  const valid = offsets.map((o) => naive - o).filter((instant) => sameWall(wallTimeAt(timezone, instant), wall));
  const unique = [...new Set(valid)].sort((a, b) => a - b);
  if (unique.length === 1) return { instant: unique[0]!, kind: 'regular' };
  if (unique.length > 1) return { instant: unique[0]!, kind: 'overlap' };
  // Skipped by the clocks: read with the offset before the jump nearest to it.
  const jump = near.reduce((best, t) => (Math.abs(t.at + t.before - naive) < Math.abs(best.at + best.before - naive) ? t : best));
  return { instant: naive - jump.before, kind: 'gap' };
}

/** The local date at an instant. */
export function localDateAt(timezone: string, instant: number): LocalDate {
  const { year, month, day } = wallTimeAt(timezone, instant);
  return { year, month, day };
}

/**
 * The offset that holds for every wall time of a local date, or null when a transition touches
 * that date (its times are then read one by one with instantOf).
 */
export function steadyOffset(timezone: string, date: LocalDate): number | null {
  const start = naiveOf(date);
  const near = transitionsBetween(timezone, start - 2 * DAY, start + 3 * DAY);
  if (near.some((t) => transitionDates(t).some((d) => compareDates(d, date) === 0))) return null;
  const noon = start + 12 * HOUR;
  return offsetAt(timezone, noon - offsetAt(timezone, noon));
}

/** The timezone's standard (winter) offset in a year: the smaller of January's and July's. */
export function standardOffset(timezone: string, year: number): number {
  return Math.min(offsetAt(timezone, Date.UTC(year, 0, 1)), offsetAt(timezone, Date.UTC(year, 6, 1)));
}
