import { post } from '../../api.js';
import { h } from '../../dom.js';
import { busy, FormErrors, input, labelled, statusLine } from '../../forms.js';

/** Delivery of the converted output to a saved Destination, with its target. */
export function deliverPanel(workspacePath: string): HTMLElement {
  const path = workspacePath;
  const deliverErrors = new FormErrors();
  const destination = labelled(input({ name: 'destination_id', placeholder: 'dst_…', spellcheck: 'false', autocomplete: 'off' }), { label: 'Destination id', required: true });
  const target = labelled(h('textarea', { name: 'destination_target', class: 'mono', rows: '3', spellcheck: 'false' }), {
    label: 'Target (JSON)',
    hint: 'Where in the Destination: for example {"schema": "public", "table": "parcels", "write_mode": "replace"}.',
  });
  target.control.value = '{}';
  deliverErrors.add('destination_id', destination.handle).add('destination_target', target.handle);
  const deliverButton = h('button', { type: 'submit', class: 'button secondary' }, 'Deliver');
  const deliverStatus = statusLine();
  const deliverForm = h(
    'form',
    {
      class: 'stack',
      'data-testid': 'deliver',
      novalidate: true,
      onsubmit: async (event: Event) => {
        event.preventDefault();
        deliverErrors.clear();
        deliverStatus.set('');
        let parsed: unknown;
        try {
          parsed = JSON.parse(target.control.value || '{}');
        } catch {
          parsed = undefined;
        }
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
          deliverErrors.field('destination_target', 'The target must be a JSON object, such as {"table": "parcels"}.');
          target.control.focus();
          return;
        }
        try {
          await busy(deliverButton, 'Delivering…', () => post(`${path}/deliver`, { destination_id: destination.control.value.trim(), destination_target: parsed }));
          deliverStatus.set('Delivered.', 'ok');
        } catch (error) {
          deliverErrors.show(error);
        }
      },
    },
    deliverErrors.summary,
    h('div', { class: 'grid-2' }, destination.row, target.row),
    h('div', { class: 'actions' }, deliverButton),
    deliverStatus.node,
  );

  deliverErrors.watch(deliverForm);

  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'deliver-title' },
    h('h2', { id: 'deliver-title' }, 'Deliver to a Destination'),
    h('p', { class: 'hint' }, 'Publishes the converted file to a saved Destination. Convert first: delivery never converts with guessed defaults.'),
    deliverForm,
  );
}
