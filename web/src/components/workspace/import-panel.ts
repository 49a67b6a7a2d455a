import { plainMessage, post } from '../../api.js';
import type { App } from '../../app.js';
import { h, replace, titledSection } from '../../dom.js';
import { busy, FormErrors, statusLine, submitForm } from '../../forms.js';
import type { Workspace } from '../../types.js';
import { connectionPicker } from '../connections/connection-picker.js';
import { allConnections } from '../connections/kinds.js';
import { remember } from './recent.js';

/**
 * "Import from a Source": a saved Source and what to read from it (POST /workspaces with
 * source_id and source_resource). The server extracts and inspects it like an upload; the canvas
 * opens on the result.
 */
export function importPanel(app: App): HTMLElement {
  const body = h('div', null, h('p', { class: 'empty' }, 'Loading your Sources…'));
  const errors = new FormErrors();
  const status = statusLine();

  Promise.all([app.connectors(), allConnections('source')])
    .then(([catalog, sources]) => {
      if (!sources.length) {
        replace(
          body,
          h(
            'p',
            { class: 'empty' },
            'No Sources saved yet. ',
            h('a', { href: '#/sources/new' }, 'Add a Source'),
            ' (a database, a bucket, a file at a URL) to import from it here.',
          ),
        );
        return;
      }
      const picker = connectionPicker({ kind: 'source', catalog, connections: sources, need: 'import' });
      picker.attach(errors);
      const submit = h('button', { type: 'submit', class: 'button' }, 'Import');
      const form = submitForm(
        errors,
        { class: 'stack', 'data-testid': 'import' },
        async () => {
          const source = picker.connection();
          if (!source) {
            errors.field('source_id', 'Choose the Source to import from.');
            return;
          }
          const started = Date.now();
          status.set(`Importing from “${source.name}”…`, 'busy');
          const timer = window.setInterval(() => status.set(`Importing from “${source.name}”… ${Math.round((Date.now() - started) / 1000)} s`, 'busy'), 1000);
          try {
            const ws = await busy(submit, 'Importing…', () => post<Workspace>('/workspaces', { source_id: source.id, source_resource: picker.selector() }));
            remember(ws);
            app.flash(`${ws.filename} imported from “${source.name}” and inspected.`);
            app.navigate(`#/workspace/${encodeURIComponent(ws.id)}`);
          } catch (error) {
            status.set('');
            errors.show(error);
          } finally {
            window.clearInterval(timer);
          }
        },
        errors.summary,
        picker.node,
        h('div', { class: 'actions' }, submit),
        status.node,
      );
      errors.watch(form);
      replace(body, form);
    })
    .catch((error) => replace(body, h('p', { class: 'alert', role: 'alert' }, plainMessage(error))));

  return titledSection(
    'card',
    'import',
    'Import from a Source',
    h('p', { class: 'hint' }, 'Reads from a saved Source (a table, an object, a file at a URL) into a new Workspace, exactly like an upload.'),
    body,
  );
}
