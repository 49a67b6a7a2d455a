import { h } from '../dom.js';
import { labelled } from '../forms.js';
import type { CreationOptions } from '../api-types.js';

/*
 * An output format's creation options as people write them for ogr2ogr: one KEY=VALUE a line, for
 * the file (-dsco, and every GeoParquet / PMTiles option), `layer:KEY=VALUE` for a layer option
 * (-lco). The server checks names and values against the format's list and names the allowed ones
 * when it refuses (docs/formats.md), so the browser only checks the shape of each line.
 */

const LAYER = /^layer\s*:\s*/i;

/** The text of a textarea as the API's creation_options (null when empty), or the first line it cannot read. */
export function parseCreationOptions(text: string): { options: CreationOptions | null } | { error: string } {
  const dataset: Record<string, string> = {};
  const layer: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (!line || line.startsWith('#')) continue;
    const isLayer = LAYER.test(line);
    const pair = line.replace(LAYER, '');
    const eq = pair.indexOf('=');
    const name = eq > 0 ? pair.slice(0, eq).trim() : '';
    if (!name || /\s/.test(name)) return { error: `Line ${i + 1} is not KEY=VALUE (or layer:KEY=VALUE): ${JSON.stringify(line)}` };
    (isLayer ? layer : dataset)[name.toUpperCase()] = pair.slice(eq + 1).trim();
  }
  const options: CreationOptions = {
    ...(Object.keys(dataset).length ? { dataset } : {}),
    ...(Object.keys(layer).length ? { layer } : {}),
  };
  return { options: Object.keys(options).length ? options : null };
}

/** Saved creation options back as the lines parseCreationOptions reads. */
export function formatCreationOptions(options: CreationOptions | null | undefined): string {
  if (!options) return '';
  return [
    ...Object.entries(options.dataset ?? {}).map(([k, v]) => `${k}=${String(v)}`),
    ...Object.entries(options.layer ?? {}).map(([k, v]) => `layer:${k}=${String(v)}`),
  ].join('\n');
}

/** The textarea, labelled, with the format's examples; value() is null when empty and throws nothing (see check()). */
export function creationOptionsField(initial?: CreationOptions | null) {
  const control = h('textarea', {
    name: 'creation_options',
    class: 'mono',
    rows: '3',
    spellcheck: 'false',
    autocomplete: 'off',
    placeholder: 'ROW_GROUP_SIZE=100000\nCOMPRESSION=ZSTD',
    'data-testid': 'creation-options',
  });
  control.value = formatCreationOptions(initial);
  const field = labelled(control, {
    label: 'Creation options',
    hint: h(
      'span',
      null,
      'Optional, one KEY=VALUE a line, as ogr2ogr takes them: ',
      h('code', null, 'ROW_GROUP_SIZE=100000'),
      ' or ',
      h('code', null, 'COMPRESSION=SNAPPY'),
      ' for GeoParquet, ',
      h('code', null, 'MAXZOOM=12'),
      ' for PMTiles; ',
      h('code', null, 'layer:GEOMETRY=AS_XY'),
      ' for a layer option (CSV). The server names the allowed options if one is not.',
    ),
  });
  return {
    ...field,
    /** The options typed, or an error shown next to the field (and undefined answered). */
    check(): CreationOptions | null | undefined {
      const parsed = parseCreationOptions(control.value);
      if ('error' in parsed) {
        field.handle.setError(parsed.error);
        return undefined;
      }
      return parsed.options;
    },
  };
}
