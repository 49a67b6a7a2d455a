import { count, h, replace, uid, titledSection } from '../../dom.js';
import type { Layer } from '../../types.js';
import { crsByCode, crsView } from '../crs.js';
import { columnHeads, tableRegion } from '../table-region.js';

/**
 * The layers of a vector dataset and the fields of the selected one, with a picker when there
 * are several. `onSelect` runs when the user picks another layer.
 */
export function layersPanel(layers: Layer[], initial: Layer | undefined, onSelect: (layer: Layer | undefined) => void): HTMLElement {
  let selected = initial;
  const selectId = uid('layer');
  const picker = h(
    'select',
    { id: selectId },
    layers.map((l) => h('option', { value: l.name }, l.name)),
  );
  if (selected) picker.value = selected.name;
  const table = h('div');
  const fields = h('div');

  function render() {
    replace(
      table,
      tableRegion(
        'Layers',
        { class: 'table compact', 'data-testid': 'layers' },
        columnHeads(['Layer', 'Geometry', 'Features', 'CRS', 'Fields']),
        h(
          'tbody',
          null,
          layers.map((l) =>
            h(
              'tr',
              { 'aria-current': l === selected ? 'true' : null, class: l === selected ? 'selected' : null },
              h('th', { scope: 'row' }, l.name),
              h('td', null, l.has_geometry ? (l.geometry_type ?? 'Geometry') : 'None (table)'),
              h('td', { class: 'num' }, l.feature_count === null ? '—' : count(l.feature_count)),
              h('td', null, l.crs_info ? crsView(l.crs, l.crs_info) : l.crs ? crsByCode(l.crs) : '—'),
              h('td', { class: 'num' }, String(l.fields.length)),
            ),
          ),
        ),
      ),
    );
    replace(
      fields,
      selected
        ? [
            h('h3', null, `Fields of ${selected.name}`),
            selected.fields.length
              ? h(
                  'ul',
                  { class: 'field-chips', 'data-testid': 'fields' },
                  selected.fields.map((f) => h('li', null, h('span', { class: 'field-name' }, f.name), h('span', { class: 'field-type' }, f.type))),
                )
              : h('p', { class: 'empty' }, 'This layer has no attribute fields.'),
          ]
        : null,
    );
  }
  render();

  picker.addEventListener('change', () => {
    selected = layers.find((l) => l.name === picker.value);
    render();
    onSelect(selected);
  });

  return titledSection(
    'card',
    'layers',
    'Layers and fields',
    layers.length > 1 ? h('div', { class: 'field' }, h('label', { for: selectId }, 'Layer to preview'), picker) : null,
    table,
    fields,
  );
}
