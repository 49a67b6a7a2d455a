import { h } from '../dom.js';

/*
 * Rows the user adds and removes (a Job's parameters, the Jobs it runs after): each row ends with
 * a Remove button, and an "Add …" button appends a fresh row and puts the focus in it.
 */

export interface RowList<E extends { node: HTMLElement }> {
  /** The rows' container. */
  rows: HTMLElement;
  /** The rows in order, without those removed. */
  entries: E[];
  /** The button that adds a row. */
  add: HTMLButtonElement;
  /** Appends a row (its Remove button last). */
  push(entry: E): void;
}

export function rowList<E extends { node: HTMLElement }>(options: {
  class: string;
  addLabel: string;
  /** A fresh row, and the control that gets the focus when the Add button made it. */
  fresh: () => E;
  focus: (entry: E) => HTMLElement;
}): RowList<E> {
  const rows = h('div', { class: `stack ${options.class}` });
  const entries: E[] = [];
  const push = (entry: E) => {
    const remove = h('button', { type: 'button', class: 'button secondary small' }, 'Remove');
    remove.addEventListener('click', () => {
      entries.splice(entries.indexOf(entry), 1);
      entry.node.remove();
    });
    entry.node.append(remove);
    entries.push(entry);
    rows.append(entry.node);
  };
  const add = h('button', { type: 'button', class: 'button secondary small' }, options.addLabel);
  add.addEventListener('click', () => {
    const entry = options.fresh();
    push(entry);
    options.focus(entry).focus();
  });
  return { rows, entries, add, push };
}
