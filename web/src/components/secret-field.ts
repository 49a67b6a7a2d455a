/**
 * A write-only secret of a connection (a password, a secret key, a private key). The server never
 * sends the value back, only `has_<field>`; so a stored secret shows "Stored" with Replace and
 * Clear, and the form sends the field only when it changes: a new value replaces it, null clears
 * it, leaving it out keeps it (docs/api-conventions.md).
 */
import { h, uid } from '../dom.js';
import { labelled, type FieldHandle } from '../forms.js';
import type { JsonSchema } from '../types.js';
import { humanize } from './param-field.js';

export interface SecretField {
  name: string;
  node: HTMLElement;
  /** undefined: keep what is stored (or nothing); a string: set it; null: clear it. */
  read(): string | null | undefined;
  /** True while a stored value is kept as it is (a draft test cannot use it). */
  keepsStored(): boolean;
  handle: FieldHandle;
}

type State = 'keep' | 'replace' | 'clear' | 'new';

export function secretField(name: string, schema: JsonSchema, options: { required: boolean; stored: boolean; idPrefix?: string }): SecretField {
  const label = humanize(name);
  const description = (schema.description ?? '').replace(/\s*\(secret: write-only\)\s*$/, '');
  // Keys and credential files span several lines; passwords and tokens do not.
  const multiline = /private key|json|pem/i.test(`${name} ${description}`);
  const id = uid(options.idPrefix ?? 'secret');
  const control = multiline
    ? h('textarea', { id, name, rows: '4', class: 'mono masked', spellcheck: 'false', autocomplete: 'off' })
    : h('input', { id, name, type: 'password', autocomplete: 'new-password', spellcheck: 'false' });
  const says = description && description.toLowerCase() !== label.toLowerCase() ? `${description.replace(/\.?$/, '.')} ` : '';
  const hint = `${says}Write-only: the server stores it encrypted and never shows it again.`;
  const field = labelled(control, { label, required: options.required && !options.stored, hint });

  const badge = h('span', { class: 'badge stored', id: `${id}-state` }, 'Stored');
  const replaceButton = h('button', { type: 'button', class: 'button secondary small', 'aria-describedby': `${id}-state` }, 'Replace');
  const clearButton = h('button', { type: 'button', class: 'button danger-quiet small', 'aria-describedby': `${id}-state` }, 'Clear');
  const undoButton = h('button', { type: 'button', class: 'button secondary small' }, 'Keep the stored value');
  const clearNote = h('span', { class: 'hint' }, 'Cleared when you save.');
  const tools = h(
    'div',
    { class: 'secret-state', role: 'group', 'aria-label': `Stored ${label.toLowerCase()}` },
    badge,
    replaceButton,
    clearButton,
    clearNote,
    undoButton,
  );
  field.row.insertBefore(tools, control);

  let state: State = options.stored ? 'keep' : 'new';
  function choose(next: State) {
    state = next;
    render(true);
  }
  function render(focus = false) {
    const stored = state !== 'new';
    tools.hidden = !stored;
    badge.textContent = state === 'clear' ? 'Stored, to be cleared' : 'Stored';
    badge.classList.toggle('clearing', state === 'clear');
    replaceButton.hidden = state !== 'keep';
    clearButton.hidden = state !== 'keep';
    clearNote.hidden = state !== 'clear';
    undoButton.hidden = state === 'keep' || state === 'new';
    control.hidden = state === 'keep' || state === 'clear';
    if (control.hidden) control.value = '';
    if (focus) (control.hidden ? (state === 'clear' ? undoButton : replaceButton) : control).focus();
  }
  replaceButton.addEventListener('click', () => choose('replace'));
  clearButton.addEventListener('click', () => choose('clear'));
  undoButton.addEventListener('click', () => choose('keep'));
  render();

  return {
    name,
    node: field.row,
    handle: field.handle,
    keepsStored: () => state === 'keep',
    read() {
      if (state === 'keep') return undefined;
      if (state === 'clear') return null;
      return control.value === '' ? undefined : control.value;
    },
  };
}
