/*
 * What the browse helpers of the Source and Destination pickers share (PostGIS discovery, the
 * hub, GeoServer and GeoNode, QFieldCloud and Mergin Maps projects): a failure in words, the
 * "Use" button, and the compact table their lists are shown in.
 */
import { ApiError, plainMessage } from '../../api.js';
import { h, replace, uid } from '../../dom.js';
import { busy, statusLine } from '../../forms.js';
import { columnHeads, tableRegion } from '../table-region.js';

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
  const region = tableRegion(
    caption,
    { class: 'table compact', 'data-testid': options.testId },
    columnHeads(options.buttons ? [...headings, h('span', { class: 'visually-hidden' }, options.buttons)] : headings),
    Array.isArray(rows) ? h('tbody', null, rows) : rows,
  );
  region.hidden = !!options.hidden;
  return region;
}

type StatusLine = ReturnType<typeof statusLine>;

export interface TwoStepBrowserOptions {
  testId: string;
  /** The select's label ("Schema", "Workspace") and its one option before the first load. */
  label: string;
  placeholder: string;
  /** The button that loads the first step ("Browse the database"). */
  browseLabel: string;
  failure: (error: unknown) => string;
  /** The first step: the names to choose from, the select's first option, what to say, one to open at once. */
  parents(): Promise<{ names: string[]; prompt: string; note: string; open?: string }>;
  /** What the status line says while one parent's children are listed. */
  listing: (parent: string) => string;
  /** The second step: the children of one parent (null: none to show); it says how many on `status`. */
  children(parent: string, status: StatusLine): Promise<Node | null>;
}

/**
 * A browser in two steps (a database's schemas, then the tables of one; a GeoServer's workspaces,
 * then the layers of one): a button loads the first step into a select, choosing lists the second.
 */
export function twoStepBrowser(o: TwoStepBrowserOptions): HTMLElement {
  const selectId = uid(o.label.toLowerCase());
  const parentSelect = h('select', { id: selectId, disabled: true }, h('option', { value: '' }, o.placeholder));
  const browse = h('button', { type: 'button', class: 'button secondary' }, o.browseLabel);
  const status = statusLine('status small');
  const list = h('div', { class: 'discover-tables' });

  async function loadParents() {
    status.set('');
    try {
      const parents = await busy(browse, 'Connecting…', () => o.parents());
      replace(
        parentSelect,
        h('option', { value: '' }, parents.prompt),
        parents.names.map((name) => h('option', { value: name }, name)),
      );
      parentSelect.disabled = parents.names.length === 0;
      status.set(parents.note, 'ok');
      if (parents.open) {
        parentSelect.value = parents.open;
        await loadChildren(parents.open);
      }
    } catch (error) {
      status.set(o.failure(error), 'error');
    }
  }

  async function loadChildren(parent: string) {
    replace(list);
    if (!parent) return;
    status.set(o.listing(parent), 'busy');
    try {
      replace(list, await o.children(parent, status));
    } catch (error) {
      status.set(o.failure(error), 'error');
    }
  }

  browse.addEventListener('click', () => void loadParents());
  parentSelect.addEventListener('change', () => void loadChildren(parentSelect.value));
  return h(
    'div',
    { class: 'discover stack', 'data-testid': o.testId },
    h('div', { class: 'inline align-end' }, browse, h('div', { class: 'field' }, h('label', { for: selectId }, o.label), parentSelect)),
    status.node,
    list,
  );
}
