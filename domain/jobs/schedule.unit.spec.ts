import { describe, expect, it } from 'vitest';
import { checkSchedule, describeSchedule, nextFireTime, nextFireTimes, type JobSchedule } from './schedule.js';
import { instantOf, normalizeTimezone } from './zones.js';

const iso = (d: Date | number) => new Date(d).toISOString();
const times = (s: JobSchedule, after: string, count = 5) => nextFireTimes(s, new Date(after), count).map(iso);
const berlin: JobSchedule = { kind: 'daily', timezone: 'Europe/Berlin', hour: 2, minute: 30 };
const now = new Date('2026-05-01T00:00:00Z');

describe('wall-clock schedules across daylight-saving changes', () => {
  it('runs 02:30 Europe/Berlin once on the spring-forward day, shifted forward by the gap to 03:30 CEST', () => {
    expect(times(berlin, '2026-03-27T12:00:00Z', 3)).toEqual(['2026-03-28T01:30:00.000Z', '2026-03-29T01:30:00.000Z', '2026-03-30T00:30:00.000Z']);
  });

  it('runs 02:30 Europe/Berlin once on the autumn day, at its first occurrence (02:30 CEST)', () => {
    expect(times(berlin, '2026-10-23T12:00:00Z', 3)).toEqual(['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
  });

  it('west of Greenwich the same rule: New York 01:30 runs once in November (EDT), 02:30 in March shifts to 03:30 EDT', () => {
    const ny = (hour: number, minute: number): JobSchedule => ({ kind: 'daily', timezone: 'America/New_York', hour, minute });
    expect(times(ny(1, 30), '2026-10-31T12:00:00Z', 2)).toEqual(['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z']);
    expect(times(ny(2, 30), '2026-03-07T12:00:00Z', 2)).toEqual(['2026-03-08T07:30:00.000Z', '2026-03-09T06:30:00.000Z']);
    expect(instantOf('America/New_York', { year: 2026, month: 3, day: 8, hour: 2, minute: 30 }).kind).toBe('gap');
    expect(instantOf('America/New_York', { year: 2026, month: 11, day: 1, hour: 1, minute: 30 }).kind).toBe('overlap');
  });

  it('a cron every 15 minutes: the repeated hour runs once (CEST), the skipped hour folds onto 03:00–03:45 CEST', () => {
    const every15: JobSchedule = { kind: 'cron', timezone: 'Europe/Berlin', expression: '*/15 * * * *' };
    expect(times(every15, '2026-10-24T23:40:00Z', 7)).toEqual([
      '2026-10-24T23:45:00.000Z', // 01:45 CEST
      '2026-10-25T00:00:00.000Z', // 02:00 CEST
      '2026-10-25T00:15:00.000Z',
      '2026-10-25T00:30:00.000Z',
      '2026-10-25T00:45:00.000Z', // 02:45 CEST; 02:00–02:45 CET are the same wall times: not again
      '2026-10-25T02:00:00.000Z', // 03:00 CET
      '2026-10-25T02:15:00.000Z',
    ]);
    expect(times(every15, '2026-03-29T00:40:00Z', 3)).toEqual(['2026-03-29T00:45:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-29T01:15:00.000Z']);
  });

  it('an interval counts elapsed time: every 15 minutes goes on through the autumn night', () => {
    const interval: JobSchedule = { kind: 'interval', timezone: 'Europe/Berlin', every_minutes: 15 };
    expect(times(interval, '2026-10-25T00:40:00Z', 4)).toEqual([
      '2026-10-25T00:45:00.000Z',
      '2026-10-25T01:00:00.000Z',
      '2026-10-25T01:15:00.000Z',
      '2026-10-25T01:30:00.000Z',
    ]);
  });
});

describe('each kind', () => {
  it('weekly: the days named, at the time, in the timezone', () => {
    const s: JobSchedule = { kind: 'weekly', timezone: 'Europe/Berlin', days: ['mon', 'fri'], hour: 8, minute: 0 };
    // 2026-05-01 is a Friday.
    expect(times(s, '2026-05-01T00:00:00Z', 3)).toEqual(['2026-05-01T06:00:00.000Z', '2026-05-04T06:00:00.000Z', '2026-05-08T06:00:00.000Z']);
  });

  it('monthly: a day a month lacks is skipped, "last" is the last day of every month', () => {
    const thirtyFirst: JobSchedule = { kind: 'monthly', timezone: 'UTC', days: [31], hour: 6, minute: 0 };
    expect(times(thirtyFirst, '2026-01-01T00:00:00Z', 3)).toEqual(['2026-01-31T06:00:00.000Z', '2026-03-31T06:00:00.000Z', '2026-05-31T06:00:00.000Z']);
    const last: JobSchedule = { kind: 'monthly', timezone: 'Europe/Berlin', days: [1, 'last'], hour: 0, minute: 30 };
    expect(times(last, '2026-01-31T00:00:00Z', 3)).toEqual(['2026-01-31T23:30:00.000Z', '2026-02-27T23:30:00.000Z', '2026-02-28T23:30:00.000Z']);
  });

  it('cron: both day fields restricted match either (as in cron); a stepped day field matches with the weekday', () => {
    const either: JobSchedule = { kind: 'cron', timezone: 'UTC', expression: '0 12 1 * mon' };
    // May 2026: Fri 1st, Mondays 4, 11; June 1st is a Monday.
    expect(times(either, '2026-04-30T00:00:00Z', 4)).toEqual([
      '2026-05-01T12:00:00.000Z',
      '2026-05-04T12:00:00.000Z',
      '2026-05-11T12:00:00.000Z',
      '2026-05-18T12:00:00.000Z',
    ]);
    const both: JobSchedule = { kind: 'cron', timezone: 'UTC', expression: '0 12 */2 * MON' };
    // Odd days that are Mondays: 11, 25 May.
    expect(times(both, '2026-05-01T00:00:00Z', 2)).toEqual(['2026-05-11T12:00:00.000Z', '2026-05-25T12:00:00.000Z']);
    const weekdays: JobSchedule = { kind: 'cron', timezone: 'America/New_York', expression: '*/15 9-17 * * 1-5' };
    expect(times(weekdays, '2026-05-01T21:40:00Z', 2)).toEqual(['2026-05-01T21:45:00.000Z', '2026-05-04T13:00:00.000Z']);
    expect(times({ kind: 'cron', timezone: 'UTC', expression: '@weekly' }, '2026-05-01T00:00:00Z', 1)).toEqual(['2026-05-03T00:00:00.000Z']);
    expect(times({ kind: 'cron', timezone: 'UTC', expression: '0 0 29 feb *' }, '2026-05-01T00:00:00Z', 1)).toEqual(['2028-02-29T00:00:00.000Z']);
  });

  it('interval: aligned to the timezone standard clock (Kolkata +05:30: every hour on its hour)', () => {
    expect(times({ kind: 'interval', timezone: 'Asia/Kolkata', every_minutes: 60 }, '2026-05-01T00:00:00Z', 2)).toEqual([
      '2026-05-01T00:30:00.000Z',
      '2026-05-01T01:30:00.000Z',
    ]);
    expect(times({ kind: 'interval', timezone: 'UTC', every_minutes: 1 }, '2026-05-01T00:00:30Z', 2)).toEqual([
      '2026-05-01T00:01:00.000Z',
      '2026-05-01T00:02:00.000Z',
    ]);
    expect(times({ kind: 'interval', timezone: 'UTC', every_minutes: 90 }, '2026-05-01T00:00:00Z', 2)).toEqual([
      '2026-05-01T01:30:00.000Z',
      '2026-05-01T03:00:00.000Z',
    ]);
  });

  it('next fire time is strictly after the given instant', () => {
    const utc: JobSchedule = { kind: 'daily', timezone: 'UTC', hour: 6, minute: 0 };
    expect(iso(nextFireTime(utc, new Date('2026-05-01T06:00:00Z'))!)).toBe('2026-05-02T06:00:00.000Z');
    expect(iso(nextFireTime(utc, new Date('2026-05-01T05:59:59Z'))!)).toBe('2026-05-01T06:00:00.000Z');
  });

  it('says what it does in words', () => {
    expect(describeSchedule({ kind: 'weekly', timezone: 'UTC', days: ['mon', 'fri'], hour: 8, minute: 5 })).toBe('every Monday, Friday at 08:05 (UTC)');
    expect(describeSchedule({ kind: 'interval', timezone: 'UTC', every_minutes: 15 })).toBe('every 15 minutes (UTC standard time)');
  });
});

describe('checking a schedule', () => {
  it('stores canonical IANA names, sorted unique days and a normalized cron expression', () => {
    expect(normalizeTimezone('US/Eastern')).toBe('America/New_York');
    expect(checkSchedule({ kind: 'weekly', timezone: 'US/Eastern', days: ['fri', 'mon', 'fri'], hour: 1, minute: 2 }, now)).toEqual({
      kind: 'weekly',
      timezone: 'America/New_York',
      days: ['mon', 'fri'],
      hour: 1,
      minute: 2,
    });
    expect(checkSchedule({ kind: 'monthly', timezone: 'UTC', days: ['last', 15, 1, 15], hour: 1, minute: 2 }, now)).toMatchObject({ days: [1, 15, 'last'] });
    expect(checkSchedule({ kind: 'cron', timezone: 'UTC', expression: '  */5   *  * * * ' }, now)).toMatchObject({ expression: '*/5 * * * *' });
  });

  it('refuses with a 422 that names the field and says what is wrong', () => {
    const refused = (s: JobSchedule) => {
      try {
        checkSchedule(s, now);
      } catch (error) {
        return (error as { code: string; message: string }).message;
      }
      return 'accepted';
    };
    expect(refused({ kind: 'daily', timezone: 'Mars/Olympus', hour: 1, minute: 0 })).toMatch(/body.schedule.timezone/);
    expect(refused({ kind: 'cron', timezone: 'UTC', expression: '61 * * * *' })).toBe(
      'Invalid request body: body.schedule.expression: minute: 61 is outside 0–59',
    );
    expect(refused({ kind: 'cron', timezone: 'UTC', expression: '* * * *' })).toMatch(/5 fields .* this one has 4/);
    expect(refused({ kind: 'cron', timezone: 'UTC', expression: '0 0 * * FUNDAY' })).toMatch(/day of week: "FUNDAY" is not a number or a name \(SUN–SAT\)/);
    expect(refused({ kind: 'cron', timezone: 'UTC', expression: '0 5-2 * * *' })).toMatch(/hour: the range 5-2 runs backwards/);
    expect(refused({ kind: 'cron', timezone: 'UTC', expression: '0 0 30 2 *' })).toMatch(/body.schedule: never fires/);
    expect(refused({ kind: 'weekly', timezone: 'UTC', days: [], hour: 1, minute: 0 })).toMatch(/body.schedule.days/);
    expect(refused({ kind: 'cron', timezone: 'UTC', expression: '@reboot' })).toMatch(/unknown macro/);
  });
});
