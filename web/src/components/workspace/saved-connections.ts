import { plainMessage } from '../../api.js';
import type { App } from '../../app.js';
import { h, replace } from '../../dom.js';
import type { Connection, ConnectionKind, Connector } from '../../types.js';
import { allConnections, KINDS } from '../connections/kinds.js';

/**
 * The body of a Workspace panel that works with the saved connections of one kind: "Loading your
 * Sources…", then what `build` makes of the catalogue and every saved one; where none is saved
 * yet, a link to add one (`examples`: what one can be; `use`: what it would do here).
 */
export function savedConnectionsBody(
  app: App,
  kind: ConnectionKind,
  words: { examples: string; use: string },
  build: (catalog: Connector[], connections: Connection[]) => Node,
): HTMLElement {
  const info = KINDS[kind];
  const body = h('div', null, h('p', { class: 'empty' }, `Loading your ${info.plural}…`));
  Promise.all([app.connectors(), allConnections(kind)])
    .then(([catalog, connections]) => {
      if (!connections.length) {
        const add = h('a', { href: `#${info.path}/new` }, `Add a ${info.noun}`);
        replace(body, h('p', { class: 'empty' }, `No ${info.plural} saved yet. `, add, ` (${words.examples}) to ${words.use} here.`));
        return;
      }
      replace(body, build(catalog, connections));
    })
    .catch((error) => replace(body, h('p', { class: 'alert', role: 'alert' }, plainMessage(error))));
  return body;
}
