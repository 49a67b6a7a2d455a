import { get, post, put } from '../../api.js';
import { h, replace, uid, titledSection } from '../../dom.js';
import { busy, fieldset, FormErrors, groupError, input, labelled, statusLine, submitForm } from '../../forms.js';
import type { Layer, Page as ListPage, Pipeline, Recipe, Transformation } from '../../types.js';
import { confirmDialog } from '../dialog.js';
import { operationEditor } from '../operation-editor.js';

export const isActive = (p: Pipeline) => p.operations.length > 0 || p.sql !== null || p.python !== null;

export interface PipelinePanelOptions {
  workspacePath: string;
  stored: Pipeline;
  catalog: Transformation[];
  layers: Layer[];
  /** The layer being previewed: the editor suggests its columns. */
  selected: () => Layer | undefined;
  /** After the pipeline was saved or cleared: whether it does anything now. */
  onApplied: (active: boolean, options?: { scroll?: boolean }) => void;
}

/**
 * The pipeline editor of a Workspace: the layers it applies to, operations (with a Recipe to
 * start from) or one SQL SELECT, an optional Python step; apply, clear, and save the operations
 * as a Recipe.
 */
export function pipelinePanel({ workspacePath: path, stored, catalog, layers, selected, onApplied }: PipelinePanelOptions): HTMLElement {
  const pipeErrors = new FormErrors();
  const editor = operationEditor({
    catalog,
    operations: stored.operations,
    columns: () => selected()?.fields.map((f) => f.name) ?? [],
    hasGeometry: () => selected()?.has_geometry ?? false,
  });
  editor.attach(pipeErrors);

  const layerBoxes = layers.map((l) => {
    const boxId = uid('apply-layer');
    const box = h('input', { type: 'checkbox', id: boxId, value: l.name, checked: stored.layers.length ? stored.layers.includes(l.name) : l === selected() });
    return { layer: l, box, row: h('div', { class: 'check-line' }, box, h('label', { for: boxId }, l.name)) };
  });
  const layersSet = fieldset(
    'field',
    'Apply to layers',
    h('p', { class: 'hint' }, 'Other layers pass through unchanged.'),
    layerBoxes.map((b) => b.row),
  );
  pipeErrors.add('layers', groupError(layersSet));

  const modeName = uid('mode');
  const modeOps = h('input', { type: 'radio', name: modeName, id: `${modeName}-ops`, value: 'operations', checked: stored.sql === null });
  const modeSql = h('input', { type: 'radio', name: modeName, id: `${modeName}-sql`, value: 'sql', checked: stored.sql !== null });
  const modeSet = fieldset(
    'field mode',
    'Transform with',
    h(
      'div',
      { class: 'segmented' },
      h('div', { class: 'check-line' }, modeOps, h('label', { for: modeOps.id }, 'Operations')),
      h('div', { class: 'check-line' }, modeSql, h('label', { for: modeSql.id }, 'SQL query')),
    ),
  );

  const sql = labelled(
    h('textarea', { class: 'mono code', rows: '6', spellcheck: 'false', placeholder: 'SELECT name, population FROM source WHERE population > 1000' }),
    {
      label: 'SQL query',
      hint: 'One SELECT reading from the relation named source (SQLite dialect). It runs in a sandbox without network or credentials.',
    },
  );
  sql.control.value = stored.sql ?? '';
  pipeErrors.add('sql', sql.handle);

  // Recipes: load one into the editor
  const recipeSelectId = uid('recipe');
  const recipeSelect = h('select', { id: recipeSelectId }, h('option', { value: '' }, 'Loading Recipes…'));
  let recipes: Recipe[] = [];
  get<ListPage<Recipe>>('/recipes?limit=200')
    .then((page) => {
      recipes = page.items;
      replace(
        recipeSelect,
        h('option', { value: '' }, recipes.length ? 'Choose a Recipe…' : 'No Recipes saved yet'),
        recipes.map((r) => h('option', { value: r.id }, r.name)),
      );
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
  const recipeRow = h(
    'div',
    { class: 'field' },
    h('label', { for: recipeSelectId }, 'Start from a Recipe'),
    h('div', { class: 'inline' }, recipeSelect, loadRecipe),
    recipeStatus.node,
  );

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
    {
      label: 'Python script',
      hint: 'Runs after the transform in an isolated runtime without network; it gets the input file and the output file as its two arguments.',
    },
  );
  pyScript.control.value = stored.python?.script ?? '';
  pipeErrors.add('python.filename', pyFilename.handle).add('python.script', pyScript.handle).add('python', pyScript.handle);
  const pyPane = h('div', { class: 'stack python-pane' }, pyFilename.row, pyScript.row);
  const pyRow = h(
    'div',
    { class: 'field field-check' },
    h('div', { class: 'check-line' }, pyToggle, h('label', { for: pyToggle.id }, 'Also run a Python script')),
  );

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
    const ok = await confirmDialog({
      title: 'Clear the pipeline?',
      message: 'The operations, SQL and Python step are removed from this Workspace. The uploaded file is never changed.',
      confirmLabel: 'Clear pipeline',
    });
    if (!ok) return;
    pipeErrors.clear();
    try {
      await busy(clear, 'Clearing…', () => put(`${path}/transformations`, { operations: [] }));
      editor.set([]);
      sql.control.value = '';
      pyToggle.checked = false;
      modeOps.checked = true;
      syncMode();
      pipeStatus.set('Pipeline cleared.', 'ok');
      onApplied(false);
    } catch (error) {
      pipeErrors.show(error);
    }
  });

  const pipeForm = submitForm(
    pipeErrors,
    { class: 'stack', 'data-testid': 'pipeline' },
    async () => {
      const body = pipelineBody();
      try {
        const saved = await busy(apply, 'Applying…', () => put<Pipeline>(`${path}/transformations`, body));
        const active = isActive(saved);
        pipeStatus.set(
          active ? 'Pipeline saved on the Workspace; the transformed preview is loading below.' : 'The pipeline is empty: the result equals the original.',
          'ok',
        );
        onApplied(active, { scroll: true });
      } catch (error) {
        pipeErrors.show(error);
      }
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
      replace(
        recipeSelect,
        h('option', { value: '' }, 'Choose a Recipe…'),
        recipes.map((x) => h('option', { value: x.id }, x.name)),
      );
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

  return titledSection(
    'card',
    'pipeline',
    'Pipeline',
    h('p', { class: 'hint' }, 'Transformations run on a copy at preview and convert time; the uploaded file is never changed.'),
    pipeForm,
    saveGroup,
  );
}
