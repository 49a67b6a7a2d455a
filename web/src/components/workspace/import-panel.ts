import { post } from '../../api.js';
import type { App } from '../../app.js';
import { h, titledSection } from '../../dom.js';
import { busy, FormErrors, statusLine, submitForm } from '../../forms.js';
import type { Workspace } from '../../types.js';
import { connectionPicker } from '../connections/connection-picker.js';
import { followRequest } from '../request-progress.js';
import { readingOptions } from './reading-options.js';
import { remember } from './recent.js';
import { savedConnectionsBody } from './saved-connections.js';

/**
 * "Import from a Source": a saved Source and what to read from it (POST /workspaces with
 * source_id and source_resource). The server extracts and inspects it like an upload; the canvas
 * opens on the result.
 */
export function importPanel(app: App): HTMLElement {
  const errors = new FormErrors();
  const status = statusLine();

  const body = savedConnectionsBody(app, 'source', { examples: 'a database, a bucket, a file at a URL', use: 'import from it' }, (catalog, sources) => {
    const picker = connectionPicker({ kind: 'source', catalog, connections: sources, need: 'import' });
    picker.attach(errors);
    // How to open what the Source sends: they ride in source_resource beside the selector.
    const reading = readingOptions({ note: 'Only for files that do not say it themselves: a shapefile without .prj, a CSV of X/Y columns.' });
    reading.attach(errors, 'source_resource');
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
        try {
          const ws = await busy(submit, 'Importing…', () =>
            followRequest(status, `Importing from “${source.name}”…`, (progressId) =>
              post<Workspace>('/workspaces', { source_id: source.id, source_resource: { ...picker.selector(), ...reading.values() }, progress_id: progressId }),
            ),
          );
          remember(ws);
          app.flash(`${ws.filename} imported from “${source.name}” and inspected.`);
          app.navigate(`#/workspace/${encodeURIComponent(ws.id)}`);
        } catch (error) {
          status.set('');
          errors.show(error);
        }
      },
      errors.summary,
      picker.node,
      reading.node,
      h('div', { class: 'actions' }, submit),
      status.node,
    );
    errors.watch(form);
    return form;
  });

  return titledSection(
    'card',
    'import',
    'Import from a Source',
    h('p', { class: 'hint' }, 'Reads from a saved Source (a table, an object, a file at a URL) into a new Workspace, exactly like an upload.'),
    body,
  );
}
