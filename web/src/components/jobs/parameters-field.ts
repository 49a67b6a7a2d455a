/**
 * Run-time parameters of a Job: a name, a type, a default, the values allowed and a note each.
 * They are used as {{name}} in what the Job reads, its SQL and where it writes; Run Now, the
 * webhook and the CLI give values, and a Run records the values it ran with.
 */
import { h, uid } from '../../dom.js';
import { fieldset, groupError, type FormErrors } from '../../forms.js';
import { rowList } from '../row-list.js';
import type { Job, JobBody } from '../../types.js';

type Declaration = NonNullable<JobBody['parameters']>[number];
const TYPES: Declaration['type'][] = ['string', 'integer', 'number', 'boolean', 'date'];

/** Text typed into a default or choice, as the declared type's JSON (the server checks it). */
export function typedValue(type: Declaration['type'], text: string): string | number | boolean {
  const t = text.trim();
  if ((type === 'integer' || type === 'number') && t !== '' && !Number.isNaN(Number(t))) return Number(t);
  if (type === 'boolean' && (t === 'true' || t === 'false')) return t === 'true';
  return t;
}

export interface ParametersField {
  node: HTMLElement;
  value(): Declaration[];
  attach(errors: FormErrors): void;
}

export function parametersField(initial: Job['parameters'] | undefined): ParametersField {
  function row(p?: Job['parameters'][number]) {
    const id = uid('param');
    const name = h('input', {
      type: 'text',
      id: `${id}-name`,
      class: 'mono',
      autocomplete: 'off',
      spellcheck: 'false',
      placeholder: 'region',
      value: p?.name ?? '',
    });
    const type = h(
      'select',
      { 'aria-label': 'Type' },
      TYPES.map((t) => h('option', { value: t }, t)),
    );
    type.value = p?.type ?? 'string';
    const fallback = h('input', {
      type: 'text',
      'aria-label': 'Default',
      placeholder: 'default (empty: required)',
      value: p?.default === null || p?.default === undefined ? '' : String(p.default),
    });
    const choices = h('input', {
      type: 'text',
      'aria-label': 'Allowed values',
      placeholder: 'allowed values, comma separated',
      value: (p?.choices ?? []).join(', '),
    });
    const note = h('input', { type: 'text', 'aria-label': 'Description', placeholder: 'what it is for', value: p?.description ?? '' });
    const node = h(
      'div',
      { class: 'parameter-row' },
      h('label', { for: name.id, class: 'visually-hidden' }, 'Parameter name'),
      name,
      type,
      fallback,
      choices,
      note,
    );
    return { name, type, fallback, choices, note, node };
  }
  const list = rowList({ class: 'parameter-rows', addLabel: 'Add a parameter', fresh: () => row(), focus: (e) => e.name });
  for (const p of initial ?? []) list.push(row(p));
  const { rows, add, entries } = list;
  const node = fieldset(
    'field parameters',
    'Parameters',
    h(
      'p',
      { class: 'hint' },
      'Values given when a Run starts (Run Now, the webhook, the CLI). Use them as {{name}} in what to read, the SQL (as a value: no quotes around it) and where to write. A parameter without a default must be given; a scheduled or triggered Run uses the defaults.',
    ),
    rows,
    add,
  );
  const error = groupError(node);
  return {
    node,
    value: () =>
      entries
        .filter((e) => e.name.value.trim())
        .map((e) => {
          const type = e.type.value as Declaration['type'];
          const choices = e.choices.value
            .split(',')
            .map((c) => c.trim())
            .filter(Boolean)
            .map((c) => typedValue(type, c));
          return {
            name: e.name.value.trim(),
            type,
            default: e.fallback.value.trim() === '' ? null : typedValue(type, e.fallback.value),
            description: e.note.value.trim() || null,
            choices: choices.length ? choices : null,
          };
        }),
    attach(errors) {
      errors.add('parameters', error);
      errors.addResolver((path) => (path.startsWith('parameters') ? error : undefined));
    },
  };
}
