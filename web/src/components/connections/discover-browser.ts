/**
 * PostGIS discovery (GET …/discover): the schemas, then the tables and views of one, with their
 * geometry type. With `onPick`, each table has a "Use" button that fills a selector or target.
 */
import { ApiError, get, plainMessage, query } from '../../api.js';
import { h, replace, uid } from '../../dom.js';
import { busy, statusLine } from '../../forms.js';
import { browseTable, failure as browseFailure, useButton } from './browse.js';
import type { Discovery } from '../../types.js';

export interface DiscoverOptions {
  /** `/sources/src_…` or `/destinations/dst_…` */
  connectionPath: string;
  onPick?: (table: { schema: string; name: string }) => void;
  pickLabel?: string;
}

/** Only PostGIS's own failures carry a reason worth showing here. */
const failure = (error: unknown) => (error instanceof ApiError && error.code === 'postgis_failed' ? browseFailure(error) : plainMessage(error));

export function discoverBrowser(options: DiscoverOptions): HTMLElement {
  const selectId = uid('schema');
  const schemaSelect = h('select', { id: selectId, disabled: true }, h('option', { value: '' }, 'Load the schemas first'));
  const browse = h('button', { type: 'button', class: 'button secondary' }, 'Browse the database');
  const status = statusLine('status small');
  const tables = h('div', { class: 'discover-tables' });

  async function loadSchemas() {
    status.set('');
    try {
      const d = await busy(browse, 'Connecting…', () => get<Discovery>(`${options.connectionPath}/discover`));
      replace(
        schemaSelect,
        h('option', { value: '' }, d.schemas.length ? 'Choose a schema…' : 'No schemas visible to this user'),
        d.schemas.map((s) => h('option', { value: s }, s)),
      );
      schemaSelect.disabled = d.schemas.length === 0;
      status.set(`${d.database} on ${d.host}: ${d.schemas.length} schema${d.schemas.length === 1 ? '' : 's'}.`, 'ok');
      if (d.schemas.includes('public')) {
        schemaSelect.value = 'public';
        await loadTables('public');
      }
    } catch (error) {
      status.set(failure(error), 'error');
    }
  }

  async function loadTables(schema: string) {
    replace(tables);
    if (!schema) return;
    status.set(`Listing the tables of ${schema}…`, 'busy');
    try {
      const d = await get<Discovery>(`${options.connectionPath}/discover${query({ schema })}`);
      const list = d.tables ?? [];
      status.set(`${list.length} table${list.length === 1 ? '' : 's'} and views in ${schema}.`, 'ok');
      if (!list.length) return;
      replace(
        tables,
        browseTable(
          `Tables of ${schema}`,
          ['Table or view', 'Geometry'],
          list.map((t) =>
            h(
              'tr',
              { 'data-table': `${t.schema}.${t.name}` },
              h('th', { scope: 'row' }, t.name),
              h('td', null, t.has_geometry ? (t.geometry_type ?? 'geometry') : h('span', { class: 'hint' }, 'none (a plain table)')),
              options.onPick
                ? h(
                    'td',
                    null,
                    useButton(
                      `${options.pickLabel ?? 'Use'} ${t.schema}.${t.name}`,
                      () => {
                        options.onPick!({ schema: t.schema, name: t.name });
                        status.set(`${t.schema}.${t.name} chosen.`, 'ok');
                      },
                      options.pickLabel ?? 'Use',
                    ),
                  )
                : null,
            ),
          ),
          { buttons: options.onPick ? 'Use' : undefined },
        ),
      );
    } catch (error) {
      status.set(failure(error), 'error');
    }
  }

  browse.addEventListener('click', () => void loadSchemas());
  schemaSelect.addEventListener('change', () => void loadTables(schemaSelect.value));

  return h(
    'div',
    { class: 'discover stack', 'data-testid': 'discover' },
    h('div', { class: 'inline align-end' }, browse, h('div', { class: 'field' }, h('label', { for: selectId }, 'Schema'), schemaSelect)),
    status.node,
    tables,
  );
}
