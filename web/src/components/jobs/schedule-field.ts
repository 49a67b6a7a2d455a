/**
 * A Job's schedule: none (Run Now only) or daily at an hour and minute in an IANA timezone,
 * picked from the browser's own list of zones (the user's zone first). The time is the Job's
 * wall-clock time in that zone; the Job page shows the next Run in the user's local time.
 */
import { h, uid } from '../../dom.js';
import { labelled, type FormErrors } from '../../forms.js';
import type { Schedule } from '../../types.js';

const pad = (n: number) => String(n).padStart(2, '0');

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

export interface ScheduleField {
  node: HTMLElement;
  value(): Schedule | null;
  attach(errors: FormErrors): void;
}

export function scheduleField(initial: Schedule | null | undefined): ScheduleField {
  const kind = labelled(
    h('select', { name: 'schedule.kind' }, h('option', { value: '' }, 'No schedule: Run Now only'), h('option', { value: 'daily' }, 'Every day')),
    { label: 'Runs' },
  );
  kind.control.value = initial?.kind === 'daily' ? 'daily' : '';

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
      hint: 'An IANA timezone such as Europe/Berlin or America/New_York: the time below is the clock time there, summer time included. Type to search.',
    },
  );
  zone.row.append(
    h(
      'datalist',
      { id: listId },
      timezones().map((z) => h('option', { value: z })),
    ),
  );

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
  hour.control.value = String(initial?.hour ?? 2);
  minute.control.value = String(initial?.minute ?? 0);

  const summary = h('p', { class: 'hint schedule-summary', 'aria-live': 'polite' });
  const details = h('div', { class: 'schedule-details' }, h('div', { class: 'schedule-grid' }, zone.row, hour.row, minute.row), summary);

  function sync() {
    details.hidden = kind.control.value === '';
    summary.textContent = kind.control.value
      ? `Every day at ${pad(Number(hour.control.value))}:${pad(Number(minute.control.value))} in ${zone.control.value || '…'}. A time that a summer-time change skips runs once, shifted by the change.`
      : '';
  }
  for (const c of [kind.control, zone.control, hour.control, minute.control]) {
    c.addEventListener('input', sync);
    c.addEventListener('change', sync);
  }
  sync();

  return {
    node: h('div', { class: 'stack' }, kind.row, details),
    value: () =>
      kind.control.value
        ? { kind: 'daily' as const, timezone: zone.control.value.trim(), hour: Number(hour.control.value), minute: Number(minute.control.value) }
        : null,
    attach(errors) {
      errors
        .add('schedule', kind.handle)
        .add('schedule.kind', kind.handle)
        .add('schedule.timezone', zone.handle)
        .add('schedule.hour', hour.handle)
        .add('schedule.minute', minute.handle);
    },
  };
}
