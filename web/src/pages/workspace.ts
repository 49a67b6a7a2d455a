/**
 * The Workspace canvas: upload (drag and drop, progress), the inspected layers and fields, data
 * and map previews, the pipeline editor with the transformed previews side by side with the
 * originals, convert with a format picker, download and deliver.
 */
import { ApiError, API_BASE, get, plainMessage, post, put, query, upload, type Upload } from '../api.js';
import { dataTable } from '../components/data-table.js';
import { confirmDialog } from '../components/dialog.js';
import { drawMap, type MapHandle } from '../components/map-view.js';
import { operationEditor } from '../components/operation-editor.js';
import { bytes, count, h, replace, time, uid } from '../dom.js';
import { busy, FormErrors, groupError, input, labelled, statusLine } from '../forms.js';
import type { Page, PageContext } from '../router.js';
import type { DataPreview, Format, Layer, Page as ListPage, Pipeline, Recipe, SpatialPreview, Workspace } from '../types.js';

// --- recent Workspaces (this browser only) ---------------------------------------------------

interface Recent {
  id: string;
  filename: string;
  expires_at: string;
}
const RECENT_KEY = 'geoflow.recent-workspaces';

function recentWorkspaces(): Recent[] {
  try {
    const list = JSON.parse(localStorage.getItem(RECENT_KEY) ?? '[]') as Recent[];
    return list.filter((r) => Date.parse(r.expires_at) > Date.now());
  } catch {
    return [];
  }
}

function remember(ws: Workspace): void {
  try {
    const list = [{ id: ws.id, filename: ws.filename, expires_at: ws.expires_at }, ...recentWorkspaces().filter((r) => r.id !== ws.id)].slice(0, 8);
    localStorage.setItem(RECENT_KEY, JSON.stringify(list));
  } catch {
    // storage may be disabled; the list is a convenience
  }
}

// --- upload page -------------------------------------------------------------------------------

export function workspaceUploadPage({ app }: PageContext): Page {
  let current: Upload<Workspace> | null = null;
  const fileInput = h('input', { type: 'file', id: 'upload-file', class: 'visually-hidden', 'aria-describedby': 'upload-hint' });
  const progress = h('progress', { max: '100', value: '0', id: 'upload-progress' });
  const progressLabel = h('label', { for: 'upload-progress' });
  const cancel = h('button', { type: 'button', class: 'button secondary small', onclick: () => current?.abort() }, 'Cancel upload');
  const progressBox = h('div', { class: 'upload-progress', hidden: true }, progressLabel, h('div', { class: 'inline' }, progress, cancel));
  const status = statusLine();
  const dropzone = h(
    'div',
    { class: 'dropzone', 'data-testid': 'dropzone' },
    h('p', { class: 'drop-title' }, 'Drag and drop a file here'),
    h('p', null, 'or'),
    h('label', { for: 'upload-file', class: 'button' }, 'Choose a file'),
    fileInput,
    h(
      'p',
      { class: 'hint', id: 'upload-hint' },
      'Any format in the server’s catalog: GeoJSON, GeoPackage, CSV, FlatGeobuf, KML, GeoTIFF… A Shapefile goes in one ZIP with its .shp, .shx, .dbf and .prj.',
    ),
  );

  function start(file: File) {
    if (current) return;
    status.set('');
    progressBox.hidden = false;
    dropzone.classList.add('busy');
    fileInput.disabled = true;
    progress.value = 0;
    progressLabel.textContent = `Uploading ${file.name} (${bytes(file.size)}): 0%`;
    current = upload<Workspace>('/workspaces', file, (fraction) => {
      const pct = Math.round(fraction * 100);
      progress.value = pct;
      progressLabel.textContent = pct < 100 ? `Uploading ${file.name} (${bytes(file.size)}): ${pct}%` : `Uploaded ${file.name}; the server is inspecting it…`;
    });
    current.promise
      .then((ws) => {
        remember(ws);
        app.flash(`${ws.filename} uploaded and inspected.`);
        app.navigate(`#/workspace/${encodeURIComponent(ws.id)}`);
      })
      .catch((error: unknown) => {
        status.set(h('span', { role: 'alert' }, plainMessage(error)), 'error');
        progressBox.hidden = true;
      })
      .finally(() => {
        current = null;
        dropzone.classList.remove('busy');
        fileInput.disabled = false;
        fileInput.value = '';
      });
  }

  fileInput.addEventListener('change', () => {
    const file = fileInput.files?.[0];
    if (file) start(file);
  });
  dropzone.addEventListener('dragover', (e) => {
    e.preventDefault();
    if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
    dropzone.classList.add('dragging');
  });
  dropzone.addEventListener('dragleave', () => dropzone.classList.remove('dragging'));
  dropzone.addEventListener('drop', (e) => {
    e.preventDefault();
    dropzone.classList.remove('dragging');
    const files = e.dataTransfer?.files;
    if (!files?.length) return;
    if (files.length > 1) {
      status.set(h('span', { role: 'alert' }, 'Drop one file. For a Shapefile, put its files in one ZIP first.'), 'error');
      return;
    }
    start(files[0]!);
  });

  const recent = recentWorkspaces();
  const flash = app.takeFlash();
  return {
    title: 'Workspace',
    dispose: () => current?.abort(),
    node: h(
      'section',
      { class: 'workspace-upload' },
      h('h1', null, 'Workspace'),
      flash ? h('p', { class: 'notice', role: 'status' }, flash) : null,
      h('p', { class: 'lead' }, 'Upload a dataset to inspect its layers, preview it on a map, try transformations and convert it to another format. A Workspace is temporary and expires on its own.'),
      dropzone,
      progressBox,
      status.node,
      recent.length
        ? h(
            'section',
            { class: 'recent', 'aria-labelledby': 'recent-title' },
            h('h2', { id: 'recent-title' }, 'Recent Workspaces in this browser'),
            h(
              'ul',
              { class: 'plain-list' },
              recent.map((r) => h('li', null, h('a', { href: `#/workspace/${encodeURIComponent(r.id)}` }, r.filename), h('span', { class: 'hint' }, ' expires ', time(r.expires_at)))),
            ),
          )
        : null,
    ),
  };
}

// --- canvas --------------------------------------------------------------------------------------

const COMMON_FORMATS = ['GPKG', 'GeoJSON', 'ESRI Shapefile', 'FlatGeobuf', 'CSV', 'KML', 'GML', 'Parquet', 'XLSX', 'GTiff', 'COG', 'PNG', 'JPEG'];

/** Output formats of the dataset's kind that produce a file, common ones first. */
export function formatOptions(formats: Format[], kind: 'vector' | 'raster'): HTMLOptGroupElement[] {
  const writable = formats.filter((f) => f.write && f.kind === kind && f.extensions.length > 0);
  const label = (f: Format) => `${f.name} (.${f.extensions[0]})`;
  const common = COMMON_FORMATS.map((id) => writable.find((f) => f.id === id)).filter((f): f is Format => !!f);
  const rest = writable.filter((f) => !common.includes(f)).sort((a, b) => a.name.localeCompare(b.name));
  return [
    h('optgroup', { label: 'Common' }, common.map((f) => h('option', { value: f.id }, label(f)))),
    h('optgroup', { label: 'All formats' }, rest.map((f) => h('option', { value: f.id }, label(f)))),
  ];
}

/** Width, height, bands, pixel size of a raster; unknown keys are shown as they come. */
function rasterFacts(raster: Record<string, unknown>): HTMLElement {
  const fact = (term: string, value: string) => h('div', null, h('dt', null, term), h('dd', null, value));
  const { width, height, bands, crs, geotransform, ...rest } = raster as {
    width?: number;
    height?: number;
    bands?: { type: string; no_data: number | null }[];
    crs?: string | null;
    geotransform?: number[] | null;
  } & Record<string, unknown>;
  return h(
    'dl',
    { class: 'facts', 'data-testid': 'raster' },
    width !== undefined && height !== undefined ? fact('Size', `${count(width)} × ${count(height)} pixels`) : null,
    Array.isArray(bands)
      ? fact('Bands', `${bands.length}: ${[...new Set(bands.map((b) => b.type))].join(', ')}${bands.some((b) => b.no_data !== null) ? `, no data ${bands.find((b) => b.no_data !== null)!.no_data}` : ''}`)
      : null,
    fact('CRS', crs ?? 'Not set'),
    Array.isArray(geotransform) && geotransform.length === 6
      ? [fact('Pixel size', `${geotransform[1]} × ${Math.abs(geotransform[5]!)}`), fact('Origin', `${geotransform[0]}, ${geotransform[3]}`)]
      : null,
    Object.entries(rest).map(([k, v]) => fact(k, typeof v === 'object' ? JSON.stringify(v) : String(v))),
  );
}

interface PreviewColumn {
  node: HTMLElement;
  mapBox: HTMLElement;
  mapNote: HTMLElement;
  table: HTMLElement;
}

function previewColumn(title: string, testId: string): PreviewColumn {
  const headingId = uid('preview');
  const mapBox = h('div', { class: 'map', 'data-testid': `${testId}-map` });
  const mapNote = h('p', { class: 'map-note', role: 'status' });
  const table = h('div', { class: 'preview-data', 'data-testid': `${testId}-table` });
  const node = h('section', { class: 'preview-column', 'aria-labelledby': headingId, 'data-testid': testId }, h('h3', { id: headingId }, title), mapBox, mapNote, table);
  return { node, mapBox, mapNote, table };
}

export async function workspacePage({ app, params }: PageContext): Promise<Page> {
  const id = params.id!;
  const path = `/workspaces/${encodeURIComponent(id)}`;
  let ws: Workspace;
  try {
    ws = await get<Workspace>(path);
  } catch (error) {
    if (error instanceof ApiError && (error.code === 'job_expired' || error.code === 'job_not_found')) {
      return {
        title: 'Workspace not available',
        node: h(
          'section',
          null,
          h('h1', null, 'This Workspace is not available'),
          h('p', { class: 'alert', role: 'alert' }, error.message),
          h('p', null, h('a', { class: 'button', href: '#/workspace' }, 'Upload a file')),
        ),
      };
    }
    throw error;
  }
  remember(ws);
  const [catalog, formats] = await Promise.all([app.transformations(), app.formats()]);
  const maps: MapHandle[] = [];
  let disposed = false;
  const flash = app.takeFlash();

  const layers = ws.layers;
  let selected: Layer | undefined = layers.find((l) => l.has_geometry) ?? layers[0];
  const isVector = ws.dataset_type === 'vector' && layers.length > 0;

  // --- facts ---
  const facts = h('dl', { class: 'facts' });
  function renderFacts() {
    const fact = (term: string, value: ReturnType<typeof time> | string) => h('div', null, h('dt', null, term), h('dd', null, value));
    replace(
      facts,
      fact('Format', `${ws.format}${ws.driver && ws.driver !== ws.format ? ` (${ws.driver})` : ''}`),
      fact('Kind', ws.dataset_type === 'vector' ? 'Vector' : 'Raster'),
      fact('Size', bytes(ws.size)),
      fact('CRS', ws.crs ?? 'Not set'),
      fact('Status', ws.status),
      fact('Expires', time(ws.expires_at)),
    );
  }
  renderFacts();

  // --- layers and fields ---
  const layerSelectId = uid('layer');
  const layerSelect = h('select', { id: layerSelectId }, layers.map((l) => h('option', { value: l.name }, l.name)));
  if (selected) layerSelect.value = selected.name;
  const layersTable = h('div');
  const fieldsBox = h('div');
  function renderLayers() {
    replace(
      layersTable,
      h(
        'div',
        { class: 'table-wrap', role: 'region', 'aria-label': 'Layers', tabindex: '0' },
        h(
          'table',
          { class: 'table compact', 'data-testid': 'layers' },
          h('thead', null, h('tr', null, ['Layer', 'Geometry', 'Features', 'CRS', 'Fields'].map((c) => h('th', { scope: 'col' }, c)))),
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
                h('td', null, l.crs ?? '—'),
                h('td', { class: 'num' }, String(l.fields.length)),
              ),
            ),
          ),
        ),
      ),
    );
    replace(
      fieldsBox,
      selected
        ? [
            h('h3', null, `Fields of ${selected.name}`),
            selected.fields.length
              ? h('ul', { class: 'field-chips', 'data-testid': 'fields' }, selected.fields.map((f) => h('li', null, h('span', { class: 'field-name' }, f.name), h('span', { class: 'field-type' }, f.type))))
              : h('p', { class: 'empty' }, 'This layer has no attribute fields.'),
          ]
        : null,
    );
  }
  renderLayers();

  // --- previews ---
  const original = previewColumn('Original', 'original');
  const transformed = previewColumn('Transformed', 'transformed');
  const previewSection = h(
    'section',
    { class: 'card', 'aria-labelledby': 'preview-title', id: 'preview' },
    h('h2', { id: 'preview-title' }, 'Preview'),
    h('p', { class: 'hint' }, 'Samples of the selected layer: up to 100 rows and 2,000 features on the map, in WGS 84. Convert gives the full result.'),
    h('div', { class: 'side-by-side' }, original.node, transformed.node),
  );
  let previewToken = 0;

  function disposeMaps(box: HTMLElement) {
    for (let i = maps.length - 1; i >= 0; i--) {
      const m = maps[i] as MapHandle & { box?: HTMLElement };
      if (m.box === box) {
        m.dispose();
        maps.splice(i, 1);
      }
    }
    replace(box);
  }

  async function fillColumn(column: PreviewColumn, kind: 'original' | 'transformed', token: number) {
    const layer = selected;
    if (!layer) return;
    const q = query({ layer: layer.name });
    const dataPath = kind === 'original' ? 'data-preview' : 'transform-preview';
    const mapPath = kind === 'original' ? 'spatial-preview' : 'transform-spatial-preview';
    disposeMaps(column.mapBox);
    column.mapBox.hidden = false;
    column.mapBox.classList.add('loading');
    column.mapNote.textContent = 'Loading the map…';
    replace(column.table, h('p', { class: 'empty' }, 'Loading rows…'));
    const data = get<DataPreview>(`${path}/${dataPath}${query({ layer: layer.name, limit: 100 })}`);
    const spatial = layer.has_geometry ? get<SpatialPreview>(`${path}/${mapPath}${q}`) : null;
    data.catch(() => undefined);
    spatial?.catch(() => undefined);

    if (!spatial) {
      column.mapBox.hidden = true;
      column.mapNote.textContent = 'No geometry: this layer is a table, so there is nothing to draw on a map.';
    } else {
      try {
        const s = await spatial;
        if (token !== previewToken || disposed) return;
        column.mapBox.classList.remove('loading');
        const handle = (await drawMap(column.mapBox, s.geojson, `${kind === 'original' ? 'Original' : 'Transformed'} map of ${layer.name}`)) as MapHandle & { box?: HTMLElement };
        if (token !== previewToken || disposed) {
          handle.dispose();
          return;
        }
        handle.box = column.mapBox;
        maps.push(handle);
        const total = s.feature_count === null ? `${count(s.returned_count)}${s.truncated ? '+' : ''}` : count(s.feature_count);
        const crs = s.source_crs && s.source_crs !== s.preview_crs ? `, reprojected from ${s.source_crs} to ${s.preview_crs}` : ` (${s.preview_crs})`;
        column.mapNote.textContent = `${count(s.returned_count)} of ${total} features drawn${crs}.`;
      } catch (error) {
        if (token !== previewToken || disposed) return;
        column.mapBox.classList.remove('loading');
        column.mapBox.hidden = true;
        column.mapNote.textContent =
          error instanceof ApiError && error.code === 'invalid_parameter' ? `No map: ${error.message}` : `The map could not be loaded: ${plainMessage(error)}`;
      }
    }
    try {
      const d = await data;
      if (token !== previewToken || disposed) return;
      replace(column.table, dataTable(d, kind === 'original' ? `${layer.name}, original` : `${layer.name}, transformed`));
    } catch (error) {
      if (token !== previewToken || disposed) return;
      replace(column.table, h('p', { class: 'alert', role: 'alert' }, plainMessage(error)));
    }
  }

  let pipelineActive = false;
  function loadPreviews(which: 'both' | 'transformed' = 'both') {
    const token = ++previewToken;
    if (which === 'both') void fillColumn(original, 'original', token);
    if (pipelineActive) void fillColumn(transformed, 'transformed', token);
    else {
      disposeMaps(transformed.mapBox);
      transformed.mapBox.hidden = true;
      transformed.mapNote.textContent = '';
      replace(transformed.table, h('p', { class: 'empty' }, 'No pipeline yet: apply one above to see its result next to the original.'));
    }
  }

  // --- pipeline ---
  const stored: Pipeline = { layers: [], operations: [], sql: null, python: null, ...ws.pipeline } as Pipeline;
  const pipeErrors = new FormErrors();
  const editor = operationEditor({
    catalog,
    operations: stored.operations,
    columns: () => selected?.fields.map((f) => f.name) ?? [],
    hasGeometry: () => selected?.has_geometry ?? false,
  });
  editor.attach(pipeErrors);

  const layerBoxes = layers.map((l) => {
    const boxId = uid('apply-layer');
    const box = h('input', { type: 'checkbox', id: boxId, value: l.name, checked: stored.layers.length ? stored.layers.includes(l.name) : l === selected });
    return { layer: l, box, row: h('div', { class: 'check-line' }, box, h('label', { for: boxId }, l.name)) };
  });
  const layersSet = h('fieldset', { class: 'field' }, h('legend', null, 'Apply to layers'), h('p', { class: 'hint' }, 'Other layers pass through unchanged.'), layerBoxes.map((b) => b.row));
  pipeErrors.add('layers', groupError(layersSet));

  const modeName = uid('mode');
  const modeOps = h('input', { type: 'radio', name: modeName, id: `${modeName}-ops`, value: 'operations', checked: stored.sql === null });
  const modeSql = h('input', { type: 'radio', name: modeName, id: `${modeName}-sql`, value: 'sql', checked: stored.sql !== null });
  const modeSet = h(
    'fieldset',
    { class: 'field mode' },
    h('legend', null, 'Transform with'),
    h('div', { class: 'segmented' }, h('div', { class: 'check-line' }, modeOps, h('label', { for: modeOps.id }, 'Operations')), h('div', { class: 'check-line' }, modeSql, h('label', { for: modeSql.id }, 'SQL query'))),
  );

  const sql = labelled(h('textarea', { class: 'mono code', rows: '6', spellcheck: 'false', placeholder: 'SELECT name, population FROM source WHERE population > 1000' }), {
    label: 'SQL query',
    hint: 'One SELECT reading from the relation named source (SQLite dialect). It runs in a sandbox without network or credentials.',
  });
  sql.control.value = stored.sql ?? '';
  pipeErrors.add('sql', sql.handle);

  // Recipes: load one into the editor
  const recipeSelectId = uid('recipe');
  const recipeSelect = h('select', { id: recipeSelectId }, h('option', { value: '' }, 'Loading Recipes…'));
  let recipes: Recipe[] = [];
  get<ListPage<Recipe>>('/recipes?limit=200')
    .then((page) => {
      recipes = page.items;
      replace(recipeSelect, h('option', { value: '' }, recipes.length ? 'Choose a Recipe…' : 'No Recipes saved yet'), recipes.map((r) => h('option', { value: r.id }, r.name)));
    })
    .catch(() => replace(recipeSelect, h('option', { value: '' }, 'Recipes could not be loaded')));
  const loadRecipe = h('button', { type: 'button', class: 'button secondary' }, 'Load');
  const recipeStatus = statusLine('status small');
  loadRecipe.addEventListener('click', () => {
    const r = recipes.find((x) => x.id === recipeSelect.value);
    if (!r) return;
    editor.set(r.operations);
    recipeStatus.set(`Loaded ${r.operations.length} operation${r.operations.length === 1 ? '' : 's'} from “${r.name}”. Apply to preview them.`, 'ok');
  });
  const recipeRow = h('div', { class: 'field' }, h('label', { for: recipeSelectId }, 'Start from a Recipe'), h('div', { class: 'inline' }, recipeSelect, loadRecipe), recipeStatus.node);

  const opsPane = h('div', { class: 'stack' }, editor.node, recipeRow);
  const sqlPane = h('div', { class: 'stack' }, sql.row);

  const pyToggle = h('input', { type: 'checkbox', id: uid('python'), checked: stored.python !== null });
  const pyFilename = labelled(input({ value: stored.python?.filename ?? 'step.py', spellcheck: 'false', class: 'mono' }), { label: 'Script file name' });
  const pyScript = labelled(
    h('textarea', {
      class: 'mono code',
      rows: '8',
      spellcheck: 'false',
      placeholder: 'import sys\nsrc, dst = sys.argv[1], sys.argv[2]\n# read src, write dst (e.g. with geopandas)',
    }),
    { label: 'Python script', hint: 'Runs after the transform in an isolated runtime without network; it gets the input file and the output file as its two arguments.' },
  );
  pyScript.control.value = stored.python?.script ?? '';
  pipeErrors.add('python.filename', pyFilename.handle).add('python.script', pyScript.handle).add('python', pyScript.handle);
  const pyPane = h('div', { class: 'stack python-pane' }, pyFilename.row, pyScript.row);
  const pyRow = h('div', { class: 'field field-check' }, h('div', { class: 'check-line' }, pyToggle, h('label', { for: pyToggle.id }, 'Also run a Python script')));

  function syncMode() {
    opsPane.hidden = !modeOps.checked;
    sqlPane.hidden = !modeSql.checked;
    pyPane.hidden = !pyToggle.checked;
    saveGroup.hidden = !modeOps.checked;
  }

  function pipelineBody(): Pipeline {
    return {
      layers: layers.length > 1 ? layerBoxes.filter((b) => b.box.checked).map((b) => b.layer.name) : [],
      operations: modeOps.checked ? editor.value() : [],
      sql: modeSql.checked ? sql.control.value : null,
      python: pyToggle.checked ? { script: pyScript.control.value, filename: pyFilename.control.value.trim() || 'step.py' } : null,
    };
  }

  const pipeStatus = statusLine();
  const apply = h('button', { type: 'submit', class: 'button' }, 'Apply and preview');
  const clear = h('button', { type: 'button', class: 'button secondary' }, 'Clear pipeline');
  clear.addEventListener('click', async () => {
    const ok = await confirmDialog({ title: 'Clear the pipeline?', message: 'The operations, SQL and Python step are removed from this Workspace. The uploaded file is never changed.', confirmLabel: 'Clear pipeline' });
    if (!ok) return;
    pipeErrors.clear();
    try {
      await busy(clear, 'Clearing…', () => put(`${path}/transformations`, { operations: [] }));
      editor.set([]);
      sql.control.value = '';
      pyToggle.checked = false;
      modeOps.checked = true;
      syncMode();
      pipelineActive = false;
      pipeStatus.set('Pipeline cleared.', 'ok');
      loadPreviews('transformed');
    } catch (error) {
      pipeErrors.show(error);
    }
  });

  const pipeForm = h(
    'form',
    {
      class: 'stack',
      'data-testid': 'pipeline',
      novalidate: true,
      onsubmit: async (event: Event) => {
        event.preventDefault();
        pipeErrors.clear();
        const body = pipelineBody();
        try {
          const saved = await busy(apply, 'Applying…', () => put<Pipeline>(`${path}/transformations`, body));
          pipelineActive = saved.operations.length > 0 || saved.sql !== null || saved.python !== null;
          pipeStatus.set(pipelineActive ? 'Pipeline saved on the Workspace; the transformed preview is loading below.' : 'The pipeline is empty: the result equals the original.', 'ok');
          loadPreviews('transformed');
          previewSection.scrollIntoView({ block: 'start' });
        } catch (error) {
          pipeErrors.show(error);
        }
      },
    },
    pipeErrors.summary,
    layers.length > 1 ? layersSet : null,
    modeSet,
    opsPane,
    sqlPane,
    pyRow,
    pyPane,
    h('div', { class: 'actions' }, apply, clear),
    pipeStatus.node,
  );
  pipeErrors.watch(pipeForm);
  modeOps.addEventListener('change', syncMode);
  modeSql.addEventListener('change', syncMode);
  pyToggle.addEventListener('change', syncMode);

  // Save as Recipe: the editor's operations, in one step
  const saveErrors = new FormErrors();
  const recipeName = labelled(input({ maxlength: '200', autocomplete: 'off', placeholder: 'e.g. Tidy parcels' }), { label: 'Recipe name' });
  saveErrors.add('name', recipeName.handle);
  editor.attach(saveErrors);
  const saveButton = h('button', { type: 'button', class: 'button secondary' }, 'Save as Recipe');
  const saveStatus = statusLine();
  async function saveAsRecipe() {
    saveErrors.clear();
    pipeErrors.clear();
    try {
      const r = await busy(saveButton, 'Saving…', () => post<Recipe>('/recipes', { name: recipeName.control.value.trim(), operations: editor.value() }));
      recipes = [r, ...recipes];
      replace(recipeSelect, h('option', { value: '' }, 'Choose a Recipe…'), recipes.map((x) => h('option', { value: x.id }, x.name)));
      recipeName.control.value = '';
      saveStatus.set(['Saved as Recipe ', h('a', { href: `#/recipes/${encodeURIComponent(r.id)}` }, `“${r.name}”`), '.'], 'ok');
    } catch (error) {
      saveErrors.show(error);
    }
  }
  saveButton.addEventListener('click', () => void saveAsRecipe());
  recipeName.control.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') {
      e.preventDefault();
      void saveAsRecipe();
    }
  });
  const saveGroup = h(
    'div',
    { class: 'save-recipe', role: 'group', 'aria-labelledby': 'save-recipe-title' },
    h('h3', { id: 'save-recipe-title' }, 'Save these operations as a Recipe'),
    saveErrors.summary,
    h('div', { class: 'inline align-end' }, recipeName.row, saveButton),
    saveStatus.node,
  );
  saveErrors.watch(saveGroup);
  syncMode();

  // --- convert and download ---
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
        h('p', null, h('strong', null, o.filename), ` · ${o.format} · ${bytes(o.size)}${o.layers.length ? ` · ${o.layers.length} layer${o.layers.length === 1 ? '' : 's'}` : ''}`),
        h('a', { class: 'button', href: `${API_BASE}${path}/download`, download: o.filename, 'data-testid': 'download' }, `Download ${o.filename}`),
      ),
    );
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
          renderFacts();
          renderOutput();
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

  // --- deliver ---
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

  layerSelect.addEventListener('change', () => {
    selected = layers.find((l) => l.name === layerSelect.value);
    renderLayers();
    loadPreviews();
  });

  pipelineActive = stored.operations.length > 0 || stored.sql !== null || stored.python !== null;
  if (isVector) loadPreviews();

  const node = h(
    'section',
    { class: 'canvas' },
    h('p', { class: 'breadcrumb' }, h('a', { href: '#/workspace' }, 'Workspace'), ' / '),
    h('div', { class: 'page-head' }, h('h1', null, ws.filename), h('a', { class: 'button secondary', href: '#/workspace' }, 'New upload')),
    flash ? h('p', { class: 'notice', role: 'status' }, flash) : null,
    facts,
    ws.warnings.length ? h('div', { class: 'notice' }, h('p', null, 'Warnings from the inspection:'), h('ul', null, ws.warnings.map((w) => h('li', null, w)))) : null,
    ws.errors.length ? h('div', { class: 'alert' }, h('ul', null, ws.errors.map((e) => h('li', null, e.message)))) : null,
    isVector
      ? [
          h(
            'section',
            { class: 'card', 'aria-labelledby': 'layers-title' },
            h('h2', { id: 'layers-title' }, 'Layers and fields'),
            layers.length > 1 ? h('div', { class: 'field' }, h('label', { for: layerSelectId }, 'Layer to preview'), layerSelect) : null,
            layersTable,
            fieldsBox,
          ),
          h(
            'section',
            { class: 'card', 'aria-labelledby': 'pipeline-title' },
            h('h2', { id: 'pipeline-title' }, 'Pipeline'),
            h('p', { class: 'hint' }, 'Transformations run on a copy at preview and convert time; the uploaded file is never changed.'),
            pipeForm,
            saveGroup,
          ),
          previewSection,
        ]
      : ws.raster
        ? h(
            'section',
            { class: 'card', 'aria-labelledby': 'raster-title' },
            h('h2', { id: 'raster-title' }, 'Raster'),
            rasterFacts(ws.raster),
          )
        : null,
    h('section', { class: 'card', 'aria-labelledby': 'convert-title' }, h('h2', { id: 'convert-title' }, 'Convert and download'), convertForm),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'deliver-title' },
      h('h2', { id: 'deliver-title' }, 'Deliver to a Destination'),
      h('p', { class: 'hint' }, 'Publishes the converted file to a saved Destination. Convert first: delivery never converts with guessed defaults.'),
      deliverForm,
    ),
  );

  return {
    title: ws.filename,
    node,
    dispose() {
      disposed = true;
      for (const m of maps) m.dispose();
      maps.length = 0;
    },
  };
}
