import { describe, expect, it } from 'vitest';
import { nextFireTimes, type JobSchedule } from './schedule.js';
import { compileSchedule, matchesUtc } from './schedule-spec.js';
import { MINUTE, transitionsBetween } from './zones.js';

/*
 * The UTC calendars given to Temporal must fire exactly the instants schedule.ts computes: each
 * compiled schedule is matched minute by minute over days the clocks change and across month
 * ends, in zones east and west of Greenwich, with half-hour and 45-minute offsets and a
 * 30-minute daylight-saving shift (Lord Howe), and compared with nextFireTimes.
 */

const zones = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'Pacific/Chatham', 'America/Santiago', 'UTC'];
const schedules = (timezone: string): JobSchedule[] => [
  { kind: 'daily', timezone, hour: 2, minute: 30 },
  { kind: 'daily', timezone, hour: 0, minute: 15 },
  { kind: 'daily', timezone, hour: 23, minute: 45 },
  { kind: 'weekly', timezone, days: ['sun', 'mon'], hour: 1, minute: 5 },
  { kind: 'monthly', timezone, days: [1, 'last'], hour: 0, minute: 30 },
  { kind: 'cron', timezone, expression: '*/15 * * * *' },
  { kind: 'cron', timezone, expression: '30 1-3 * * 0' },
  { kind: 'cron', timezone, expression: '0 0 1 * mon' },
  { kind: 'cron', timezone, expression: '10,50 22-23,0-2 * 3,4,9,10 *' },
];

const compiledAt = new Date('2026-06-15T00:00:00Z');

const cache = new Map<string, ReturnType<typeof compileSchedule>>();
const compiled = (schedule: JobSchedule) => {
  const key = JSON.stringify(schedule);
  if (!cache.has(key)) cache.set(key, compileSchedule(schedule, compiledAt, 3));
  return cache.get(key)!;
};

/** Every minute of [from, to) the compiled calendars match. */
function matched(schedule: JobSchedule, from: number, to: number): string[] {
  const { calendars } = compiled(schedule);
  const out: string[] = [];
  for (let t = from; t < to; t += MINUTE) if (matchesUtc(calendars, t)) out.push(new Date(t).toISOString());
  return out;
}
/** What nextFireTimes lists in [from, to); asked for one more than matched, so an extra one shows. */
function expected(schedule: JobSchedule, from: number, to: number, matchedCount: number): string[] {
  return nextFireTimes(schedule, new Date(from - 1), matchedCount + 1)
    .map((d) => d.getTime())
    .filter((t) => t < to)
    .map((t) => new Date(t).toISOString());
}

describe('the UTC calendars Temporal holds fire what nextFireTimes says', () => {
  for (const timezone of zones) {
    it(`in ${timezone}: around each clock change of 2027 and across month ends`, () => {
      const windows: [number, number][] = transitionsBetween(timezone, Date.UTC(2027, 0, 1), Date.UTC(2028, 0, 1)).map((t) => [
        t.at - 40 * 3_600_000,
        t.at + 40 * 3_600_000,
      ]);
      windows.push([Date.UTC(2027, 0, 30, 12), Date.UTC(2027, 1, 2)], [Date.UTC(2028, 1, 27, 12), Date.UTC(2028, 2, 2)]);
      for (const schedule of schedules(timezone)) {
        for (const [from, to] of windows) {
          const got = matched(schedule, from, to);
          expect(got, `${JSON.stringify(schedule)} ${new Date(from).toISOString()}`).toEqual(expected(schedule, from, to, got.length));
        }
      }
    });
  }

  it('keeps the spec small: a daily time is a handful of calendars a year, every minute is one per period', () => {
    const daily = compileSchedule({ kind: 'daily', timezone: 'Europe/Berlin', hour: 2, minute: 30 }, compiledAt, 20).calendars.length;
    expect(daily).toBeLessThan(20 * 8);
    const utc = compileSchedule({ kind: 'cron', timezone: 'UTC', expression: '* * * * *' }, compiledAt, 20).calendars;
    expect(utc.length).toBeLessThanOrEqual(3);
  });

  it('an interval is an interval with a phase (Kolkata: on its own hour)', () => {
    expect(compileSchedule({ kind: 'interval', timezone: 'Asia/Kolkata', every_minutes: 60 }, compiledAt)).toEqual({
      calendars: [],
      interval: { everyMs: 3_600_000, phaseMs: 1_800_000 },
    });
  });
});
