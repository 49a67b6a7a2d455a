/**
 * Choosing a saved Source or Destination and saying what to use in it: the per-use selector
 * (source_resource) or target (destination_target), a form generated from the connector's JSON
 * Schema, with the PostGIS discovery browser filling schema and table (the hub browser: item,
 * layer, folder). The Workspace import and
 * delivery and the Job editor all use it.
 */
import { h, replace, uid } from '../../dom.js';
import { labelled, type FieldHandle, type FormErrors } from '../../forms.js';
import type { Connection, ConnectionKind, Connector } from '../../types.js';
import { schemaForm, type SchemaForm } from '../schema-form.js';
import { discoverBrowser } from './discover-browser.js';
import { geonodeBrowser, geoserverBrowser } from './map-server-browser.js';
import { projectBrowser } from './project-browser.js';
import { hubBrowser } from './hub-browser.js';
import { connectionSummary, KINDS } from './kinds.js';

export interface ConnectionPickerOptions {
  kind: ConnectionKind;
  catalog: Connector[];
  connections: Connection[];
  selectedId?: string | null;
  /** The saved selector or target, shown when its connection is the selected one. */
  value?: Record<string, unknown> | null;
  /** Connections whose type cannot do this yet are listed but disabled. */
  need?: 'import' | 'deliver';
  /** Heading level of "What to read" / "Where to write". */
  headingLevel?: 'h3' | 'h4';
}

export interface ConnectionPicker {
  node: HTMLElement;
  connection(): Connection | undefined;
  connector(): Connector | undefined;
  /** The selector or target object to send. */
  selector(): Record<string, unknown>;
  /** Issue paths: `source_id`/`destination_id` on the select, `source_resource.*`/`destination_target.*` on the form. */
  attach(errors: FormErrors): void;
  onChange(listener: () => void): void;
}

/** A closed box with one browser of the connection (tables, layers, datasets, projects, a portal). */
const browseBox = (summary: string, browser: Node) => h('details', { class: 'discover-box' }, h('summary', null, summary), browser);

export function connectionPicker(options: ConnectionPickerOptions): ConnectionPicker {
  const info = KINDS[options.kind];
  const idField = options.kind === 'source' ? 'source_id' : 'destination_id';
  const selectorField = options.kind === 'source' ? 'source_resource' : 'destination_target';
  const byType = new Map(options.catalog.map((c) => [c.type, c]));
  const listeners: (() => void)[] = [];
  const can = (c: Connection) => {
    const connector = byType.get(c.type);
    if (!options.need) return true;
    return options.need === 'import' ? !!connector?.capabilities.import : !!connector?.capabilities.deliver;
  };

  const select = h(
    'select',
    { name: idField, id: uid(idField) },
    h('option', { value: '' }, options.connections.length ? `Choose a ${info.noun}…` : `No ${info.plural} saved yet`),
    // Usable ones first; the rest stay visible so nobody wonders where they went.
    [...options.connections.filter(can), ...options.connections.filter((c) => !can(c))].map((c) => {
      const usable = can(c);
      // Where it points (host and database, URL…), so connections named alike can be told apart.
      const where = connectionSummary(byType.get(c.type), c.configuration);
      const label = `${c.name} (${byType.get(c.type)?.label ?? c.type}${where ? `: ${where}` : ''})${usable ? '' : ' — not available yet'}`;
      return h('option', { value: c.id, disabled: !usable }, label);
    }),
  );
  const picked = labelled(select, {
    label: info.noun,
    required: true,
    hint: [`Saved ${info.plural} are managed on the `, h('a', { href: `#${info.path}` }, `${info.plural} page`), '.'],
  });
  select.value = options.selectedId ?? '';
  if (select.selectedIndex < 0) select.value = '';

  const title = options.kind === 'source' ? 'What to read' : 'Where to write';
  const selectorBox = h('div', { class: 'stack selector-box' });
  let form: SchemaForm | null = null;
  let first = true;

  function current(): Connection | undefined {
    return options.connections.find((c) => c.id === select.value);
  }

  const whereLine = h('p', { class: 'hint connection-where', 'data-testid': 'connection-where', hidden: true });

  function render() {
    const connection = current();
    const connector = connection ? byType.get(connection.type) : undefined;
    const where = connection ? connectionSummary(connector, connection.configuration) : '';
    whereLine.hidden = !where;
    whereLine.textContent = where ? `${connector?.label ?? connection?.type}: ${where}` : '';
    const schema = connector ? (options.kind === 'source' ? connector.source?.resource : connector.destination?.target) : undefined;
    form = null;
    if (!connection || !connector || !schema) {
      replace(selectorBox);
      return;
    }
    // The saved selector belongs to the saved connection; another one starts empty.
    const value = first && connection.id === options.selectedId ? (options.value ?? {}) : {};
    first = false;
    form = schemaForm(schema, { value, choiceLabel: 'Read from' });
    const empty = Object.keys(schema.properties ?? {}).length === 0 && !(schema.anyOf ?? []).length;
    const level = options.headingLevel ?? 'h3';
    const connectionPath = `${info.path}/${encodeURIComponent(connection.id)}`;
    replace(
      selectorBox,
      empty
        ? h('p', { class: 'hint' }, `A ${connector.label} ${info.noun} needs nothing more: its settings say everything.`)
        : [h(level, null, title), form.node],
      connector.capabilities.discover
        ? browseBox(
            `Browse the tables of “${connection.name}”`,
            discoverBrowser({
              connectionPath,
              pickLabel: 'Use',
              onPick: (t) => form?.fill({ schema: t.schema, table: t.name }),
            }),
          )
        : null,
      connector.type === 'geoserver'
        ? browseBox(
            `Browse the layers of “${connection.name}”`,
            geoserverBrowser({
              connectionPath,
              onPick: (l) =>
                form?.fill(
                  options.kind === 'source'
                    ? { layer: `${l.workspace}:${l.layer}` }
                    : { workspace: l.workspace, layer: l.layer, ...(l.store ? { store: l.store } : {}) },
                ),
            }),
          )
        : null,
      connector.type === 'geonode'
        ? browseBox(
            `Browse the datasets of “${connection.name}”`,
            geonodeBrowser({
              connectionPath,
              onPick: (d) => form?.fill(options.kind === 'source' ? { dataset: d.id } : { dataset: d.id, ...(d.title ? { title: d.title } : {}) }),
            }),
          )
        : null,
      connector.capabilities.projects && options.kind === 'source'
        ? browseBox(
            `Pick a project, file and layer of “${connection.name}”`,
            projectBrowser({
              connectionPath,
              onPick: (pick) => form?.fill({ ...pick }),
            }),
          )
        : null,
      connection.type === 'hub'
        ? browseBox(
            `Browse the portal of “${connection.name}”`,
            hubBrowser({
              connectionPath,
              destination: options.kind === 'destination',
              fill: (values) => form?.fill(values),
            }),
          )
        : null,
    );
  }
  render();
  select.addEventListener('change', () => {
    render();
    listeners.forEach((l) => {
      l();
    });
  });

  return {
    node: h('div', { class: 'stack connection-picker' }, picked.row, whereLine, selectorBox),
    connection: current,
    connector: () => {
      const c = current();
      return c ? byType.get(c.type) : undefined;
    },
    selector: () => form?.read() ?? {},
    attach(errors) {
      errors.add(idField, picked.handle);
      errors.addResolver((path): FieldHandle | undefined => {
        if (path === selectorField) return form?.resolve('') ?? picked.handle;
        if (path.startsWith(`${selectorField}.`)) return form?.resolve(path.slice(selectorField.length + 1));
        return undefined;
      });
    },
    onChange: (listener) => listeners.push(listener),
  };
}
