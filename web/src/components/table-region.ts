import { h, type Attrs, type Child } from '../dom.js';

/**
 * A table in a named, keyboard-scrollable region (a wide table scrolls inside it, not the page):
 * `label` names the region, or `{ labelledBy }` points at the heading that does.
 */
export function tableRegion(label: string | { labelledBy: string }, tableAttrs: Attrs, ...children: Child[]): HTMLDivElement {
  const name = typeof label === 'string' ? { 'aria-label': label } : { 'aria-labelledby': label.labelledBy };
  return h('div', { class: 'table-wrap', role: 'region', ...name, tabindex: '0' }, h('table', tableAttrs, ...children));
}

/** The head of a table: one row of column headers. */
export const columnHeads = (columns: Child[]): HTMLTableSectionElement =>
  h(
    'thead',
    null,
    h(
      'tr',
      null,
      columns.map((c) => h('th', { scope: 'col' }, c)),
    ),
  );
