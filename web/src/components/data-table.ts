import { count, h } from '../dom.js';
import type { DataPreview } from '../types.js';

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** A preview table in a keyboard-scrollable region, with a caption saying how much is shown. */
export function dataTable(preview: DataPreview, label: string): HTMLElement {
  const columns = preview.fields.map((f) => f.name);
  for (const row of preview.rows) for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
  const types = new Map(preview.fields.map((f) => [f.name, f.type]));
  const total = preview.row_count ?? null;
  const caption =
    total !== null
      ? `${label}: ${count(preview.preview_row_count)} of ${count(total)} rows${preview.truncated ? ' (a sample)' : ''}`
      : `${label}: first ${count(preview.preview_row_count)} rows${preview.truncated ? ' (more exist)' : ''}`;
  if (!preview.rows.length) return h('p', { class: 'empty' }, `${label}: the layer has no rows.`);
  return h(
    'div',
    { class: 'table-wrap preview-table', role: 'region', 'aria-label': caption, tabindex: '0' },
    h(
      'table',
      { class: 'table compact' },
      h('caption', null, caption),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          columns.map((c) => h('th', { scope: 'col', title: c }, c, types.get(c) ? h('span', { class: 'col-type' }, types.get(c)!) : null)),
        ),
      ),
      h(
        'tbody',
        null,
        preview.rows.map((row) =>
          h(
            'tr',
            null,
            columns.map((c) => {
              const text = cell(row[c]);
              // A value longer than the cell shows is cut with an ellipsis; its title holds all of it.
              return h('td', { class: typeof row[c] === 'number' ? 'num' : null, title: text.length > 24 ? text : null }, text);
            }),
          ),
        ),
      ),
    ),
  );
}
