import { bytes, type Child, h, replace, time } from '../../dom.js';
import type { Workspace } from '../../types.js';
import { crsByCode, crsView } from '../crs.js';

/** The Workspace's headline facts: format, kind, size, CRS, status, expiry. */
export function workspaceFacts(initial: Workspace): { node: HTMLElement; render(ws: Workspace): void } {
  const node = h('dl', { class: 'facts' });
  function render(ws: Workspace) {
    const fact = (term: string, value: Child) => h('div', null, h('dt', null, term), h('dd', null, value));
    replace(
      node,
      fact('Format', `${ws.format}${ws.driver && ws.driver !== ws.format ? ` (${ws.driver})` : ''}`),
      fact('Kind', ws.dataset_type === 'vector' ? 'Vector' : 'Raster'),
      fact('Size', bytes(ws.size)),
      fact('CRS', ws.crs_info ? crsView(ws.crs, ws.crs_info) : ws.crs ? crsByCode(ws.crs) : 'Not set'),
      fact('Status', ws.status),
      fact('Expires', time(ws.expires_at)),
    );
  }
  render(initial);
  return { node, render };
}
