/*
 * What the browse helpers of the Source and Destination pickers share (PostGIS discovery, the
 * hub, GeoServer and GeoNode, QFieldCloud and Mergin Maps projects): a failure in words, the
 * "Use" button, and the compact table their lists are shown in.
 */
import { ApiError, plainMessage } from '../../api.js';
import { h } from '../../dom.js';

/** The error of a browse call, with the classified reason of a remote failure when the server gives one. */
export function failure(error: unknown): string {
  if (error instanceof ApiError && typeof error.details.reason === 'string') return `${error.message} (${error.details.reason.replace(/_/g, ' ')})`;
  return plainMessage(error);
}

/** A small "Use" button (its label says what it uses). */
export const useButton = (label: string, onclick: () => void, text = 'Use') =>
  h('button', { type: 'button', class: 'button secondary small', 'aria-label': label, onclick }, text);

/**
 * A compact table in a keyboard-scrollable region named `caption`: `buttons` names a last column
 * of buttons (screen readers hear it, the eye does not see it); `hidden` until there is something to show.
 */
export function browseTable(
  caption: string,
  headings: string[],
  rows: HTMLElement | HTMLElement[],
  options: { buttons?: string | undefined; hidden?: boolean; testId?: string } = {},
): HTMLElement {
  return h(
    'div',
    { class: 'table-wrap', role: 'region', 'aria-label': caption, tabindex: '0', hidden: options.hidden },
    h(
      'table',
      { class: 'table compact', 'data-testid': options.testId },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          headings.map((t) => h('th', { scope: 'col' }, t)),
          options.buttons ? h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, options.buttons)) : null,
        ),
      ),
      Array.isArray(rows) ? h('tbody', null, rows) : rows,
    ),
  );
}
