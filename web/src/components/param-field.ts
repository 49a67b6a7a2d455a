/**
 * One form field per JSON Schema property of a transformation's parameters: enums become
 * selects, booleans checkboxes, numbers number inputs with the schema's bounds, string lists a
 * comma-separated input, fixed-length number tuples (bbox) one input per item. Anything else
 * falls back to a JSON text area, so a new catalog entry never needs new UI code.
 */
import { h, uid } from '../dom.js';
import { groupError, labelled, type Control, type FieldHandle, type FieldOptions } from '../forms.js';
import type { JsonSchema } from '../types.js';

export interface ParamField {
  name: string;
  node: HTMLElement;
  /** The value to send, or undefined to leave the parameter out (server default applies). */
  read(): unknown;
  write(value: unknown): void;
  handle: FieldHandle;
}

const ACRONYMS: Record<string, string> = {
  crs: 'CRS',
  sql: 'SQL',
  id: 'id',
  bbox: 'Bounding box',
  srid: 'SRID',
  url: 'URL',
  ssl: 'SSL',
  tls: 'TLS',
  sas: 'SAS',
  api: 'API',
  json: 'JSON',
  sha256: 'SHA-256',
};

export function humanize(name: string): string {
  const words = name.split('_').map((w) => ACRONYMS[w] ?? w);
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

const typeOf = (s: JsonSchema): string | undefined => (Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type);

function hintFor(schema: JsonSchema, extra?: string, label?: string): string | undefined {
  const parts: string[] = [];
  // "Schema" under a field labelled Schema says nothing more.
  if (schema.description && schema.description.toLowerCase() !== label?.toLowerCase()) parts.push(schema.description.replace(/\.?$/, '.'));
  if (extra) parts.push(extra);
  // A description that already names the default ("TCP port (default 5432)") says it once.
  const emptyDefault =
    (Array.isArray(schema.default) && schema.default.length === 0) ||
    (typeof schema.default === 'object' && schema.default !== null && Object.keys(schema.default).length === 0) ||
    schema.default === '';
  if (schema.default !== undefined && !emptyDefault && !/default/i.test(schema.description ?? '')) {
    parts.push(`Default: ${Array.isArray(schema.default) ? schema.default.join(', ') : String(schema.default)}.`);
  }
  return parts.length ? parts.join(' ') : undefined;
}

export interface ParamFieldOptions {
  required: boolean;
  example?: unknown;
  /** Column names of the current layer, offered as suggestions where a column is asked for. */
  columns?: string[];
  idPrefix?: string;
}

/**
 * A field of one labelled control (with the column suggestions, when given): shown with what
 * `write` puts in it for no value (the schema's default), read as `read` says.
 */
function single(
  name: string,
  control: Control,
  field: FieldOptions,
  write: (value: unknown) => void,
  read: () => unknown,
  datalist: HTMLElement | null = null,
): ParamField {
  const f = labelled(control, field);
  if (datalist) f.row.append(datalist);
  write(undefined);
  return { name, node: f.row, handle: f.handle, write, read };
}

export function paramField(name: string, schema: JsonSchema, options: ParamFieldOptions): ParamField {
  const label = humanize(name);
  const type = typeOf(schema);
  const id = uid(options.idPrefix ?? 'param');
  const wantsColumn = /column/i.test(schema.description ?? '') || /column/i.test(typeof schema.items === 'object' ? (schema.items.description ?? '') : '');
  const datalist =
    wantsColumn && options.columns?.length
      ? h(
          'datalist',
          { id: `${id}-columns` },
          options.columns.map((c) => h('option', { value: c })),
        )
      : null;
  const placeholder =
    options.example !== undefined && options.example !== null
      ? `e.g. ${Array.isArray(options.example) ? options.example.join(', ') : String(options.example)}`
      : undefined;

  // enum → select
  if (schema.enum?.every((v) => typeof v === 'string' || typeof v === 'number')) {
    const blank = !options.required && schema.default === undefined;
    const control = h(
      'select',
      { id, name },
      blank ? h('option', { value: '' }, '—') : null,
      schema.enum.map((v) => h('option', { value: String(v) }, String(v))),
    );
    return single(
      name,
      control,
      { label, required: options.required, hint: hintFor(schema, undefined, label) },
      (v) => (control.value = v === undefined || v === null ? (schema.default !== undefined ? String(schema.default) : '') : String(v)),
      () => (control.value === '' ? undefined : (schema.enum!.find((v) => String(v) === control.value) ?? control.value)),
    );
  }

  if (type === 'boolean') {
    const control = h('input', { id, name, type: 'checkbox' });
    return single(
      name,
      control,
      { label, hint: hintFor(schema, undefined, label) },
      (v) => (control.checked = v === undefined ? schema.default === true : v === true),
      () => control.checked,
    );
  }

  if (type === 'number' || type === 'integer') {
    const control = h('input', {
      id,
      name,
      type: 'number',
      inputmode: type === 'integer' ? 'numeric' : 'decimal',
      step: type === 'integer' ? '1' : 'any',
      min: schema.minimum ?? null,
      max: schema.maximum ?? null,
      placeholder,
    });
    const bounds =
      schema.exclusiveMinimum !== undefined
        ? `Greater than ${schema.exclusiveMinimum}.`
        : schema.minimum !== undefined && schema.maximum !== undefined
          ? `From ${schema.minimum} to ${schema.maximum}.`
          : undefined;
    return single(
      name,
      control,
      { label, required: options.required, hint: hintFor(schema, bounds, label) },
      (v) => (control.value = typeof v === 'number' ? String(v) : schema.default !== undefined ? String(schema.default) : ''),
      () => {
        const raw = control.value.trim();
        if (raw === '') return control.validity.badInput ? 'not a number' : undefined;
        const n = Number(raw);
        return Number.isFinite(n) ? n : raw;
      },
    );
  }

  if (type === 'array' && schema.prefixItems?.length && schema.prefixItems.every((s) => typeOf(s) === 'number' || typeOf(s) === 'integer')) {
    // A fixed tuple of numbers, e.g. a bbox "[min_x, min_y, max_x, max_y]": one input per item.
    const names = /^\[(.*)\]$/
      .exec(schema.description ?? '')?.[1]
      ?.split(',')
      .map((s) => s.trim());
    const labels = names?.length === schema.prefixItems.length ? names : schema.prefixItems.map((_, i) => `${label} ${i + 1}`);
    const example = Array.isArray(options.example) ? options.example : [];
    const inputs = schema.prefixItems.map((_, i) =>
      h('input', {
        id: `${id}-${i}`,
        type: 'number',
        step: 'any',
        inputmode: 'decimal',
        placeholder: example[i] !== undefined ? `e.g. ${String(example[i])}` : undefined,
      }),
    );
    const set = h(
      'fieldset',
      { class: 'field tuple', id },
      h('legend', null, label, options.required ? h('span', { class: 'required' }, ' (required)') : null),
      schema.description && !names ? h('p', { class: 'hint' }, schema.description) : null,
      h(
        'div',
        { class: 'tuple-items' },
        inputs.map((inp, i) => h('div', { class: 'tuple-item' }, h('label', { for: inp.id }, labels[i]!), inp)),
      ),
    );
    const handle = groupError(set);
    return {
      name,
      node: set,
      handle,
      write: (v: unknown) =>
        inputs.forEach((inp, i) => {
          inp.value = Array.isArray(v) && typeof v[i] === 'number' ? String(v[i]) : '';
        }),
      read: () => {
        const raw = inputs.map((inp) => inp.value.trim());
        if (raw.every((r) => r === '')) return undefined;
        return raw.map((r) => (r === '' ? null : Number(r)));
      },
    };
  }

  if (type === 'array' && typeof schema.items === 'object' && ['string', 'number', 'integer'].includes(typeOf(schema.items) ?? '')) {
    const numeric = typeOf(schema.items) !== 'string';
    const control = h('input', { id, name, type: 'text', autocomplete: 'off', placeholder, list: datalist ? datalist.id : null });
    return single(
      name,
      control,
      { label, required: options.required, hint: hintFor(schema, 'Separate several values with commas.', label) },
      (v) => (control.value = Array.isArray(v) ? v.join(', ') : Array.isArray(schema.default) ? schema.default.join(', ') : ''),
      () => {
        const items = control.value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        if (!items.length) return options.required ? [] : undefined;
        return numeric ? items.map((s) => (Number.isFinite(Number(s)) ? Number(s) : s)) : items;
      },
      datalist,
    );
  }

  if (type === 'string') {
    const long = (schema.maxLength ?? 0) > 1000 && /expression|sql|where|select|query|body/i.test(`${name} ${schema.description ?? ''}`);
    const control = long
      ? h('textarea', { id, name, rows: '2', class: 'mono', spellcheck: 'false', placeholder })
      : h('input', {
          id,
          name,
          type: 'text',
          autocomplete: 'off',
          spellcheck: 'false',
          placeholder,
          maxlength: schema.maxLength ?? null,
          list: datalist ? datalist.id : null,
        });
    return single(
      name,
      control,
      { label, required: options.required, hint: hintFor(schema, undefined, label) },
      (v) => (control.value = typeof v === 'string' ? v : typeof schema.default === 'string' ? schema.default : ''),
      () => (control.value === '' ? undefined : control.value),
      datalist,
    );
  }

  // Unknown shape: edit it as JSON.
  const control = h('textarea', { id, name, rows: '3', class: 'mono', spellcheck: 'false' });
  return single(
    name,
    control,
    { label, required: options.required, hint: hintFor(schema, 'A JSON value.', label) },
    (v) => (control.value = v === undefined ? (schema.default !== undefined ? JSON.stringify(schema.default) : '') : JSON.stringify(v)),
    () => {
      if (!control.value.trim()) return undefined;
      try {
        return JSON.parse(control.value) as unknown;
      } catch {
        return control.value;
      }
    },
  );
}
