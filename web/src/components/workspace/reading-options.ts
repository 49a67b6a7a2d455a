import { h } from '../../dom.js';
import { type FormErrors, input, labelled } from '../../forms.js';

/** The reading options' names, as the API takes them (form fields on upload, keys of source_resource on import and in a Job). */
export const READING_OPTION_KEYS = ['geometry_column', 'x_column', 'y_column', 'z_column', 'source_crs'] as const;

export interface ReadingOptions {
  node: HTMLElement;
  /** The options filled in, trimmed; empty ones left out. */
  values(): Record<string, string>;
  /** Places the server's issues under `prefix` (`body` for an upload's form fields, `source_resource` for an import or a Job). */
  attach(errors: FormErrors, prefix: string): void;
}

/**
 * Splits a saved source_resource into the connector's selector and the reading options, so each
 * part of the form shows its own (the connector's form knows nothing of source_crs).
 */
export function splitReading(resource: Record<string, unknown> | null | undefined): { selector: Record<string, unknown>; reading: Record<string, string> } {
  const selector: Record<string, unknown> = {};
  const reading: Record<string, string> = {};
  for (const [key, value] of Object.entries(resource ?? {})) {
    if ((READING_OPTION_KEYS as readonly string[]).includes(key) && typeof value === 'string') reading[key] = value;
    else selector[key] = value;
  }
  return { selector, reading };
}

/*
 * The reading options (docs/api-conventions.md, "Reading options"): where a plain Parquet file
 * keeps its geometry (a WKB or WKT column, or X/Y/Z columns; CSV takes X/Y/Z too) and which CRS
 * the coordinates are in when the file says none or a wrong one. One component for the upload
 * page, the import panel and the Job editor's Source; folded away (open when a saved Job has
 * some): most files say all of it themselves.
 */
export function readingOptions(options: { value?: Record<string, string>; note?: string } = {}): ReadingOptions {
  const value = options.value ?? {};
  const field = (name: (typeof READING_OPTION_KEYS)[number], label: string, hint: string, placeholder: string) =>
    labelled(input({ name, placeholder, spellcheck: 'false', autocomplete: 'off', value: value[name] ?? '', 'data-testid': `read-${name}` }), { label, hint });
  const fields = [
    field('geometry_column', 'Geometry column', 'Plain Parquet without GeoParquet metadata: the column holding WKB or WKT.', 'e.g. shape_wkb'),
    field(
      'source_crs',
      'CRS of the coordinates',
      'The source CRS: replaces what the file says, or fills its absence (a .prj-less shapefile, X/Y not in lon/lat).',
      'e.g. EPSG:2263',
    ),
    field('x_column', 'X column', 'CSV or plain Parquet: the column of X (longitude or easting) coordinates, with the Y column.', 'e.g. lon'),
    field('y_column', 'Y column', 'The column of Y (latitude or northing) coordinates.', 'e.g. lat'),
    field('z_column', 'Z column', 'Optional, with X and Y: the column of heights.', 'e.g. elevation'),
  ];
  const node = h(
    'details',
    { class: 'reading-options', 'data-testid': 'reading-options', open: Object.keys(value).length > 0 },
    h('summary', null, 'Reading options: the source CRS, CSV coordinate columns, a Parquet geometry column'),
    h('p', { class: 'hint' }, options.note ?? 'Only for files that do not say it themselves; they go with the next upload.'),
    h(
      'div',
      { class: 'grid-2' },
      fields.map((f) => f.row),
    ),
  );
  return {
    node,
    values: () => Object.fromEntries(fields.map((f) => [f.control.name, f.control.value.trim()]).filter(([, v]) => v)),
    attach(errors, prefix) {
      for (const f of fields) errors.add(`${prefix}.${f.control.name}`, f.handle);
    },
  };
}
