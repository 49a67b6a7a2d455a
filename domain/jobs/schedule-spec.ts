import { calendarsOf, dateMatches, describeSchedule, firesOnDate, intervalPhase, type JobSchedule, type LocalCalendar } from './schedule.js';
import {
  addDays,
  compareDates,
  DAY,
  daysInMonth,
  localDateAt,
  MINUTE,
  naiveOf,
  offsetAt,
  transitionDates,
  transitionsBetween,
  type LocalDate,
} from './zones.js';

/*
 * A schedule as the Temporal Schedule holds it: calendars in UTC (and an interval), so that
 * Temporal fires exactly the instants schedule.ts computes, daylight-saving days included.
 *
 * The local dates are cut into periods of one UTC offset at the days a transition touches.
 * Within a period a local time is a fixed UTC time, possibly on the UTC day before or after
 * (Berlin 00:30 is 22:30 UTC the day before): each such group becomes calendars over the UTC
 * dates the period covers, month by month (a day of month shifted across a month's end is
 * worked out per month), merged where months and years come out the same. The days a
 * transition touches are listed instant by instant from schedule.ts, so the gap and overlap
 * rule is written once. Calendars cover `years` years ahead; every change of the Job renews them.
 */

/** One UTC calendar: a time matches when every listed field does (absent: any). Hours and minutes are always listed. */
export interface UtcCalendar {
  years?: number[];
  months?: number[];
  days?: number[];
  weekdays?: number[];
  hours: number[];
  minutes: number[];
  comment: string;
}

export interface CompiledSchedule {
  calendars: UtcCalendar[];
  /** Interval schedules: every `everyMs`, at `phaseMs` past each multiple since the Unix epoch. */
  interval: { everyMs: number; phaseMs: number } | null;
}

export const SPEC_YEARS = 20;

const key = (o: unknown) => JSON.stringify(o);
const sortedUnique = (values: Iterable<number>) => [...new Set(values)].sort((a, b) => a - b);

interface Period {
  from: LocalDate;
  to: LocalDate;
  offset: number;
}

/** The periods of one offset between the dates transitions touch, and those dates. */
function periodsOf(timezone: string, from: LocalDate, to: LocalDate): { periods: Period[]; touched: LocalDate[] } {
  const transitions = transitionsBetween(timezone, naiveOf(from) - 2 * DAY, naiveOf(to) + 2 * DAY);
  const touched: LocalDate[] = [];
  for (const t of transitions) for (const d of transitionDates(t)) if (!touched.some((x) => compareDates(x, d) === 0)) touched.push(d);
  touched.sort(compareDates);
  const periods: Period[] = [];
  let start = from;
  let offset = offsetAt(timezone, naiveOf(from) + DAY / 2 - offsetAt(timezone, naiveOf(from)));
  const push = (end: LocalDate) => {
    if (compareDates(start, end) <= 0) periods.push({ from: start, to: end, offset });
  };
  for (const d of touched) {
    if (compareDates(d, from) < 0 || compareDates(d, to) > 0) continue;
    push(addDays(d, -1));
    start = addDays(d, 1);
    const noon = naiveOf(start) + DAY / 2;
    offset = offsetAt(timezone, noon - offsetAt(timezone, noon));
  }
  push(to);
  return { periods, touched: touched.filter((d) => compareDates(d, from) >= 0 && compareDates(d, to) <= 0) };
}

interface Raw {
  year: number;
  month: number;
  days: number[] | null;
  weekdays: number[] | null;
  hours: number[];
  minutes: number[];
}

/** The UTC calendars of one local calendar over one period. */
function periodCalendars(c: LocalCalendar, period: Period): Raw[] {
  const offsetMinutes = Math.round(period.offset / MINUTE);
  // Local hour:minute → UTC day shift k (−1, 0, +1) and UTC hour:minute.
  const byShift = new Map<number, Map<number, number[]>>();
  for (const h of c.hours) {
    for (const n of c.minutes) {
      const total = h * 60 + n - offsetMinutes;
      const k = Math.floor(total / 1440);
      const u = total - k * 1440;
      const hours = byShift.get(k) ?? new Map<number, number[]>();
      byShift.set(k, hours);
      hours.set(Math.floor(u / 60), [...(hours.get(Math.floor(u / 60)) ?? []), u % 60]);
    }
  }
  const out: Raw[] = [];
  for (const [k, hours] of byShift) {
    const groups = hoursByMinutes(hours);
    const weekdays = c.weekdays ? sortedUnique(c.weekdays.map((w) => (((w + k) % 7) + 7) % 7)) : null;
    const first = addDays(period.from, k);
    const last = addDays(period.to, k);
    for (let ym = first.year * 12 + first.month - 1; ym <= last.year * 12 + last.month - 1; ym++) {
      const y = Math.floor(ym / 12);
      const m = (ym % 12) + 1;
      const days: number[] = [];
      const length = daysInMonth(y, m);
      for (let x = 1; x <= length; x++) {
        const utc = { year: y, month: m, day: x };
        if (compareDates(utc, first) < 0 || compareDates(utc, last) > 0) continue;
        if (dateMatches(c, addDays(utc, -k), false)) days.push(x);
      }
      if (days.length === 0) continue;
      for (const g of groups) {
        out.push({ year: y, month: m, days: days.length === length ? null : days, weekdays, hours: sortedUnique(g.hours), minutes: g.minutes });
      }
    }
  }
  return out;
}

/** Hours with the same minutes, grouped: each group is one calendar. */
function hoursByMinutes(hours: Map<number, number[]>): { hours: number[]; minutes: number[] }[] {
  const groups = new Map<string, { hours: number[]; minutes: number[] }>();
  for (const [hour, minutes] of hours) {
    const m = sortedUnique(minutes);
    const g = groups.get(key(m)) ?? { hours: [], minutes: m };
    g.hours.push(hour);
    groups.set(key(m), g);
  }
  return [...groups.values()];
}

/** The instants of the days a transition touches, as UTC calendars of one date each. */
function touchedCalendars(schedule: JobSchedule, calendars: LocalCalendar[], dates: LocalDate[]): Raw[] {
  const instants = sortedUnique(dates.flatMap((d) => firesOnDate(schedule, calendars, d)));
  const byDate = new Map<string, { date: LocalDate; hours: Map<number, number[]> }>();
  for (const t of instants) {
    const d = new Date(t);
    const date = { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
    const entry = byDate.get(key(date)) ?? { date, hours: new Map<number, number[]>() };
    byDate.set(key(date), entry);
    entry.hours.set(d.getUTCHours(), [...(entry.hours.get(d.getUTCHours()) ?? []), d.getUTCMinutes()]);
  }
  const out: Raw[] = [];
  for (const { date, hours } of byDate.values()) {
    for (const g of hoursByMinutes(hours))
      out.push({ year: date.year, month: date.month, days: [date.day], weekdays: null, hours: g.hours, minutes: g.minutes });
  }
  return out;
}

/** Months of a year with the same days, times and weekdays become one calendar; then years alike. */
function merge(raw: Raw[], comment: string): UtcCalendar[] {
  const byYear = new Map<string, { base: Omit<Raw, 'month'>; months: number[] }>();
  for (const r of raw) {
    const { month, ...base } = r;
    const k = key(base);
    const entry = byYear.get(k) ?? { base, months: [] };
    entry.months.push(month);
    byYear.set(k, entry);
  }
  const byShape = new Map<string, { shape: Omit<UtcCalendar, 'years' | 'comment' | 'months'> & { months: number[] }; years: number[] }>();
  for (const { base, months } of byYear.values()) {
    const { year, days, weekdays, hours, minutes } = base;
    const shape = {
      months: sortedUnique(months),
      ...(days ? { days } : {}),
      ...(weekdays ? { weekdays } : {}),
      hours,
      minutes,
    };
    const k = key(shape);
    const entry = byShape.get(k) ?? { shape, years: [] };
    entry.years.push(year);
    byShape.set(k, entry);
  }
  return [...byShape.values()].map(({ shape: { months, ...rest }, years }) => ({
    years: sortedUnique(years),
    ...(months.length < 12 ? { months } : {}),
    ...rest,
    comment,
  }));
}

/** What the Temporal Schedule of a Job holds: UTC calendars from `now` for `years` years, or an interval. */
export function compileSchedule(schedule: JobSchedule, now: Date, years = SPEC_YEARS): CompiledSchedule {
  if (schedule.kind === 'interval') {
    return { calendars: [], interval: { everyMs: schedule.every_minutes * MINUTE, phaseMs: intervalPhase(schedule, now) } };
  }
  const calendars = calendarsOf(schedule);
  // From the day before today (local), so nothing due today is left out.
  const from = addDays(localDateAt(schedule.timezone, now.getTime()), -1);
  const to = { year: from.year + years, month: 12, day: 31 };
  const { periods, touched } = periodsOf(schedule.timezone, from, to);
  const raw: Raw[] = [];
  for (const period of periods) for (const c of calendars) raw.push(...periodCalendars(c, period));
  const comment = `${describeSchedule(schedule)}, compiled to UTC`;
  return {
    calendars: [...merge(raw, comment), ...merge(touchedCalendars(schedule, calendars, touched), `${comment} (a day the clocks change)`)],
    interval: null,
  };
}

/** Whether a UTC instant matches one of the calendars (what Temporal checks; the unit specs use it). */
export function matchesUtc(calendars: UtcCalendar[], instant: number): boolean {
  const d = new Date(instant);
  if (d.getUTCSeconds() !== 0 || d.getUTCMilliseconds() !== 0) return false;
  const [year, month, day, weekday, hour, minute] = [
    d.getUTCFullYear(),
    d.getUTCMonth() + 1,
    d.getUTCDate(),
    d.getUTCDay(),
    d.getUTCHours(),
    d.getUTCMinutes(),
  ];
  return calendars.some(
    (c) =>
      (!c.years || c.years.includes(year)) &&
      (!c.months || c.months.includes(month)) &&
      (!c.days || c.days.includes(day)) &&
      (!c.weekdays || c.weekdays.includes(weekday)) &&
      c.hours.includes(hour) &&
      c.minutes.includes(minute),
  );
}
