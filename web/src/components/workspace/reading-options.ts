import { h } from '../../dom.js';
import { input, labelled } from '../../forms.js';

/*
 * The reading options an upload may carry as form fields (docs/api-conventions.md, "Reading
 * options"): where a plain Parquet file keeps its geometry (a WKB or WKT column, or X/Y columns;
 * CSV takes X/Y too) and which CRS the coordinates are in when the file says none or a wrong one.
 * Folded away: most files say all of it themselves.
 */
export function readingOptions(): { node: HTMLElement; values(): Record<string, string> } {
  const field = (name: string, label: string, hint: string, placeholder: string) =>
    labelled(input({ name, placeholder, spellcheck: 'false', autocomplete: 'off', 'data-testid': `read-${name}` }), { label, hint });
  const geometry = field('geometry_column', 'Geometry column', 'Plain Parquet without GeoParquet metadata: the column holding WKB or WKT.', 'e.g. shape_wkb');
  const x = field('x_column', 'X column', 'CSV or plain Parquet: the column of X (longitude) coordinates, with the Y column.', 'e.g. lon');
  const y = field('y_column', 'Y column', 'The column of Y (latitude) coordinates.', 'e.g. lat');
  const crs = field('source_crs', 'Source CRS', 'The CRS of the coordinates when the file has none or a wrong one.', 'e.g. EPSG:2056');
  const fields = [geometry, x, y, crs];
  const node = h(
    'details',
    { class: 'reading-options', 'data-testid': 'reading-options' },
    h('summary', null, 'Reading options: a Parquet geometry column, CSV coordinate columns, the CRS'),
    h('p', { class: 'hint' }, 'Only for files that do not say it themselves; they go with the next upload.'),
    h('div', { class: 'grid-2' }, geometry.row, crs.row, x.row, y.row),
  );
  return {
    node,
    values: () => Object.fromEntries(fields.map((f) => [f.control.name, f.control.value.trim()]).filter(([, v]) => v)),
  };
}
