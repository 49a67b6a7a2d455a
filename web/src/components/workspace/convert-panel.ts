import { API_BASE, get, post } from '../../api.js';
import { bytes, h, replace, titledSection } from '../../dom.js';
import { busy, FormErrors, input, labelled, statusLine, submitForm } from '../../forms.js';
import type { Format, Workspace } from '../../types.js';
import { creationOptionsField } from '../creation-options.js';
import { followRequest } from '../request-progress.js';
import { warningsList } from '../warnings-list.js';
import { crsByCode } from '../crs.js';
import { drawPmtiles, type Basemap } from '../map-view.js';

const COMMON_FORMATS = ['GPKG', 'GeoJSON', 'ESRI Shapefile', 'FlatGeobuf', 'GeoParquet', 'PMTiles', 'CSV', 'KML', 'GML', 'XLSX', 'GTiff', 'COG', 'PNG', 'JPEG'];

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
 * Convert (output format, optional target CRS and transformation) and the download of the current output. The call
 * waits for the whole conversion; the status line counts the seconds meanwhile, and the previous
 * output's download is withdrawn (the new convert replaces that file) until the new one is ready.
 */
export function convertPanel(
  workspacePath: string,
  initial: Workspace,
  formats: Format[],
  basemap: Promise<Basemap>,
  onConverted: (ws: Workspace) => void,
): HTMLElement {
  const path = workspacePath;
  let ws = initial;
  const convertErrors = new FormErrors();
  const formatSelect = labelled(h('select', { name: 'output_format' }, formatOptions(formats, ws.dataset_type)), { label: 'Output format', required: true });
  formatSelect.control.value = ws.output?.format ?? (ws.dataset_type === 'vector' ? 'GPKG' : 'GTiff');
  const targetCrs = labelled(input({ name: 'target_crs', placeholder: 'e.g. EPSG:3857', spellcheck: 'false', autocomplete: 'off' }), {
    label: 'Target CRS',
    hint: 'Optional: leave empty to keep the coordinate system (GeoJSON is always written in WGS 84, EPSG:4326).',
  });
  // The code's name and unit, as soon as one is typed: "EPSG:2056 · CH1903+ / LV95 · metre".
  const targetCrsName = h('p', { class: 'hint crs-name', 'data-testid': 'target-crs-name', 'aria-live': 'polite' });
  targetCrs.control.addEventListener('change', () => {
    const code = targetCrs.control.value.trim();
    replace(targetCrsName, code ? crsByCode(code) : '');
  });
  targetCrs.row.append(targetCrsName);
  // The PROJ pipeline to reproject with, when PROJ's own choice is not the one wanted: each
  // result names the one used (and the alternatives) in its crs_operation warning.
  const transformation = labelled(
    h('textarea', { name: 'transformation', rows: 2, placeholder: '+proj=pipeline +step …', spellcheck: 'false', autocomplete: 'off' }),
    {
      label: 'Transformation (PROJ pipeline)',
      hint: 'Optional, with a target CRS: the coordinate operation to use instead of the one PROJ chooses. Each convert lists the one it used under the result.',
    },
  );
  const creation = creationOptionsField();
  convertErrors
    .add('output_format', formatSelect.handle)
    .add('target_crs', targetCrs.handle)
    .add('transformation', transformation.handle)
    .add('creation_options', creation.handle);
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
        o.format === 'PMTiles' ? tilesMap() : null,
        warningsList(o.warnings, 'output-warnings'),
      ),
    );
  }
  let tilesHandle: { dispose(): void } | null = null;
  /** A PMTiles output drawn on a map on request (read by byte ranges: only the tiles shown are fetched). */
  function tilesMap(): HTMLElement {
    const box = h('div', { class: 'map', 'data-testid': 'pmtiles-map', hidden: true });
    const status = statusLine();
    const legend = h('p', { class: 'hint', 'data-testid': 'pmtiles-legend' });
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
            const handle = await drawPmtiles(box, `${API_BASE}${path}/download`, {
              label: 'Map of the PMTiles output',
              basemap: await basemap.catch(() => null),
            });
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
  const convertForm = submitForm(
    convertErrors,
    { class: 'stack', 'data-testid': 'convert' },
    async () => {
      const options = creation.check();
      if (options === undefined) return creation.handle.focus();
      const started = Date.now();
      // The new output replaces the old file: no download of it (nor its map) while this runs.
      tilesHandle?.dispose();
      tilesHandle = null;
      replace(outputBox);
      try {
        const body: Record<string, unknown> = { output_format: formatSelect.control.value };
        if (targetCrs.control.value.trim()) body.target_crs = targetCrs.control.value.trim();
        if (transformation.control.value.trim()) body.transformation = transformation.control.value.trim();
        if (options) body.creation_options = options;
        ws = await busy(convertButton, 'Converting…', () =>
          followRequest(convertStatus, 'Converting the full dataset through the pipeline…', (progressId) =>
            post<Workspace>(`${path}/convert`, { ...body, progress_id: progressId }),
          ),
        );
        convertStatus.set(`Converted in ${Math.max(1, Math.round((Date.now() - started) / 1000))} s. The file is ready to download.`, 'ok');
        renderOutput();
        onConverted(ws);
      } catch (error) {
        convertStatus.set('');
        convertErrors.show(error);
        // Whatever output the server still has after a refused or failed convert is offered again.
        void get<Workspace>(path)
          .then((current) => {
            ws = current;
            renderOutput();
          })
          .catch(() => undefined);
      }
    },
    convertErrors.summary,
    h('div', { class: 'grid-2' }, formatSelect.row, targetCrs.row),
    transformation.row,
    creation.row,
    h('div', { class: 'actions' }, convertButton),
    convertStatus.node,
    outputBox,
  );

  convertErrors.watch(convertForm);

  return titledSection('card', 'convert', 'Convert and download', convertForm);
}
