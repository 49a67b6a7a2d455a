/**
 * A form for one JSON Schema object of the connector catalogue (GET /api/v1/connectors): a
 * connection's configuration, a Source's source_resource, a Destination's destination_target.
 * Each property becomes a field through paramField (secrets through secretField); an `anyOf` of
 * objects (a PostGIS table or a query) becomes a choice between alternatives. No connection
 * type has code of its own here: a new type in the catalogue gets its form for free.
 */
import { h, uid } from '../dom.js';
import { groupError, type FieldHandle, type FormErrors } from '../forms.js';
import type { JsonSchema } from '../types.js';
import { humanize, paramField } from './param-field.js';
import { secretField } from './secret-field.js';

export interface SchemaFormOptions {
  /** Names of write-only fields (the connector's `secrets`). */
  secrets?: string[];
  /** The saved configuration: values to show, and `has_<secret>` flags. */
  value?: Record<string, unknown> | null;
  /** Shown above a choice between alternatives (`anyOf`). */
  choiceLabel?: string;
}

export interface SchemaForm {
  node: HTMLElement;
  /** The object to send: fields left empty are left out (the server's defaults apply). */
  read(): Record<string, unknown>;
  /** Sets some fields (discovery fills schema and table), choosing the alternative that has them. */
  fill(values: Record<string, unknown>): void;
  /** Stored secrets kept as they are (a draft test cannot use them). */
  keptSecrets(): string[];
  /** The field of an issue path relative to this object (`host`, `table`); '' is the whole object. */
  resolve(path: string): FieldHandle | undefined;
  /** Places issues under `prefix` (`configuration.host`, `source_resource.table`) on their fields. */
  attach(errors: FormErrors, prefix: string): void;
  /** Names of the fields of the alternative in use. */
  fieldNames(): string[];
}

/** What a paramField and a secretField have in common. */
interface AnyField {
  name: string;
  node: HTMLElement;
  handle: FieldHandle;
  read(): unknown;
  write?(value: unknown): void;
  keepsStored?(): boolean;
}

interface Alternative {
  label: string;
  fields: AnyField[];
  node: HTMLElement;
}

const typeOf = (s: JsonSchema) => (Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type);

function alternativeLabel(schema: JsonSchema, index: number): string {
  const required = schema.required ?? Object.keys(schema.properties ?? {}).slice(0, 1);
  return required.length ? required.map(humanize).join(' and ') : `Option ${index + 1}`;
}

function buildFields(schema: JsonSchema, options: SchemaFormOptions, value: Record<string, unknown>): AnyField[] {
  const required = new Set(schema.required ?? []);
  const secrets = new Set(options.secrets ?? []);
  return Object.entries(schema.properties ?? {}).map(([name, property]): AnyField => {
    if (secrets.has(name)) return secretField(name, property, { required: required.has(name), stored: value[`has_${name}`] === true });
    const field = paramField(name, property, { required: required.has(name) });
    if (name in value) field.write(value[name]);
    return field;
  });
}

function readFields(fields: AnyField[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const v = f.read();
    if (v !== undefined) out[f.name] = v;
  }
  return out;
}

export function schemaForm(schema: JsonSchema, options: SchemaFormOptions = {}): SchemaForm {
  const value = options.value ?? {};
  const variants = (schema.anyOf ?? schema.oneOf ?? []).filter((s) => typeOf(s) === 'object' && s.properties);
  let alternatives: Alternative[];
  let active = 0;
  let node: HTMLElement;
  let group: FieldHandle | null = null;

  if (variants.length > 1) {
    const radioName = uid('choice');
    alternatives = variants.map((variant, i) => {
      const fields = buildFields(variant, options, value);
      return {
        label: alternativeLabel(variant, i),
        fields,
        node: h(
          'div',
          { class: 'schema-fields' },
          fields.map((f) => f.node),
        ),
      };
    });
    // The saved value picks its alternative: the first whose required fields it has.
    const fits = variants.findIndex((v) => (v.required ?? []).length > 0 && (v.required ?? []).every((k) => k in value));
    active = Math.max(fits, 0);
    const radios = alternatives.map((alt, i) => {
      const radio = h('input', { type: 'radio', name: radioName, id: `${radioName}-${i}`, value: String(i), checked: i === active });
      radio.addEventListener('change', () => {
        if (radio.checked) select(i);
      });
      return h('div', { class: 'check-line' }, radio, h('label', { for: radio.id }, alt.label));
    });
    const choice = h('fieldset', { class: 'field choice' }, h('legend', null, options.choiceLabel ?? 'Choose one'), h('div', { class: 'segmented' }, radios));
    node = h(
      'div',
      { class: 'schema-form stack' },
      choice,
      alternatives.map((a) => a.node),
    );
    group = groupError(choice);
    const select = (i: number) => {
      active = i;
      alternatives.forEach((a, j) => {
        a.node.hidden = j !== i;
      });
      (radios[i]!.querySelector('input') as HTMLInputElement).checked = true;
    };
    select(active);
    return api(select);
  }

  const fields = buildFields(schema, options, value);
  alternatives = [
    {
      label: '',
      fields,
      node: h(
        'div',
        { class: 'schema-fields' },
        fields.map((f) => f.node),
      ),
    },
  ];
  node = h('div', { class: 'schema-form' }, alternatives[0]!.node);
  if (!fields.length) node.append(h('p', { class: 'hint' }, 'Nothing to set here.'));
  return api(() => undefined);

  function resolve(path: string): FieldHandle | undefined {
    if (path === '') return group ?? alternatives[active]!.fields[0]?.handle;
    const name = path.split('.')[0];
    return alternatives[active]!.fields.find((f) => f.name === name)?.handle;
  }

  function api(select: (i: number) => void): SchemaForm {
    return {
      node,
      read: () => readFields(alternatives[active]!.fields),
      fill(values) {
        const keys = Object.keys(values);
        const fit = alternatives.findIndex((a) => keys.every((k) => a.fields.some((f) => f.name === k)));
        if (fit >= 0 && fit !== active) select(fit);
        for (const f of alternatives[active]!.fields) if (f.name in values && f.write) f.write(values[f.name]);
        // Listeners (dirty tracking, cleared errors) learn about the change like from typing.
        node.dispatchEvent(new Event('change', { bubbles: true }));
      },
      keptSecrets: () => alternatives[active]!.fields.filter((f) => f.keepsStored?.()).map((f) => f.name),
      fieldNames: () => alternatives[active]!.fields.map((f) => f.name),
      resolve,
      attach(errors, prefix) {
        errors.addResolver((path) => (path === prefix ? resolve('') : path.startsWith(`${prefix}.`) ? resolve(path.slice(prefix.length + 1)) : undefined));
      },
    };
  }
}
