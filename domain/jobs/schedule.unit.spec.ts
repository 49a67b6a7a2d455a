import { describe, expect, it } from 'vitest';
import { fireInstant, gapDays, nextFireTime, nextFireTimes, normalizeTimezone, type JobSchedule } from './schedule.js';

const iso = (d: Date | number) => new Date(d).toISOString();
const berlin: JobSchedule = { kind: 'daily', timezone: 'Europe/Berlin', hour: 2, minute: 30 };

describe('daily schedules across daylight-saving changes', () => {
  it('runs 02:30 Europe/Berlin once on the spring-forward day, shifted to 03:30 CEST', () => {
    const times = nextFireTimes(berlin, new Date('2026-03-27T12:00:00Z'), 3).map(iso);
    expect(times).toEqual(['2026-03-28T01:30:00.000Z', '2026-03-29T01:30:00.000Z', '2026-03-30T00:30:00.000Z']);
  });

  it('runs 02:30 Europe/Berlin once on the autumn day (the second occurrence, CET, as Temporal picks)', () => {
    const times = nextFireTimes(berlin, new Date('2026-10-23T12:00:00Z'), 3).map(iso);
    expect(times).toEqual(['2026-10-24T00:30:00.000Z', '2026-10-25T01:30:00.000Z', '2026-10-26T01:30:00.000Z']);
  });

  it('west of Greenwich: New York 01:30 on the autumn day is the first occurrence; 02:30 in spring shifts to 03:30 EDT', () => {
    expect(iso(fireInstant('America/New_York', { year: 2026, month: 11, day: 1, hour: 1, minute: 30 }).instant)).toBe('2026-11-01T05:30:00.000Z');
    const spring = fireInstant('America/New_York', { year: 2026, month: 3, day: 8, hour: 2, minute: 30 });
    expect(spring).toMatchObject({ gap: true, fires: { year: 2026, month: 3, day: 8, hour: 3, minute: 30 } });
    expect(iso(spring.instant)).toBe('2026-03-08T07:30:00.000Z');
  });

  it('lists the gap days the Temporal schedule must name explicitly, and only those', () => {
    expect(gapDays(berlin, new Date('2026-01-01T00:00:00Z'), 2)).toEqual([
      { year: 2026, month: 3, day: 29, hour: 3, minute: 30 },
      { year: 2027, month: 3, day: 28, hour: 3, minute: 30 },
    ]);
    expect(gapDays({ ...berlin, hour: 12 }, new Date('2026-01-01T00:00:00Z'), 2)).toEqual([]);
    expect(gapDays({ ...berlin, timezone: 'UTC' }, new Date('2026-01-01T00:00:00Z'), 2)).toEqual([]);
    // Lord Howe moves by 30 minutes: 02:15 does not exist on its spring day.
    expect(gapDays({ kind: 'daily', timezone: 'Australia/Lord_Howe', hour: 2, minute: 15 }, new Date('2026-01-01T00:00:00Z'), 1)).toEqual([
      { year: 2026, month: 10, day: 4, hour: 2, minute: 45 },
    ]);
  });

  it('next fire time is strictly after the given instant', () => {
    const utc: JobSchedule = { kind: 'daily', timezone: 'UTC', hour: 6, minute: 0 };
    expect(iso(nextFireTime(utc, new Date('2026-05-01T06:00:00Z')))).toBe('2026-05-02T06:00:00.000Z');
    expect(iso(nextFireTime(utc, new Date('2026-05-01T05:59:59Z')))).toBe('2026-05-01T06:00:00.000Z');
  });

  it('stores canonical IANA names and refuses unknown ones with a 422 naming the field', () => {
    expect(normalizeTimezone('US/Eastern')).toBe('America/New_York');
    expect(normalizeTimezone('UTC')).toBe('UTC');
    expect(() => normalizeTimezone('Mars/Olympus')).toThrow(/body.schedule.timezone/);
  });
});
