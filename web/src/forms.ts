/**
 * Form machinery shared by every page: labelled fields with hints and an error slot, a summary
 * for the whole form, and the mapping of the envelope's `details.issues[].path`
 * (`body.operations.0.distance`) onto the field that caused it. A new page (Sources,
 * Destinations, Jobs) builds its forms from the same pieces.
 */
import { ApiError, plainMessage } from './api.js';
import { h, replace, uid, type Attrs, type Child } from './dom.js';

/** Something that can show an error next to itself and take focus. */
export interface FieldHandle {
  setError(message: string | null): void;
  focus(): void;
}

export type Control = HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement;

export interface FieldOptions {
  label: Child;
  hint?: Child;
  required?: boolean;
  /** Classes of the wrapping element. */
  class?: string;
}

/** A label, the control, a hint and an error line, wired with for/aria-describedby/aria-invalid. */
export function labelled<C extends Control>(control: C, options: FieldOptions): { row: HTMLElement; control: C; handle: FieldHandle } {
  if (!control.id) control.id = uid('field');
  const hintId = uid('hint');
  const errorId = uid('error');
  const error = h('p', { class: 'field-error', id: errorId, hidden: true });
  const hint = options.hint ? h('p', { class: 'hint', id: hintId }, options.hint) : null;
  const describe = () => [hint ? hintId : null, error.hidden ? null : errorId].filter(Boolean).join(' ');
  if (hint) control.setAttribute('aria-describedby', hintId);
  if (options.required) control.setAttribute('aria-required', 'true');
  const isCheck = control instanceof HTMLInputElement && (control.type === 'checkbox' || control.type === 'radio');
  const label = h('label', { for: control.id }, options.label, options.required ? h('span', { class: 'required' }, ' (required)') : null);
  const row = isCheck
    ? h('div', { class: `field field-check ${options.class ?? ''}` }, h('div', { class: 'check-line' }, control, label), hint, error)
    : h('div', { class: `field ${options.class ?? ''}` }, label, control, hint, error);
  // Editing a field clears its error: the message was about the old value.
  const clearOnEdit = () => {
    if (!error.hidden) handle.setError(null);
  };
  control.addEventListener('input', clearOnEdit);
  control.addEventListener('change', clearOnEdit);
  const handle: FieldHandle = {
    setError(message) {
      error.textContent = message ?? '';
      error.hidden = !message;
      row.classList.toggle('has-error', !!message);
      if (message) control.setAttribute('aria-invalid', 'true');
      else control.removeAttribute('aria-invalid');
      const d = describe();
      if (d) control.setAttribute('aria-describedby', d);
      else control.removeAttribute('aria-describedby');
    },
    focus: () => control.focus(),
  };
  return { row, control, handle };
}

export function input(attrs: Record<string, unknown> = {}): HTMLInputElement {
  return h('input', { type: 'text', ...attrs });
}

export function select(options: { value: string; label: string }[], attrs: Record<string, unknown> = {}): HTMLSelectElement {
  return h(
    'select',
    attrs,
    options.map((o) => h('option', { value: o.value }, o.label)),
  );
}

/** An error area for a whole fieldset or list (no single control to attach to). */
export function groupError(container: HTMLElement): FieldHandle {
  const line = h('p', { class: 'field-error', hidden: true, role: 'alert' });
  container.append(line);
  container.addEventListener('change', () => {
    if (!line.hidden) handle.setError(null);
  });
  const handle: FieldHandle = {
    setError(message) {
      line.textContent = message ?? '';
      line.hidden = !message;
      container.classList.toggle('has-error', !!message);
    },
    focus: () => {
      const target = container.querySelector<HTMLElement>('input, select, textarea, button') ?? container;
      target.focus();
    },
  };
  return handle;
}

type Resolver = (path: string) => FieldHandle | undefined;

/**
 * Shows what a failed request said: each issue next to its field (the longest registered prefix
 * of its path wins), the rest in the summary, and the envelope's message in plain words.
 */
export class FormErrors {
  readonly summary: HTMLElement;
  private readonly fields = new Map<string, FieldHandle>();
  private readonly resolvers: Resolver[] = [];
  private shown: FieldHandle[] = [];

  private fieldOnly = false;

  constructor() {
    this.summary = h('div', { class: 'form-summary', role: 'alert', hidden: true });
  }

  /** Hides a "fields need attention" summary once every marked field has been edited. */
  watch(root: HTMLElement): this {
    const check = () =>
      queueMicrotask(() => {
        if (this.fieldOnly && !this.summary.hidden && !root.querySelector('.has-error')) this.summary.hidden = true;
      });
    root.addEventListener('input', check);
    root.addEventListener('change', check);
    return this;
  }

  /** `path` without the `body.` prefix: `name`, `operations`, `python.script`. */
  add(path: string, handle: FieldHandle): this {
    this.fields.set(path, handle);
    return this;
  }

  /** For dynamic forms (the operation editor): resolves `operations.2.distance` itself. */
  addResolver(resolver: Resolver): this {
    this.resolvers.push(resolver);
    return this;
  }

  clear(): void {
    for (const handle of this.shown) handle.setError(null);
    this.shown = [];
    this.fieldOnly = false;
    this.summary.hidden = true;
    replace(this.summary);
  }

  private find(path: string): FieldHandle | undefined {
    const parts = path.split('.');
    for (let n = parts.length; n > 0; n--) {
      const candidate = parts.slice(0, n).join('.');
      for (const resolve of this.resolvers) {
        const found = resolve(candidate);
        if (found) return found;
      }
      const found = this.fields.get(candidate);
      if (found) return found;
    }
    return undefined;
  }

  /** Shows a local problem (before any request) next to a field. */
  field(path: string, message: string): void {
    const handle = this.find(path);
    if (handle) {
      handle.setError(message);
      this.shown.push(handle);
    }
  }

  show(error: unknown): void {
    this.clear();
    const issues = error instanceof ApiError ? error.issues : [];
    const unplaced: string[] = [];
    const placed: FieldHandle[] = [];
    for (const issue of issues) {
      const path = issue.path.replace(/^(body|query|params)\.?/, '');
      const handle = this.find(path);
      if (handle) {
        if (!placed.includes(handle)) handle.setError(sentence(issue.message));
        placed.push(handle);
      } else {
        unplaced.push(`${path || 'request'}: ${issue.message}`);
      }
    }
    // Errors about one query or body parameter name it in details.parameter (output_format).
    const parameter = error instanceof ApiError && typeof error.details.parameter === 'string' ? error.details.parameter : null;
    if (!issues.length && parameter) {
      const handle = this.find(parameter);
      if (handle) {
        handle.setError(plainMessage(error));
        placed.push(handle);
      }
    }
    this.shown = placed;
    this.fieldOnly = placed.length > 0 && unplaced.length === 0;
    const message =
      issues.length && unplaced.length === 0
        ? placed.length === 1
          ? 'One field needs attention: see the message next to it.'
          : `${new Set(placed).size} fields need attention: see the messages next to them.`
        : plainMessage(error);
    replace(
      this.summary,
      h('p', null, message),
      unplaced.length
        ? h(
            'ul',
            null,
            unplaced.map((u) => h('li', null, u)),
          )
        : null,
    );
    this.summary.hidden = false;
    if (placed[0]) placed[0].focus();
    else this.summary.scrollIntoView({ block: 'nearest' });
  }
}

/** "Invalid input: expected number" → "Invalid input: expected number." */
function sentence(message: string): string {
  // zod's wording for a missing required value
  if (/^Invalid input: expected \w+, received undefined$/.test(message)) return 'Required: fill this in.';
  const m = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(m) ? m : `${m}.`;
}

/** A live status line (polite) for progress and outcomes of async work. */
export function statusLine(className = 'status'): { node: HTMLElement; set(text: Child, kind?: 'info' | 'ok' | 'error' | 'busy'): void } {
  const node = h('div', { class: className, role: 'status', 'aria-live': 'polite' });
  return {
    node,
    set(text, kind = 'info') {
      node.dataset.kind = kind;
      replace(node, text);
    },
  };
}

/** Disables a button while `work` runs and shows `busyLabel` on it. */
export async function busy<T>(button: HTMLButtonElement, busyLabel: string, work: () => Promise<T>): Promise<T> {
  const label = button.textContent;
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  button.textContent = busyLabel;
  try {
    return await work();
  } finally {
    const hadFocus = document.activeElement === document.body || document.activeElement === button;
    button.disabled = false;
    button.removeAttribute('aria-busy');
    button.textContent = label;
    // A disabled button drops focus; give it back so keyboard users stay where they were.
    if (hadFocus && button.isConnected) button.focus();
  }
}

/** A fieldset of a form: its class, its legend, and the fields it groups. */
export const fieldset = (className: string, legend: Child, ...children: Child[]): HTMLFieldSetElement =>
  h('fieldset', { class: className }, h('legend', null, legend), ...children);

/**
 * A form the page checks itself (novalidate) and sends by script: submitting clears the errors
 * shown before and runs `submit` instead of navigating.
 */
export function submitForm(errors: FormErrors, attrs: Attrs, submit: () => Promise<void> | void, ...children: Child[]): HTMLFormElement {
  const onsubmit = (event: Event) => {
    event.preventDefault();
    errors.clear();
    return submit();
  };
  return h('form', { ...attrs, novalidate: true, onsubmit }, ...children);
}
