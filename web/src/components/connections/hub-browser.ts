/**
 * The hub browse helpers (GET …/hub/items, …/hub/folders, …/hub/items/{id}/layers) in the
 * Source and Destination pickers: search the portal, list an item's layers, the user's folders,
 * and fill the selector or target with what was chosen.
 */
import { get, query } from '../../api.js';
import { h, replace, uid } from '../../dom.js';
import { busy, statusLine } from '../../forms.js';
import { browseTable, failure, useButton } from './browse.js';
import type { HubFolders, HubItem, HubItems, HubLayers } from '../../types.js';

export interface HubBrowserOptions {
  /** `/sources/src_…` or `/destinations/dst_…` */
  connectionPath: string;
  /** Destinations also pick a folder, and fill the title of an existing layer. */
  destination: boolean;
  fill: (values: Record<string, unknown>) => void;
}

export function hubBrowser(options: HubBrowserOptions): HTMLElement {
  const searchId = uid('hub-q');
  const q = h('input', { id: searchId, type: 'search', placeholder: 'e.g. parcels, or type:"Feature Service"' });
  const mine = h('input', { type: 'checkbox', id: uid('hub-mine') });
  const search = h('button', { type: 'button', class: 'button secondary' }, 'Search the portal');
  const more = h('button', { type: 'button', class: 'button secondary', hidden: true }, 'Show more');
  const status = statusLine('status small');
  const rows = h('tbody');
  const results = browseTable('Portal items', ['Item', 'Type'], rows, { buttons: 'Use', hidden: true });
  const layers = h('div', { class: 'stack' });
  let next: number | null = null;

  function chosen(item: HubItem) {
    options.fill(options.destination ? { item_id: item.id } : { item_id: item.id });
    status.set(`“${item.title}” chosen.`, 'ok');
  }

  async function showLayers(item: HubItem) {
    status.set(`Listing the layers of “${item.title}”…`, 'busy');
    try {
      const d = await get<HubLayers>(`${options.connectionPath}/hub/items/${encodeURIComponent(item.id)}/layers`);
      status.set(`“${item.title}” has ${d.layers.length} layer${d.layers.length === 1 ? '' : 's'}.`, 'ok');
      replace(
        layers,
        h(
          'ul',
          { class: 'plain' },
          d.layers.map((l) =>
            h(
              'li',
              { class: 'inline' },
              `${l.id}: ${l.name} (${l.geometry_type?.replace('esriGeometry', '') ?? 'table'})`,
              useButton(`Use layer ${l.id} of ${item.title}`, () => {
                options.fill({ item_id: item.id, layer: l.id });
                status.set(`Layer ${l.id} of “${item.title}” chosen.`, 'ok');
              }),
            ),
          ),
        ),
      );
    } catch (error) {
      status.set(failure(error), 'error');
    }
  }

  async function load(start: number) {
    try {
      const page = await busy(start === 1 ? search : more, 'Searching…', () =>
        get<HubItems>(`${options.connectionPath}/hub/items${query({ q: q.value.trim() || undefined, owner_only: mine.checked ? 'true' : undefined, start })}`),
      );
      if (start === 1) replace(rows);
      rows.append(
        ...page.items.map((item) =>
          h(
            'tr',
            { 'data-item': item.id },
            h('th', { scope: 'row' }, item.title, item.owner ? h('span', { class: 'hint' }, ` ${item.owner}`) : null),
            h('td', null, item.type),
            h(
              'td',
              { class: 'inline' },
              useButton(`Use ${item.title}`, () => chosen(item)),
              item.type === 'Feature Service'
                ? h('button', { type: 'button', class: 'button secondary small', onclick: () => void showLayers(item) }, 'Layers')
                : null,
            ),
          ),
        ),
      );
      results.hidden = rows.childElementCount === 0;
      next = page.next_start;
      more.hidden = next === null;
      status.set(`${page.total} item${page.total === 1 ? '' : 's'} on ${page.portal}.`, 'ok');
    } catch (error) {
      status.set(failure(error), 'error');
    }
  }

  const folderList = h('div');
  const folders = options.destination ? h('button', { type: 'button', class: 'button secondary' }, 'List my folders') : null;
  folders?.addEventListener(
    'click',
    () =>
      void (async () => {
        try {
          const d = await busy(folders, 'Loading…', () => get<HubFolders>(`${options.connectionPath}/hub/folders`));
          status.set(`${d.username} has ${d.folders.length} folder${d.folders.length === 1 ? '' : 's'}.`, 'ok');
          replace(
            folderList,
            h(
              'ul',
              { class: 'plain' },
              d.folders.map((f) =>
                h(
                  'li',
                  { class: 'inline' },
                  f.title,
                  useButton(`Use folder ${f.title}`, () => {
                    options.fill({ folder: f.title });
                    status.set(`Folder “${f.title}” chosen.`, 'ok');
                  }),
                ),
              ),
            ),
          );
        } catch (error) {
          status.set(failure(error), 'error');
        }
      })(),
  );

  search.addEventListener('click', () => void load(1));
  more.addEventListener('click', () => next !== null && void load(next));
  q.addEventListener('keydown', (e) => {
    if ((e as KeyboardEvent).key === 'Enter') {
      e.preventDefault();
      void load(1);
    }
  });

  return h(
    'div',
    { class: 'discover stack', 'data-testid': 'hub-browser' },
    h(
      'div',
      { class: 'inline align-end' },
      h('div', { class: 'field' }, h('label', { for: searchId }, 'Search'), q),
      h('label', { class: 'inline' }, mine, ' Only mine'),
      search,
      folders,
    ),
    status.node,
    results,
    more,
    layers,
    folderList,
  );
}
