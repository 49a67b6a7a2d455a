/**
 * PostGIS discovery (GET …/discover): the schemas, then the tables and views of one, with their
 * geometry type. With `onPick`, each table has a "Use" button that fills a selector or target.
 */
import { ApiError, get, plainMessage, query } from '../../api.js';
import { h } from '../../dom.js';
import { browseTable, failure as browseFailure, twoStepBrowser, useButton } from './browse.js';
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
  return twoStepBrowser({
    testId: 'discover',
    label: 'Schema',
    placeholder: 'Load the schemas first',
    browseLabel: 'Browse the database',
    failure,
    async parents() {
      const d = await get<Discovery>(`${options.connectionPath}/discover`);
      return {
        names: d.schemas,
        prompt: d.schemas.length ? 'Choose a schema…' : 'No schemas visible to this user',
        note: `${d.database} on ${d.host}: ${d.schemas.length} schema${d.schemas.length === 1 ? '' : 's'}.`,
        open: d.schemas.includes('public') ? 'public' : undefined,
      };
    },
    listing: (schema) => `Listing the tables of ${schema}…`,
    async children(schema, status) {
      const d = await get<Discovery>(`${options.connectionPath}/discover${query({ schema })}`);
      const list = d.tables ?? [];
      status.set(`${list.length} table${list.length === 1 ? '' : 's'} and views in ${schema}.`, 'ok');
      if (!list.length) return null;
      return browseTable(
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
      );
    },
  });
}
