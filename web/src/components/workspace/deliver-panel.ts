import { post } from '../../api.js';
import type { App } from '../../app.js';
import { bytes, count, h, replace, titledSection } from '../../dom.js';
import { busy, FormErrors, statusLine, submitForm } from '../../forms.js';
import type { Delivery } from '../../types.js';
import { connectionPicker } from '../connections/connection-picker.js';
import { followRequest } from '../request-progress.js';
import { savedConnectionsBody } from './saved-connections.js';

/** What a delivery reports: where it went and how much, without secrets. */
export function deliveryView(d: Delivery, destinationName: string): HTMLElement {
  const target = Object.entries(d.target).filter(([, v]) => v !== null && v !== undefined && v !== '');
  return h(
    'div',
    { class: 'output-card delivery-result', 'data-testid': 'delivery-result' },
    h(
      'div',
      null,
      h('p', null, h('strong', null, `Delivered ${d.filename}`), ` to “${destinationName}” (${d.destination_type}) in ${(d.duration_ms / 1000).toFixed(1)} s.`),
      h(
        'dl',
        { class: 'inline-facts' },
        target.map(([k, v]) => [h('dt', null, k.replace(/_/g, ' ')), h('dd', null, h('code', null, typeof v === 'object' ? JSON.stringify(v) : String(v)))]),
        d.rows_written !== null ? [h('dt', null, 'rows written'), h('dd', null, count(d.rows_written))] : null,
        d.bytes_written !== null ? [h('dt', null, 'bytes written'), h('dd', null, bytes(d.bytes_written))] : null,
      ),
    ),
  );
}

/** Delivery of the converted output to a saved Destination, with its target and write mode. */
export function deliverPanel(app: App, workspacePath: string): HTMLElement {
  const body = savedConnectionsBody(app, 'destination', { examples: 'a database, a bucket, a server', use: 'deliver to it' }, (catalog, destinations) => {
    const errors = new FormErrors();
    const picker = connectionPicker({ kind: 'destination', catalog, connections: destinations, need: 'deliver' });
    picker.attach(errors);
    const submit = h('button', { type: 'submit', class: 'button secondary' }, 'Deliver');
    const status = statusLine();
    const result = h('div', { 'aria-live': 'polite' });
    const form = submitForm(
      errors,
      { class: 'stack', 'data-testid': 'deliver' },
      async () => {
        replace(result);
        const destination = picker.connection();
        if (!destination) {
          errors.field('destination_id', 'Choose the Destination to deliver to.');
          return;
        }
        try {
          const delivery = await busy(submit, 'Delivering…', () =>
            followRequest(status, `Delivering to “${destination.name}”…`, (progressId) =>
              post<Delivery>(`${workspacePath}/deliver`, { destination_id: destination.id, destination_target: picker.selector(), progress_id: progressId }),
            ),
          );
          status.set('');
          replace(result, deliveryView(delivery, destination.name));
        } catch (error) {
          status.set('');
          errors.show(error);
        }
      },
      errors.summary,
      picker.node,
      h('div', { class: 'actions' }, submit),
      status.node,
      result,
    );
    errors.watch(form);
    return form;
  });

  return titledSection(
    'card',
    'deliver',
    'Deliver to a Destination',
    h('p', { class: 'hint' }, 'Publishes the converted file to a saved Destination. Convert first: delivery never converts with guessed defaults.'),
    body,
  );
}
