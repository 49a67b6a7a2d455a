/**
 * The browse helpers of GeoServer and GeoNode connections in the Source/Destination pickers:
 * GeoServer's workspaces, then the layers and stores of one (GET …/geoserver/…), and GeoNode's
 * datasets with search and paging (GET …/geonode/datasets). "Use" fills the selector or target.
 */
import { get, query } from '../../api.js';
import { h, replace, uid } from '../../dom.js';
import { busy, statusLine } from '../../forms.js';
import { browseTable, failure, twoStepBrowser, useButton } from './browse.js';

interface Named {
  name: string;
}

export interface GeoserverBrowserOptions {
  /** `/sources/src_…` or `/destinations/dst_…` */
  connectionPath: string;
  onPick: (layer: { workspace: string; layer: string; store: string | null }) => void;
}

export function geoserverBrowser(options: GeoserverBrowserOptions): HTMLElement {
  const workspacePath = (workspace: string) => `${options.connectionPath}/geoserver/workspaces/${encodeURIComponent(workspace)}`;
  return twoStepBrowser({
    testId: 'geoserver-browser',
    label: 'Workspace',
    placeholder: 'Load the workspaces first',
    browseLabel: 'Browse the GeoServer',
    failure,
    async parents() {
      const d = await get<{ items: Named[] }>(`${options.connectionPath}/geoserver/workspaces`);
      return {
        names: d.items.map((w) => w.name),
        prompt: d.items.length ? 'Choose a workspace…' : 'No workspaces',
        note: `${d.items.length} workspace${d.items.length === 1 ? '' : 's'}.`,
      };
    },
    listing: (workspace) => `Listing the layers of ${workspace}…`,
    async children(workspace, status) {
      const layers = await get<{ items: (Named & { qualified_name: string })[] }>(`${workspacePath(workspace)}/layers`);
      const stores = await get<{ items: Named[] }>(`${workspacePath(workspace)}/stores`);
      const storeNames = new Set(stores.items.map((s) => s.name));
      status.set(
        `${layers.items.length} layer${layers.items.length === 1 ? '' : 's'} and ${stores.items.length} store${stores.items.length === 1 ? '' : 's'} in ${workspace}.`,
        'ok',
      );
      if (!layers.items.length) return null;
      return browseTable(
        `Layers of ${workspace}`,
        ['Layer'],
        layers.items.map((l) =>
          h(
            'tr',
            { 'data-layer': l.qualified_name },
            h('th', { scope: 'row' }, l.qualified_name),
            h(
              'td',
              null,
              useButton(`Use ${l.qualified_name}`, () => {
                options.onPick({ workspace, layer: l.name, store: storeNames.has(l.name) ? l.name : null });
                status.set(`${l.qualified_name} chosen.`, 'ok');
              }),
            ),
          ),
        ),
        { buttons: 'Use' },
      );
    },
  });
}

export interface GeonodeBrowserOptions {
  connectionPath: string;
  onPick: (dataset: { id: string; title: string | null }) => void;
}

interface DatasetPage {
  items: { id: string; name: string | null; alternate: string | null; title: string | null; page_url: string | null }[];
  total: number | null;
  page: number;
  page_size: number;
}

export function geonodeBrowser(options: GeonodeBrowserOptions): HTMLElement {
  const searchId = uid('search');
  const search = h('input', { id: searchId, type: 'search', placeholder: 'Title, abstract or name' });
  const go = h('button', { type: 'button', class: 'button secondary' }, 'Search the datasets');
  const status = statusLine('status small');
  const list = h('div', { class: 'discover-tables' });
  const PAGE_SIZE = 20;

  async function load(page: number) {
    status.set('');
    try {
      const term = search.value.trim();
      const d = await busy(go, 'Searching…', () =>
        get<DatasetPage>(
          `${options.connectionPath}/geonode/datasets${query({ page: String(page), page_size: String(PAGE_SIZE), ...(term ? { search: term } : {}) })}`,
        ),
      );
      status.set(`${d.total ?? d.items.length} dataset${d.total === 1 ? '' : 's'}${d.total && d.total > PAGE_SIZE ? `, page ${page}` : ''}.`, 'ok');
      const more = d.total !== null && page * PAGE_SIZE < d.total;
      replace(
        list,
        d.items.length
          ? browseTable(
              'Datasets',
              ['Dataset', 'Name'],
              d.items.map((x) =>
                h(
                  'tr',
                  { 'data-dataset': x.id },
                  h('th', { scope: 'row' }, x.page_url ? h('a', { href: x.page_url, target: '_blank', rel: 'noopener' }, x.title ?? x.id) : (x.title ?? x.id)),
                  h('td', null, x.alternate ?? x.name ?? ''),
                  h(
                    'td',
                    null,
                    useButton(`Use ${x.title ?? x.id}`, () => {
                      options.onPick({ id: x.id, title: x.title });
                      status.set(`${x.title ?? x.id} chosen.`, 'ok');
                    }),
                  ),
                ),
              ),
              { buttons: 'Use' },
            )
          : null,
        h(
          'div',
          { class: 'inline' },
          page > 1 ? h('button', { type: 'button', class: 'button secondary small', onclick: () => void load(page - 1) }, 'Previous') : null,
          more ? h('button', { type: 'button', class: 'button secondary small', onclick: () => void load(page + 1) }, 'Next') : null,
        ),
      );
    } catch (error) {
      status.set(failure(error), 'error');
    }
  }

  go.addEventListener('click', () => void load(1));
  return h(
    'div',
    { class: 'discover stack', 'data-testid': 'geonode-browser' },
    h('div', { class: 'inline align-end' }, h('div', { class: 'field' }, h('label', { for: searchId }, 'Search'), search), go),
    status.node,
    list,
  );
}
