import { API_BASE, post } from '../../api.js';
import { bytes, h, replace } from '../../dom.js';
import { busy, FormErrors, input, labelled, statusLine } from '../../forms.js';
import type { Format, Workspace } from '../../types.js';
import { drawPmtiles, type MapHandle } from '../map-view.js';

const COMMON_FORMATS = ['GPKG', 'GeoJSON', 'ESRI Shapefile', 'FlatGeobuf', 'GeoParquet', 'PMTiles', 'CSV', 'KML', 'GML', 'XLSX', 'GTiff', 'COG', 'PNG', 'JPEG'];

/** Tilesets larger than this are offered for download only: the map reads the whole file. */
const MAP_TILES_MAX_BYTES = 64 * 1024 * 1024;

/** Output formats of the dataset's kind that produce a file, common ones first. */
export function formatOptions(formats: Format[], kind: 'vector' | 'raster'): HTMLOptGroupElement[] {
  const writable = formats.filter((f) => f.write && f.kind === kind && f.extensions.length > 0);
  const label = (f: Format) => `${f.name} (.${f.extensions[0]})`;
  const common = COMMON_FORMATS.map((id) => writable.find((f) => f.id === id)).filter((f): f is Format => !!f);
  const rest = writable.filter((f) => !common.includes(f)).sort((a, b) => a.name.localeCompare(b.name));
  return [
    h(
      'optgroup',
      { label: 'Common' },
      common.map((f) => h('option', { value: f.id }, label(f))),
    ),
    h(
      'optgroup',
      { label: 'All formats' },
      rest.map((f) => h('option', { value: f.id }, label(f))),
    ),
  ];
}

/**
 * Convert (output format, optional target CRS) and the download of the current output. The call
 * waits for the whole conversion; the status line counts the seconds meanwhile.
 */
export function convertPanel(workspacePath: string, initial: Workspace, formats: Format[], onConverted: (ws: Workspace) => void): HTMLElement {
  const path = workspacePath;
  let ws = initial;
  const convertErrors = new FormErrors();
  const formatSelect = labelled(h('select', { name: 'output_format' }, formatOptions(formats, ws.dataset_type)), { label: 'Output format', required: true });
  formatSelect.control.value = ws.output?.format ?? (ws.dataset_type === 'vector' ? 'GPKG' : 'GTiff');
  const targetCrs = labelled(input({ name: 'target_crs', placeholder: 'e.g. EPSG:3857', spellcheck: 'false', autocomplete: 'off' }), {
    label: 'Target CRS',
    hint: 'Optional: leave empty to keep the coordinate system.',
  });
  convertErrors.add('output_format', formatSelect.handle).add('target_crs', targetCrs.handle);
  const convertButton = h('button', { type: 'submit', class: 'button' }, 'Convert');
  const convertStatus = statusLine();
  const outputBox = h('div', { class: 'output' });
  function renderOutput() {
    if (!ws.output) {
      replace(outputBox);
      return;
    }
    const o = ws.output;
    replace(
      outputBox,
      h(
        'div',
        { class: 'output-card' },
        h(
          'p',
          null,
          h('strong', null, o.filename),
          ` · ${o.format} · ${bytes(o.size)}${o.layers.length ? ` · ${o.layers.length} layer${o.layers.length === 1 ? '' : 's'}` : ''}`,
        ),
        h('a', { class: 'button', href: `${API_BASE}${path}/download`, download: o.filename, 'data-testid': 'download' }, `Download ${o.filename}`),
        o.format === 'PMTiles' ? tilesMap(o.size) : null,
      ),
    );
  }
  let tilesHandle: MapHandle | null = null;
  /** A PMTiles output drawn on a map on request (the whole file is fetched). */
  function tilesMap(size: number): HTMLElement {
    const box = h('div', { class: 'map', 'data-testid': 'pmtiles-map', hidden: true });
    const status = statusLine();
    const legend = h('p', { class: 'hint', 'data-testid': 'pmtiles-legend' });
    if (size > MAP_TILES_MAX_BYTES)
      return h('p', { class: 'hint' }, `The tileset is ${bytes(size)}: download it to view it (the map shows tilesets up to ${bytes(MAP_TILES_MAX_BYTES)}).`);
    const show = h(
      'button',
      {
        type: 'button',
        class: 'button secondary',
        'data-testid': 'show-pmtiles',
        onclick: async () => {
          tilesHandle?.dispose();
          box.hidden = false;
          status.set('Loading the tiles…', 'busy');
          try {
            const handle = await drawPmtiles(box, `${API_BASE}${path}/download`, 'Map of the PMTiles output');
            tilesHandle = handle;
            status.set('');
            replace(
              legend,
              [...handle.layers].map(([name, colour]) =>
                h('span', { class: 'legend-item' }, h('span', { style: `color:${colour}`, 'aria-hidden': 'true' }, '■ '), `${name} `),
              ),
            );
          } catch (error) {
            status.set(error instanceof Error ? error.message : String(error), 'error');
          }
        },
      },
      'Show the tiles on a map',
    );
    return h('div', { class: 'stack tiles-view' }, show, status.node, box, legend);
  }
  renderOutput();
  const convertForm = h(
    'form',
    {
      class: 'stack',
      'data-testid': 'convert',
      novalidate: true,
      onsubmit: async (event: Event) => {
        event.preventDefault();
        convertErrors.clear();
        const started = Date.now();
        convertStatus.set('Converting… the full dataset goes through the pipeline; this can take a while.', 'busy');
        const timer = window.setInterval(() => convertStatus.set(`Converting… ${Math.round((Date.now() - started) / 1000)} s`, 'busy'), 1000);
        try {
          const body: Record<string, unknown> = { output_format: formatSelect.control.value };
          if (targetCrs.control.value.trim()) body.target_crs = targetCrs.control.value.trim();
          ws = await busy(convertButton, 'Converting…', () => post<Workspace>(`${path}/convert`, body));
          convertStatus.set(`Converted in ${Math.max(1, Math.round((Date.now() - started) / 1000))} s. The file is ready to download.`, 'ok');
          renderOutput();
          onConverted(ws);
        } catch (error) {
          convertStatus.set('');
          convertErrors.show(error);
        } finally {
          window.clearInterval(timer);
        }
      },
    },
    convertErrors.summary,
    h('div', { class: 'grid-2' }, formatSelect.row, targetCrs.row),
    h('div', { class: 'actions' }, convertButton),
    convertStatus.node,
    outputBox,
  );

  convertErrors.watch(convertForm);

  return h('section', { class: 'card', 'aria-labelledby': 'convert-title' }, h('h2', { id: 'convert-title' }, 'Convert and download'), convertForm);
}
