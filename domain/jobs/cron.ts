/*
 * Five-field cron expressions (minute hour day-of-month month day-of-week), as Vixie cron and
 * its descendants read them, parsed into local calendars (schedule.ts). Accepted: `*`, numbers,
 * ranges `a-b`, steps `*\/n`, `a-b/n` and `a/n` (a to the field's end), lists `a,b`, month names
 * JAN–DEC, day names SUN–SAT, 0 or 7 for Sunday, and the macros @hourly, @daily (@midnight),
 * @weekly, @monthly, @yearly (@annually). When both day fields are restricted (neither starts
 * with `*`), a day matches either, as in cron; otherwise both must match.
 */

/** One calendar: every field is a list of values, null for "any". A day matches `days` or is the last of its month when `lastDay`. */
export interface LocalCalendar {
  months: number[] | null;
  days: number[] | null;
  lastDay: boolean;
  weekdays: number[] | null;
  hours: number[];
  minutes: number[];
}

export class CronError extends Error {
  constructor(
    message: string,
    readonly field: string,
  ) {
    super(message);
  }
}

const MONTHS = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAYS = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

const FIELDS = [
  { name: 'minute', min: 0, max: 59, names: null },
  { name: 'hour', min: 0, max: 23, names: null },
  { name: 'day of month', min: 1, max: 31, names: null },
  { name: 'month', min: 1, max: 12, names: MONTHS, base: 1 },
  { name: 'day of week', min: 0, max: 7, names: DAYS, base: 0 },
] as const;

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** The expression as stored: trimmed, fields separated by one space, a macro in lower case. */
export function normalizeCron(expression: string): string {
  const trimmed = expression.trim().split(/\s+/).join(' ');
  return trimmed.startsWith('@') ? trimmed.toLowerCase() : trimmed;
}

function value(text: string, field: (typeof FIELDS)[number]): number {
  if (/^\d+$/.test(text)) {
    const n = Number(text);
    if (n < field.min || n > field.max) throw new CronError(`${field.name}: ${n} is outside ${field.min}–${field.max}`, field.name);
    return n;
  }
  const names = field.names as readonly string[] | null;
  const index = names ? names.indexOf(text.toUpperCase()) : -1;
  if (index < 0) throw new CronError(`${field.name}: "${text}" is not a number${names ? ` or a name (${names[0]}–${names.at(-1)})` : ''}`, field.name);
  return index + ('base' in field ? field.base : 0);
}

function parseField(text: string, field: (typeof FIELDS)[number]): Set<number> {
  const out = new Set<number>();
  for (const item of text.split(',')) {
    const match = /^([^/]+)(?:\/(\d+))?$/.exec(item);
    if (!match) throw new CronError(`${field.name}: "${item}" is not a value, range or step`, field.name);
    const [, range, stepText] = match;
    const step = stepText === undefined ? 1 : Number(stepText);
    if (step < 1) throw new CronError(`${field.name}: a step must be 1 or more`, field.name);
    let start: number;
    let end: number;
    if (range === '*') {
      start = field.min;
      end = field.max;
    } else if (range!.includes('-')) {
      const [a, b, ...rest] = range!.split('-');
      if (rest.length || !a || !b) throw new CronError(`${field.name}: "${range}" is not a range`, field.name);
      start = value(a, field);
      end = value(b, field);
      if (start > end) throw new CronError(`${field.name}: the range ${range} runs backwards`, field.name);
    } else {
      start = value(range!, field);
      end = stepText === undefined ? start : field.max;
    }
    for (let v = start; v <= end; v += step) out.add(v);
  }
  return out;
}

const sorted = (s: Set<number>) => [...s].sort((a, b) => a - b);

/** The calendars a cron expression fires on (two when both day fields are restricted: either matches). */
export function parseCron(expression: string): LocalCalendar[] {
  const normalized = normalizeCron(expression);
  const text = normalized.startsWith('@') ? MACROS[normalized] : normalized;
  if (!text) throw new CronError(`unknown macro ${normalized} (use @hourly, @daily, @weekly, @monthly or @yearly)`, 'expression');
  const parts = text.split(' ');
  if (parts.length !== 5)
    throw new CronError(`a cron expression has 5 fields (minute hour day-of-month month day-of-week); this one has ${parts.length}`, 'expression');
  const [minutes, hours, days, months, weekdays] = parts.map((p, i) => parseField(p, FIELDS[i]!));
  // Sunday may be written 7.
  if (weekdays!.delete(7)) weekdays!.add(0);
  const daysAny = parts[2] === '*';
  const weekdaysAny = parts[4] === '*';
  const base = {
    months: parts[3] === '*' ? null : sorted(months!),
    lastDay: false,
    hours: sorted(hours!),
    minutes: sorted(minutes!),
  };
  const dayList = daysAny ? null : sorted(days!);
  const weekdayList = weekdaysAny ? null : sorted(weekdays!);
  // As in cron: restricted day-of-month and day-of-week (neither starting with *) match either.
  if (!parts[2]!.startsWith('*') && !parts[4]!.startsWith('*')) {
    return [
      { ...base, days: dayList, weekdays: null },
      { ...base, days: null, weekdays: weekdayList },
    ];
  }
  return [{ ...base, days: dayList, weekdays: weekdayList }];
}
