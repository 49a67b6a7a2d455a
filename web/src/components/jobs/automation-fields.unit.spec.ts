import { describe, expect, it } from 'vitest';
import { typedValue } from './parameters-field.js';
import { parseMonthDays } from './schedule-field.js';

describe('what the schedule and parameter fields send', () => {
  it('reads days of the month as numbers and "last", leaving the rest for the server to refuse', () => {
    expect(parseMonthDays('1, 15,last')).toEqual([1, 15, 'last']);
    expect(parseMonthDays(' 31 ; LAST ')).toEqual([31, 'last']);
    expect(parseMonthDays('')).toEqual([]);
    expect(parseMonthDays('first')).toEqual([Number.NaN]);
  });

  it('types a default or a choice as its parameter declares', () => {
    expect(typedValue('integer', ' 2024 ')).toBe(2024);
    expect(typedValue('number', '0.5')).toBe(0.5);
    expect(typedValue('number', 'half')).toBe('half');
    expect(typedValue('boolean', 'false')).toBe(false);
    expect(typedValue('boolean', 'no')).toBe('no');
    expect(typedValue('date', '2026-01-31')).toBe('2026-01-31');
    expect(typedValue('string', '42')).toBe('42');
  });
});
