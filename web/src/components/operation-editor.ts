/**
 * The ordered operation list of Recipes and Workspace pipelines, generated from
 * GET /api/v1/transformations: add from a grouped picker, each step's parameters as form fields,
 * move up/down and remove with buttons (keyboard-operable; focus follows the moved step and a
 * live region says where it went).
 */
import { h, replace, uid } from '../dom.js';
import { groupError, type FieldHandle, type FormErrors } from '../forms.js';
import type { Operation, Transformation } from '../types.js';
import { paramField, type ParamField } from './param-field.js';

const CATEGORY_LABELS: Record<string, string> = { attribute: 'Attributes', filter: 'Rows', geometry: 'Geometry', crs: 'Coordinate system' };

interface Step {
  key: string;
  definition: Transformation | null;
  /** Kept verbatim when the type is not in the catalog (an old Recipe): sent back unchanged. */
  raw: Operation;
  fields: ParamField[];
  node: HTMLElement;
  title: HTMLElement;
  error: FieldHandle;
  up: HTMLButtonElement;
  down: HTMLButtonElement;
  remove: HTMLButtonElement;
}

export interface OperationEditorOptions {
  catalog: Transformation[];
  operations?: Operation[];
  /** Column names offered where a parameter asks for a column. */
  columns?: () => string[];
  /** False on a non-spatial layer: geometry operations are marked as not applicable. */
  hasGeometry?: () => boolean;
  /** Issue paths of this list start with this (`operations`). */
  path?: string;
  onChange?: () => void;
  headingLevel?: 'h3' | 'h4';
}

export interface OperationEditor {
  node: HTMLElement;
  value(): Operation[];
  set(operations: Operation[]): void;
  /** Registers the issue-path resolver (`operations.2.distance`) on a form's error display. */
  attach(errors: FormErrors): void;
  readonly length: number;
}

export function operationEditor(options: OperationEditorOptions): OperationEditor {
  const path = options.path ?? 'operations';
  const byId = new Map(options.catalog.map((t) => [t.id, t]));
  const steps: Step[] = [];
  const list = h('ol', { class: 'op-list' });
  const empty = h('p', { class: 'empty' }, 'No operations yet. Add the first one below; they run from top to bottom.');
  const announce = h('p', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });
  const listError = h('div', { class: 'op-list-error' });
  const listHandle = groupError(listError);
  const level = options.headingLevel ?? 'h3';

  const pickerId = uid('op-picker');
  const categories = [...new Set(options.catalog.map((t) => t.category))];
  const picker = h(
    'select',
    { id: pickerId },
    h('option', { value: '' }, 'Choose an operation…'),
    categories.map((c) =>
      h(
        'optgroup',
        { label: CATEGORY_LABELS[c] ?? c },
        options.catalog.filter((t) => t.category === c).map((t) => h('option', { value: t.id }, t.label)),
      ),
    ),
  );
  const pickerHint = h('p', { class: 'hint', id: `${pickerId}-hint` });
  picker.setAttribute('aria-describedby', pickerHint.id);
  const describePick = () => {
    const t = byId.get(picker.value);
    pickerHint.textContent = t
      ? `${t.description}${t.requires_geometry && options.hasGeometry && !options.hasGeometry() ? ' Needs geometries: this layer has none.' : ''}`
      : '';
  };
  picker.addEventListener('change', describePick);
  const addButton = h('button', { type: 'button', class: 'button secondary' }, 'Add operation');
  addButton.addEventListener('click', () => {
    const t = byId.get(picker.value);
    if (!t) {
      picker.focus();
      pickerHint.textContent = 'Choose an operation from the list first.';
      return;
    }
    const step = createStep({ type: t.id });
    steps.push(step);
    render();
    picker.value = '';
    describePick();
    announce.textContent = `${t.label} added as step ${steps.length}.`;
    (step.fields[0]?.node.querySelector<HTMLElement>('input, select, textarea') ?? step.remove).focus();
    options.onChange?.();
  });

  function createStep(operation: Operation): Step {
    const definition = byId.get(operation.type) ?? null;
    const key = uid('op');
    const props = definition?.parameters.properties ?? {};
    const required = new Set(definition?.parameters.required ?? []);
    const fields = Object.entries(props).map(([name, schema]) => {
      const field = paramField(name, schema, {
        required: required.has(name),
        example: definition?.example[name],
        columns: options.columns?.(),
        idPrefix: `${key}-${name}`,
      });
      if (name in operation) field.write(operation[name]);
      field.node.addEventListener('change', () => options.onChange?.());
      return field;
    });
    const title = h(level, { class: 'op-title', id: `${key}-title` });
    const up = h('button', { type: 'button', class: 'button secondary small icon' }, h('span', { 'aria-hidden': 'true' }, '↑ '), 'Up');
    const down = h('button', { type: 'button', class: 'button secondary small icon' }, h('span', { 'aria-hidden': 'true' }, '↓ '), 'Down');
    const remove = h('button', { type: 'button', class: 'button danger-quiet small' }, 'Remove');
    const body = h(
      'div',
      { class: 'op-body' },
      definition
        ? [
            h('p', { class: 'hint op-description' }, definition.description),
            fields.length
              ? h(
                  'div',
                  { class: 'op-fields' },
                  fields.map((f) => f.node),
                )
              : h('p', { class: 'hint' }, 'No parameters.'),
          ]
        : h('p', { class: 'alert' }, `“${operation.type}” is not in this server's catalog; it is kept as it is: `, h('code', null, JSON.stringify(operation))),
    );
    const node = h(
      'li',
      { class: 'op', 'data-type': operation.type, 'aria-labelledby': title.id },
      h('div', { class: 'op-head' }, title, h('div', { class: 'op-tools', role: 'group', 'aria-label': 'Step actions' }, up, down, remove)),
      body,
    );
    const step: Step = { key, definition, raw: operation, fields, node, title, error: groupError(node), up, down, remove };
    up.addEventListener('click', () => move(step, -1));
    down.addEventListener('click', () => move(step, 1));
    remove.addEventListener('click', () => {
      const i = steps.indexOf(step);
      steps.splice(i, 1);
      render();
      announce.textContent = `${labelOf(step)} removed.`;
      const next = steps[i] ?? steps[i - 1];
      (next ? next.remove : picker).focus();
      options.onChange?.();
    });
    return step;
  }

  const labelOf = (s: Step) => s.definition?.label ?? s.raw.type;

  function move(step: Step, by: -1 | 1) {
    const i = steps.indexOf(step);
    const j = i + by;
    if (j < 0 || j >= steps.length) return;
    steps.splice(i, 1);
    steps.splice(j, 0, step);
    render();
    announce.textContent = `${labelOf(step)} moved to step ${j + 1} of ${steps.length}.`;
    // Keep focus on the button that was pressed, or its twin when the step reached an end.
    const target = by < 0 ? (step.up.disabled ? step.down : step.up) : step.down.disabled ? step.up : step.down;
    target.focus();
    options.onChange?.();
  }

  function render() {
    steps.forEach((s, i) => {
      s.title.textContent = `${i + 1}. ${labelOf(s)}`;
      s.up.disabled = i === 0;
      s.down.disabled = i === steps.length - 1;
      s.up.setAttribute('aria-label', `Move step ${i + 1}, ${labelOf(s)}, up`);
      s.down.setAttribute('aria-label', `Move step ${i + 1}, ${labelOf(s)}, down`);
      s.remove.setAttribute('aria-label', `Remove step ${i + 1}, ${labelOf(s)}`);
    });
    replace(
      list,
      steps.map((s) => s.node),
    );
    empty.hidden = steps.length > 0;
    list.hidden = steps.length === 0;
  }

  function set(operations: Operation[]) {
    steps.splice(0, steps.length, ...operations.map((o) => createStep(o)));
    render();
  }

  set(options.operations ?? []);

  const node = h(
    'div',
    { class: 'op-editor' },
    announce,
    empty,
    list,
    listError,
    h(
      'div',
      { class: 'op-add' },
      h('div', { class: 'field' }, h('label', { for: pickerId }, 'Add an operation'), h('div', { class: 'inline' }, picker, addButton), pickerHint),
    ),
  );

  return {
    node,
    get length() {
      return steps.length;
    },
    value() {
      return steps.map((s) => {
        if (!s.definition) return s.raw;
        const op: Operation = { type: s.definition.id };
        for (const f of s.fields) {
          const v = f.read();
          if (v !== undefined) op[f.name] = v;
        }
        return op;
      });
    },
    set,
    attach(errors: FormErrors) {
      errors.addResolver((p) => {
        if (p === path) return listHandle;
        const m = new RegExp(`^${path.replace('.', '\\.')}\\.(\\d+)(?:\\.([^.]+))?$`).exec(p);
        if (!m) return undefined;
        const step = steps[Number(m[1])];
        if (!step) return undefined;
        if (!m[2]) return step.error;
        return step.fields.find((f) => f.name === m[2])?.handle;
      });
    },
  };
}
