/**
 * A Job's schedule: none (Run Now only), every day, certain weekdays, certain days of the month
 * (at an hour and minute), every N minutes, or a cron expression, in an IANA timezone picked
 * from the browser's own list of zones (the user's zone first). Beside it, the next five Runs
 * as the server computes them (POST /schedules/preview: the same check a save makes, the same
 * times the Temporal Schedule will fire), in the user's time and the Job's.
 */
import { ApiError, plainMessage, post } from '../../api.js';
import { h, replace, uid } from '../../dom.js';
import { fieldset, labelled, type FormErrors } from '../../forms.js';
import type { Schedule } from '../../types.js';

const pad = (n: number) => String(n).padStart(2, '0');
const DAYS = [
  ['mon', 'Mon'],
  ['tue', 'Tue'],
  ['wed', 'Wed'],
  ['thu', 'Thu'],
  ['fri', 'Fri'],
  ['sat', 'Sat'],
  ['sun', 'Sun'],
] as const;
type Weekday = (typeof DAYS)[number][0];
type Kind = Schedule['kind'] | '';

export function browserTimezone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

function timezones(): string[] {
  const supported = (Intl as unknown as { supportedValuesOf?: (key: string) => string[] }).supportedValuesOf;
  const zones = supported ? supported('timeZone') : [];
  return zones.includes('UTC') ? zones : ['UTC', ...zones];
}

/** "1, 15, last" → [1, 15, 'last']; anything else is left for the server to refuse. */
export function parseMonthDays(text: string): (number | 'last')[] {
  return text
    .split(/[\s,;]+/)
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean)
    .map((s) => (s === 'last' ? 'last' : Number(s)));
}

interface Preview {
  description: string;
  next_run_times: string[];
}

export interface ScheduleField {
  node: HTMLElement;
  value(): Schedule | null;
  attach(errors: FormErrors): void;
}

export function scheduleField(initial: Schedule | null | undefined): ScheduleField {
  const kind = labelled(
    h(
      'select',
      { name: 'schedule.kind' },
      h('option', { value: '' }, 'No schedule: Run Now and triggers only'),
      h('option', { value: 'daily' }, 'Every day'),
      h('option', { value: 'weekly' }, 'On certain weekdays'),
      h('option', { value: 'monthly' }, 'On certain days of the month'),
      h('option', { value: 'interval' }, 'Every N minutes'),
      h('option', { value: 'cron' }, 'Cron expression'),
    ),
    { label: 'Runs' },
  );
  kind.control.value = initial?.kind ?? '';

  const listId = uid('timezones');
  const zone = labelled(
    h('input', {
      type: 'text',
      name: 'schedule.timezone',
      list: listId,
      autocomplete: 'off',
      spellcheck: 'false',
      value: initial?.timezone ?? browserTimezone(),
    }),
    {
      label: 'Timezone',
      required: true,
      hint: 'An IANA timezone such as Europe/Berlin or America/New_York: the times are the clock there, summer time included. Type to search.',
    },
  );
  zone.row.append(
    h(
      'datalist',
      { id: listId },
      timezones().map((z) => h('option', { value: z })),
    ),
  );

  const at = initial && 'hour' in initial ? initial : null;
  const hour = labelled(
    h(
      'select',
      { name: 'schedule.hour' },
      Array.from({ length: 24 }, (_, i) => h('option', { value: String(i) }, pad(i))),
    ),
    { label: 'Hour', required: true },
  );
  const minute = labelled(
    h(
      'select',
      { name: 'schedule.minute' },
      Array.from({ length: 60 }, (_, i) => h('option', { value: String(i) }, pad(i))),
    ),
    { label: 'Minute', required: true },
  );
  hour.control.value = String(at?.hour ?? 2);
  minute.control.value = String(at?.minute ?? 0);

  const chosenDays = new Set<Weekday>(initial?.kind === 'weekly' ? (initial.days as Weekday[]) : ['mon', 'tue', 'wed', 'thu', 'fri']);
  const dayBoxes = DAYS.map(([value, label]) => {
    const box = h('input', { type: 'checkbox', id: uid(`day-${value}`), value, checked: chosenDays.has(value) });
    return { value, box, node: h('div', { class: 'check-line' }, box, h('label', { for: box.id }, label)) };
  });
  const weekdays = fieldset(
    'field weekdays',
    'Days',
    h(
      'div',
      { class: 'segmented' },
      dayBoxes.map((d) => d.node),
    ),
  );
  const monthDays = labelled(
    h('input', {
      type: 'text',
      name: 'schedule.days',
      autocomplete: 'off',
      value: initial?.kind === 'monthly' ? initial.days.join(', ') : '1',
    }),
    {
      label: 'Days of the month',
      required: true,
      hint: 'Numbers 1–31 and "last", separated by commas. A month without that day is skipped (use "last" for month ends).',
    },
  );
  const every = labelled(
    h('input', {
      type: 'number',
      name: 'schedule.every_minutes',
      min: '1',
      step: '1',
      value: initial?.kind === 'interval' ? String(initial.every_minutes) : '15',
    }),
    { label: 'Every (minutes)', required: true, hint: 'Counted in elapsed time, so summer-time changes do not shift it; 15 runs at :00, :15, :30, :45.' },
  );
  const cron = labelled(
    h('input', {
      type: 'text',
      name: 'schedule.expression',
      class: 'mono',
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: '*/15 7-18 * * mon-fri',
      value: initial?.kind === 'cron' ? initial.expression : '',
    }),
    {
      label: 'Cron expression',
      required: true,
      hint: 'Five fields: minute hour day-of-month month day-of-week, as in cron (e.g. */15 7-18 * * mon-fri); @hourly, @daily, @weekly and @monthly work too.',
    },
  );

  const preview = h('div', { class: 'schedule-preview', 'aria-live': 'polite' });
  const timeRows = h('div', { class: 'schedule-grid' }, hour.row, minute.row);
  const details = h(
    'div',
    { class: 'schedule-details stack' },
    h('div', { class: 'schedule-grid' }, zone.row),
    weekdays,
    monthDays.row,
    timeRows,
    every.row,
    cron.row,
    preview,
  );

  function value(): Schedule | null {
    const k = kind.control.value as Kind;
    const timezone = zone.control.value.trim();
    const time = { hour: Number(hour.control.value), minute: Number(minute.control.value) };
    switch (k) {
      case 'daily':
        return { kind: 'daily', timezone, ...time };
      case 'weekly':
        return { kind: 'weekly', timezone, days: dayBoxes.filter((d) => d.box.checked).map((d) => d.value), ...time };
      case 'monthly':
        return { kind: 'monthly', timezone, days: parseMonthDays(monthDays.control.value), ...time };
      case 'interval':
        return { kind: 'interval', timezone, every_minutes: Number(every.control.value) };
      case 'cron':
        return { kind: 'cron', timezone, expression: cron.control.value.trim() };
      default:
        return null;
    }
  }

  // The preview follows the form, one request at a time: an answer for an older value is dropped.
  let asked = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const zoneTime = (iso: string, timezone: string) => {
    try {
      return new Intl.DateTimeFormat(undefined, { timeZone: timezone, weekday: 'short', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' }).format(
        new Date(iso),
      );
    } catch {
      return '';
    }
  };
  async function refreshPreview() {
    const schedule = value();
    if (!schedule) return replace(preview);
    const mine = ++asked;
    try {
      const answer = await post<Preview>('/schedules/preview', { schedule, count: 5 });
      if (mine !== asked) return;
      const local = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
      replace(
        preview,
        h('p', { class: 'hint' }, `Runs ${answer.description}. Next Runs, in your time (and the Job's):`),
        h(
          'ol',
          { class: 'next-runs', 'data-testid': 'next-runs' },
          answer.next_run_times.map((t) =>
            h('li', null, h('time', { datetime: t }, local.format(new Date(t))), schedule.timezone ? ` (${zoneTime(t, schedule.timezone)})` : ''),
          ),
        ),
      );
    } catch (error) {
      if (mine !== asked) return;
      const issue = error instanceof ApiError ? error.issues?.[0]?.message : undefined;
      replace(preview, h('p', { class: 'notice warn', role: 'status' }, issue ? `Not a schedule yet: ${issue}` : plainMessage(error)));
    }
  }

  function sync() {
    const k = kind.control.value as Kind;
    details.hidden = k === '';
    weekdays.hidden = k !== 'weekly';
    monthDays.row.hidden = k !== 'monthly';
    timeRows.hidden = !(k === 'daily' || k === 'weekly' || k === 'monthly');
    every.row.hidden = k !== 'interval';
    cron.row.hidden = k !== 'cron';
    clearTimeout(timer);
    timer = setTimeout(() => void refreshPreview(), 300);
  }
  for (const c of [kind.control, zone.control, hour.control, minute.control, monthDays.control, every.control, cron.control, ...dayBoxes.map((d) => d.box)]) {
    c.addEventListener('input', sync);
    c.addEventListener('change', sync);
  }
  sync();

  return {
    node: h('div', { class: 'stack' }, kind.row, details),
    value,
    attach(errors) {
      errors
        .add('schedule', kind.handle)
        .add('schedule.kind', kind.handle)
        .add('schedule.timezone', zone.handle)
        .add('schedule.hour', hour.handle)
        .add('schedule.minute', minute.handle)
        .add('schedule.days', monthDays.handle)
        .add('schedule.every_minutes', every.handle)
        .add('schedule.expression', cron.handle);
    },
  };
}
