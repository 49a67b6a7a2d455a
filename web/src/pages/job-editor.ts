/**
 * The Job editor: one form that walks the Job from start to end. Source (and what to read) →
 * transform (operations with the canvas's editor, a Recipe, or SQL) → Python step → output
 * format → Destination (and where to write) → schedule → triggers, with the Job's run-time
 * parameters beside its name. Each stage that can be left out has a
 * switch, sent as an explicit `pipeline` flag, so a stage switched off stays off (the spec).
 */
import { get, post, put } from '../api.js';
import { connectionPicker, type ConnectionPickerOptions } from '../components/connections/connection-picker.js';
import { allConnections, isDatabase, KINDS } from '../components/connections/kinds.js';
import { jobStages } from '../components/jobs/run-status.js';
import { parametersField } from '../components/jobs/parameters-field.js';
import { scheduleField } from '../components/jobs/schedule-field.js';
import { triggersField } from '../components/jobs/triggers-field.js';
import { creationOptionsField } from '../components/creation-options.js';
import { readingOptions, splitReading } from '../components/workspace/reading-options.js';
import { operationEditor } from '../components/operation-editor.js';
import { h, uid } from '../dom.js';
import { busy, fieldset, FormErrors, groupError, input, labelled, submitForm } from '../forms.js';
import type { Page, PageContext } from '../router.js';
import type { ConnectionKind, Format, Job, JobBody, Page as ListPage, Recipe, TransformMode } from '../types.js';
import { summarize } from './recipes.js';

const COMMON = ['GPKG', 'GeoJSON', 'FlatGeobuf', 'ESRI Shapefile', 'CSV', 'Parquet', 'KML', 'GTiff', 'COG'];

/** Writable formats that make a file, vector then raster, common ones first; one writing both (GeoPackage) is listed once, under vector. */
function formatSelect(formats: Format[]): HTMLSelectElement {
  const vectorIds = new Set(formats.filter((f) => f.write && f.kind === 'vector').map((f) => f.id));
  const group = (kind: 'vector' | 'raster', label: string) => {
    const list = formats.filter((f) => f.write && f.kind === kind && f.extensions.length && (kind === 'vector' || !vectorIds.has(f.id)));
    const rank = (f: Format) => (COMMON.includes(f.id) ? COMMON.indexOf(f.id) : COMMON.length);
    list.sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name));
    return h(
      'optgroup',
      { label },
      list.map((f) => h('option', { value: f.id }, `${f.name} (.${f.extensions[0]})`)),
    );
  };
  return h(
    'select',
    { name: 'output_format' },
    h('option', { value: '' }, 'Choose a format…'),
    group('vector', 'Vector formats'),
    group('raster', 'Raster formats'),
  );
}

/** A numbered stage of the walk, with an optional switch that includes or leaves it out. */
function stage(n: number, title: string, options: { toggle?: { label: string; checked: boolean }; hint?: string }, ...content: (Node | null)[]) {
  const id = uid('stage');
  const toggle = options.toggle ? h('input', { type: 'checkbox', id: `${id}-on`, checked: options.toggle.checked }) : null;
  const body = h('div', { class: 'stack stage-body' }, content);
  const sync = () => (body.hidden = !!toggle && !toggle.checked);
  toggle?.addEventListener('change', sync);
  sync();
  const node = h(
    'section',
    { class: 'card stack job-stage', 'aria-labelledby': `${id}-title`, 'data-stage': String(n) },
    h('h2', { id: `${id}-title` }, h('span', { class: 'stage-number', 'aria-hidden': 'true' }, String(n)), title),
    options.hint ? h('p', { class: 'hint' }, options.hint) : null,
    toggle ? h('div', { class: 'field field-check' }, h('div', { class: 'check-line' }, toggle, h('label', { for: toggle.id }, options.toggle!.label))) : null,
    body,
  );
  return { node, on: () => !toggle || toggle.checked, toggle };
}

export async function jobEditPage({ app, params }: PageContext): Promise<Page> {
  const id = params.id;
  const [catalog, connectors, formats, sources, destinations, recipes, job, jobs] = await Promise.all([
    app.transformations(),
    app.connectors(),
    app.formats(),
    allConnections('source'),
    allConnections('destination'),
    get<ListPage<Recipe>>('/recipes?limit=200').then((p) => p.items),
    id ? get<Job>(`/jobs/${encodeURIComponent(id)}`) : Promise.resolve(null),
    get<ListPage<Job>>('/jobs?limit=200').then((p) => p.items),
  ]);

  const errors = new FormErrors();
  const name = labelled(
    input({ name: 'name', maxlength: '200', autocomplete: 'off', value: job?.name ?? '', placeholder: 'e.g. Parcels to the data lake, nightly' }),
    { label: 'Name', required: true },
  );
  errors.add('name', name.handle);
  const parameters = parametersField(job?.parameters);
  parameters.attach(errors);

  /** The Source or the Destination stage: a saved connection of that kind and what to read or write there. */
  function connectionStage(n: number, kind: ConnectionKind, hint: string, options: Omit<ConnectionPickerOptions, 'kind' | 'catalog'>, ...more: Node[]) {
    const picker = connectionPicker({ kind, catalog: connectors, ...options });
    picker.attach(errors);
    return { picker, stage: stage(n, KINDS[kind].noun, { hint }, picker.node, ...more) };
  }

  // 1. Source
  // The reading options (source_crs, x_column …) are kept apart from the connector's selector.
  const savedSource = splitReading(job?.source_resource);
  const reading = readingOptions({
    value: savedSource.reading,
    note: 'Only for files that do not say it themselves: a shapefile without .prj, a CSV of X/Y columns. Each Run opens what it reads with them.',
  });
  const { picker: source, stage: sourceStage } = connectionStage(
    1,
    'source',
    'Where each Run reads from, and what it reads.',
    { connections: sources, selectedId: job?.source_id, value: job ? savedSource.selector : null },
    reading.node,
  );
  reading.attach(errors, 'source_resource');

  // 2. Transform
  const stages = job ? jobStages(job) : { transform: false, python: false, convert: true };
  const modeName = uid('mode');
  const modes: { value: TransformMode; label: string }[] = [
    { value: 'manual', label: 'Operations' },
    { value: 'recipe', label: 'A Recipe' },
    { value: 'sql', label: 'SQL query' },
  ];
  const modeRadios = modes.map((m) =>
    h('input', { type: 'radio', name: modeName, id: `${modeName}-${m.value}`, value: m.value, checked: (job?.transform_mode ?? 'manual') === m.value }),
  );
  const modeSet = fieldset(
    'field mode',
    'Transform with',
    h(
      'div',
      { class: 'segmented' },
      modes.map((m, i) => h('div', { class: 'check-line' }, modeRadios[i]!, h('label', { for: modeRadios[i]!.id }, m.label))),
    ),
  );
  errors.add('transform_mode', groupError(modeSet));
  const mode = (): TransformMode => (modeRadios.find((r) => r.checked)?.value as TransformMode) ?? 'manual';

  const editor = operationEditor({ catalog, operations: job?.transform_mode === 'manual' ? (job.operations ?? []) : [] });
  editor.attach(errors);
  const outputFields = labelled(input({ name: 'output_fields', autocomplete: 'off', spellcheck: 'false', value: (job?.output_fields ?? []).join(', ') }), {
    label: 'Keep only these fields',
    hint: 'Optional: column names, separated by commas, in the order you want them. Empty keeps every field.',
  });
  errors.add('output_fields', outputFields.handle);
  const manualPane = h('div', { class: 'stack' }, editor.node, outputFields.row);

  const recipeSelect = labelled(
    h(
      'select',
      { name: 'recipe_id' },
      h('option', { value: '' }, recipes.length ? 'Choose a Recipe…' : 'No Recipes saved yet'),
      recipes.map((r) => h('option', { value: r.id }, r.name)),
    ),
    { label: 'Recipe', required: true, hint: 'Its operations are copied into the Job when you save; later edits of the Recipe do not change this Job.' },
  );
  recipeSelect.control.value = job?.recipe_id ?? '';
  const recipeSummary = h('p', { class: 'hint recipe-summary' });
  const showRecipe = () => {
    const r = recipes.find((x) => x.id === recipeSelect.control.value);
    recipeSummary.textContent = r
      ? `Operations: ${summarize(r.operations, catalog)}.`
      : job?.recipe_id && job.recipe_id === recipeSelect.control.value
        ? `Copied operations: ${summarize(job.operations ?? [], catalog)}.`
        : '';
  };
  recipeSelect.control.addEventListener('change', showRecipe);
  showRecipe();
  errors.add('recipe_id', recipeSelect.handle);
  const recipePane = h('div', { class: 'stack' }, recipeSelect.row, recipeSummary);

  const sql = labelled(
    h('textarea', {
      name: 'sql',
      class: 'mono code',
      rows: '5',
      spellcheck: 'false',
      placeholder: 'SELECT parcel_id, area, geometry FROM source WHERE area > 100',
    }),
    {
      label: 'SQL query',
      required: true,
      hint: 'One SELECT reading from the relation named source (SQLite dialect), run in a sandbox.',
    },
  );
  sql.control.value = job?.sql ?? '';
  errors.add('sql', sql.handle);
  const sqlPane = h('div', { class: 'stack' }, sql.row);
  const syncMode = () => {
    manualPane.hidden = mode() !== 'manual';
    recipePane.hidden = mode() !== 'recipe';
    sqlPane.hidden = mode() !== 'sql';
  };
  modeRadios.forEach((r) => {
    r.addEventListener('change', syncMode);
  });
  syncMode();
  const transformStage = stage(
    2,
    'Transform',
    {
      toggle: { label: 'Transform the data', checked: stages.transform },
      hint: 'The same operations as the Workspace canvas, a saved Recipe, or one SQL SELECT.',
    },
    modeSet,
    manualPane,
    recipePane,
    sqlPane,
  );

  // 3. Python step
  const pyFilename = labelled(input({ name: 'python_filename', class: 'mono', spellcheck: 'false', value: job?.python_filename ?? 'step.py' }), {
    label: 'Script file name',
  });
  const pyScript = labelled(
    h('textarea', {
      name: 'python_script',
      class: 'mono code',
      rows: '8',
      spellcheck: 'false',
      placeholder: 'import sys\nsrc, dst = sys.argv[1], sys.argv[2]\n# read src, write dst (e.g. with geopandas)',
    }),
    {
      label: 'Python script',
      required: true,
      hint: 'Runs after the transform in an isolated runtime without network; it gets the input file and the output file as its two arguments.',
    },
  );
  pyScript.control.value = job?.python_script ?? '';
  errors.add('python_filename', pyFilename.handle).add('python_script', pyScript.handle);
  const pythonStage = stage(3, 'Python step', { toggle: { label: 'Run a Python script', checked: stages.python } }, pyFilename.row, pyScript.row);

  // 4. Output format
  const format = labelled(formatSelect(formats), { label: 'Output format', required: true, hint: 'The file format delivered to the Destination.' });
  format.control.value = job?.output_format ?? '';
  errors.add('output_format', format.handle);
  const creation = creationOptionsField(job?.creation_options);
  errors.add('creation_options', creation.handle);
  const convertStage = stage(
    4,
    'Output format',
    { toggle: { label: 'Convert to a format', checked: stages.convert }, hint: 'Left out, the data is delivered in the format it was read in.' },
    format.row,
    creation.row,
  );

  // 5. Destination
  const { picker: destination, stage: destinationStage } = connectionStage(5, 'destination', 'Where each Run delivers, and how it writes there.', {
    connections: destinations,
    selectedId: job?.destination_id,
    value: job?.destination_target ?? null,
  });

  // A new Job converts to GeoPackage unless it goes from a database to a database (tables to
  // tables: no file format to choose), until the format stage is touched.
  let formatTouched = !!job;
  const touch = () => (formatTouched = true);
  convertStage.toggle?.addEventListener('change', touch);
  format.control.addEventListener('change', touch);
  const suggestConvert = () => {
    if (formatTouched || !convertStage.toggle) return;
    const tablesToTables = isDatabase(source.connector()) && isDatabase(destination.connector());
    convertStage.toggle.checked = !tablesToTables;
    convertStage.toggle.dispatchEvent(new Event('change'));
    formatTouched = false;
    format.control.value = tablesToTables ? '' : 'GPKG';
  };
  source.onChange(suggestConvert);
  destination.onChange(suggestConvert);
  suggestConvert();

  // 6. Schedule
  const schedule = scheduleField(job?.schedule);
  schedule.attach(errors);
  const enabled = h('input', { type: 'checkbox', id: uid('enabled'), checked: job?.enabled ?? true });
  const scheduleStage = stage(
    6,
    'Schedule',
    { hint: 'When Runs start on their own. Run Now works either way.' },
    schedule.node,
    h(
      'div',
      { class: 'field field-check' },
      h('div', { class: 'check-line' }, enabled, h('label', { for: enabled.id }, 'Enabled')),
      h('p', { class: 'hint' }, 'A disabled Job keeps its schedule but starts no Runs from it.'),
    ),
  );
  errors.add('enabled', groupError(scheduleStage.node));

  // 7. Triggers
  const triggers = triggersField(
    job?.triggers,
    jobs.filter((j) => j.id !== job?.id),
    connectors.filter((c) => c.capabilities.change_check).map((c) => c.type),
  );
  triggers.attach(errors);
  const triggersStage = stage(
    7,
    'Triggers',
    { hint: 'Other ways Runs start on their own: when the Source changes, or after another Job. The webhook trigger is issued on the Job’s page.' },
    triggers.node,
  );
  errors.add('pipeline', groupError(transformStage.node));

  function body(): JobBody {
    const transform = transformStage.on();
    const m = transform ? mode() : 'manual';
    const b: JobBody = {
      name: name.control.value.trim(),
      source_id: source.connection()?.id ?? '',
      source_resource: { ...source.selector(), ...reading.values() },
      transform_mode: m,
      operations: transform && m === 'manual' ? editor.value() : [],
      destination_id: destination.connection()?.id ?? '',
      destination_target: destination.selector(),
      schedule: schedule.value(),
      triggers: triggers.value(),
      parameters: parameters.value(),
      pipeline: { transform, python: pythonStage.on(), convert: convertStage.on() },
      enabled: enabled.checked,
    };
    const fields = outputFields.control.value
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    if (transform && m === 'manual' && fields.length) b.output_fields = fields;
    if (transform && m === 'recipe') b.recipe_id = recipeSelect.control.value || null;
    if (transform && m === 'sql') b.sql = sql.control.value;
    if (pythonStage.on()) {
      b.python_script = pyScript.control.value;
      b.python_filename = pyFilename.control.value.trim() || 'step.py';
    }
    if (convertStage.on()) b.output_format = format.control.value;
    return b;
  }

  const save = h('button', { type: 'submit', class: 'button' }, job ? 'Save changes' : 'Create Job');
  const form = submitForm(
    errors,
    { class: 'stack job-editor', 'data-testid': 'job-form' },
    async () => {
      const payload = body();
      if (convertStage.on()) {
        // Lines that are not KEY=VALUE are shown next to the field; the server checks the names.
        const options = creation.check();
        if (options === undefined) return creation.handle.focus();
        if (options) payload.creation_options = options;
      }
      if (!payload.source_id) errors.field('source_id', 'Choose the Source the Job reads from.');
      if (!payload.destination_id) errors.field('destination_id', 'Choose the Destination the Job delivers to.');
      if (!payload.source_id || !payload.destination_id) {
        (payload.source_id ? destination : source).node.querySelector('select')?.focus();
        return;
      }
      try {
        const saved = await busy(save, 'Saving…', () => (job ? put<Job>(`/jobs/${encodeURIComponent(job.id)}`, payload) : post<Job>('/jobs', payload)));
        app.flash(`Job “${saved.name}” saved.`);
        app.navigate(`#/jobs/${encodeURIComponent(saved.id)}`);
      } catch (error) {
        errors.show(error);
      }
    },
    errors.summary,
    h('div', { class: 'card stack' }, name.row, parameters.node),
    h(
      'ol',
      { class: 'job-stages' },
      [sourceStage, transformStage, pythonStage, convertStage, destinationStage, scheduleStage, triggersStage].map((s) => h('li', null, s.node)),
    ),
    h('div', { class: 'actions' }, save, h('a', { class: 'button secondary', href: job ? `#/jobs/${encodeURIComponent(job.id)}` : '#/jobs' }, 'Cancel')),
  );
  errors.watch(form);

  return {
    title: job ? `Edit ${job.name}` : 'New Job',
    node: h(
      'section',
      null,
      h(
        'p',
        { class: 'breadcrumb' },
        h('a', { href: '#/jobs' }, 'Jobs'),
        ' / ',
        job ? [h('a', { href: `#/jobs/${encodeURIComponent(job.id)}` }, job.name), ' / '] : null,
      ),
      h('h1', null, job ? `Edit “${job.name}”` : 'New Job'),
      h(
        'p',
        { class: 'lead' },
        'A Job reads from a Source, optionally transforms and converts, and delivers to a Destination: on a schedule, when its Source changes, after another Job, through its webhook, or when you press Run Now.',
      ),
      form,
    ),
  };
}
