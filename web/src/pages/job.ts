/**
 * One Job: what it does, its actions (Run now, enable/disable, incremental sync reset and
 * reinitialize, edit, delete) and its Runs, which update live while one is queued or running.
 */
import { del, get, plainMessage, post } from '../api.js';
import { allConnections } from '../components/connections/kinds.js';
import { confirmDialog } from '../components/dialog.js';
import { disabledReason, jobStages, scheduleText, statusBadge, STEP_LABELS } from '../components/jobs/run-status.js';
import { runsTable } from '../components/jobs/runs-table.js';
import { h, replace, time } from '../dom.js';
import { busy, statusLine } from '../forms.js';
import type { Page, PageContext } from '../router.js';
import type { Job, Run, Transformation } from '../types.js';
import { routeText } from './jobs.js';
import { summarize } from './recipes.js';

const enc = encodeURIComponent;

function idempotencyKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** What each stage of the Job does, in one line each. */
function stagesText(job: Job, catalog: Transformation[]): HTMLElement {
  const { transform, python, convert } = jobStages(job);
  const items: [string, string][] = [
    [
      'extract',
      job.source_resource && Object.keys(job.source_resource).length
        ? Object.entries(job.source_resource)
            .map(([k, v]) => `${k} ${String(v)}`)
            .join(', ')
        : 'as configured',
    ],
    [
      'transform',
      !transform
        ? 'left out'
        : job.transform_mode === 'sql'
          ? `SQL: ${job.sql ?? ''}`
          : `${job.transform_mode === 'recipe' ? 'from a Recipe: ' : ''}${summarize(job.operations ?? [], catalog)}`,
    ],
    ['python', python ? `${job.python_filename ?? 'script'}` : 'left out'],
    ['convert', convert ? (job.output_format ?? '') : 'left out: delivered as read'],
    [
      'deliver',
      job.destination_target && Object.keys(job.destination_target).length
        ? Object.entries(job.destination_target)
            .map(([k, v]) => `${k} ${String(v)}`)
            .join(', ')
        : 'as configured',
    ],
  ];
  return h(
    'dl',
    { class: 'inline-facts stages-facts' },
    items.map(([step, text]) => [
      h('dt', null, STEP_LABELS[step] ?? step),
      h('dd', { class: step === 'transform' && job.transform_mode === 'sql' ? 'mono' : null }, text),
    ]),
  );
}

export async function jobPage({ app, params }: PageContext): Promise<Page> {
  const path = `/jobs/${enc(params.id!)}`;
  const [initial, catalog, sources, destinations] = await Promise.all([
    get<Job>(path),
    app.transformations().catch(() => [] as Transformation[]),
    allConnections('source'),
    allConnections('destination'),
  ]);
  let job = initial;
  const sourceMap = new Map(sources.map((c) => [c.id, c]));
  const destinationMap = new Map(destinations.map((c) => [c.id, c]));
  const flash = app.takeFlash();
  const status = statusLine();
  if (flash) status.set(flash, 'ok');

  const heading = h('h1', null, job.name);
  const facts = h('div');
  const actions = h('div', { class: 'actions job-actions' });
  const syncBox = h('div');

  const runs = runsTable(job.id, () => void reloadJob());

  async function reloadJob() {
    try {
      job = await get<Job>(path);
      render();
    } catch {
      // the Runs table shows connection problems; the facts keep their last state
    }
  }

  function render() {
    heading.textContent = job.name;
    const reason = disabledReason(job);
    replace(
      facts,
      h(
        'dl',
        { class: 'facts job-facts' },
        h('div', null, h('dt', null, 'Source → Destination'), h('dd', null, routeText(job, sourceMap, destinationMap))),
        h('div', null, h('dt', null, 'Schedule'), h('dd', null, scheduleText(job.schedule))),
        h(
          'div',
          null,
          h('dt', null, 'Next run (your time)'),
          h('dd', null, time(job.next_run_at, job.schedule ? (job.enabled ? '—' : 'Disabled') : 'Not scheduled')),
        ),
        h(
          'div',
          null,
          h('dt', null, 'State'),
          h('dd', null, h('span', { class: `badge ${job.enabled ? 'active' : 'expired'}` }, job.enabled ? 'Enabled' : 'Disabled')),
        ),
        h(
          'div',
          null,
          h('dt', null, 'Last Run'),
          h('dd', null, job.last_run ? h('a', { href: `#${path}/runs/${enc(job.last_run.id)}` }, statusBadge(job.last_run.status)) : 'Never run'),
        ),
      ),
      reason ? h('p', { class: 'notice warn', role: 'status' }, reason) : null,
      h('section', { class: 'card', 'aria-labelledby': 'stages-title' }, h('h2', { id: 'stages-title' }, 'What each Run does'), stagesText(job, catalog)),
    );
    renderActions();
    renderSync();
  }

  function renderActions() {
    const runNow = h('button', { type: 'button', class: 'button' }, 'Run now');
    runNow.addEventListener('click', async () => {
      try {
        const run = await busy(runNow, 'Starting…', () => post<Run>(`${path}/run`, undefined, { headers: { 'idempotency-key': idempotencyKey() } }));
        status.set(['Started Run ', h('a', { href: `#${path}/runs/${enc(run.id)}` }, run.id), '; the Runs table below follows it.'], 'ok');
        runs.refresh();
      } catch (error) {
        status.set(plainMessage(error), 'error');
      }
    });
    const toggle = h('button', { type: 'button', class: 'button secondary' }, job.enabled ? 'Disable' : 'Enable');
    toggle.addEventListener('click', async () => {
      try {
        job = await busy(toggle, job.enabled ? 'Disabling…' : 'Enabling…', () => post<Job>(`${path}/${job.enabled ? 'disable' : 'enable'}`));
        status.set(job.enabled ? 'Job enabled: its schedule starts Runs again.' : 'Job disabled: its schedule starts no Runs until you enable it.', 'ok');
        render();
        actions.querySelector<HTMLButtonElement>('button:nth-child(2)')?.focus();
      } catch (error) {
        status.set(plainMessage(error), 'error');
      }
    });
    const remove = h('button', { type: 'button', class: 'button danger' }, 'Delete');
    remove.addEventListener('click', async () => {
      const ok = await confirmDialog({
        title: `Delete “${job.name}”?`,
        message: 'The Job and its schedule are removed; no more Runs start. Its Source and Destination stay.',
        confirmLabel: 'Delete Job',
        danger: true,
      });
      if (!ok) return;
      try {
        await busy(remove, 'Deleting…', () => del(path));
        app.flash(`Job “${job.name}” deleted.`);
        app.navigate('#/jobs');
      } catch (error) {
        status.set(plainMessage(error), 'error');
      }
    });
    replace(actions, runNow, toggle, h('a', { class: 'button secondary', href: `#${path}/edit` }, 'Edit'), h('span', { class: 'spacer' }), remove);
  }

  async function syncAction(kind: 'reset' | 'reinitialize', button: HTMLButtonElement) {
    const ok = await confirmDialog(
      kind === 'reset'
        ? {
            title: 'Reset incremental sync?',
            message:
              'The Job forgets how far it has read. The next Run reads the whole Source again and delivers it with the target’s write mode (appending may then duplicate rows). The Destination is not cleared.',
            confirmLabel: 'Reset sync',
          }
        : {
            title: 'Reinitialize the Destination?',
            message:
              'The next Run reads the whole Source again and rebuilds the target from it (loaded beside it, then swapped in), replacing what earlier Runs delivered.',
            confirmLabel: 'Reinitialize',
            danger: true,
          },
    );
    if (!ok) return;
    try {
      job = await busy(button, 'Saving…', () => post<Job>(`${path}/sync/${kind}`));
      status.set(kind === 'reset' ? 'Sync reset: the next Run reads everything.' : 'Reinitialize requested: the next Run rebuilds the target.', 'ok');
      render();
    } catch (error) {
      status.set(plainMessage(error), 'error');
    }
  }

  function renderSync() {
    const sync = job.sync;
    if (!sync?.supported) {
      replace(syncBox, h('p', { class: 'hint' }, 'Incremental sync: not available for this Source; every Run reads it whole.'));
      return;
    }
    const reset = h('button', { type: 'button', class: 'button secondary small' }, 'Reset sync…');
    const reinit = h('button', { type: 'button', class: 'button danger-quiet small' }, 'Reinitialize…');
    reset.addEventListener('click', () => void syncAction('reset', reset));
    reinit.addEventListener('click', () => void syncAction('reinitialize', reinit));
    // The cursor is the connector's own (a column value, an ETag …): its set parts, in words.
    const cursor = sync.cursor;
    const position: [string, string][] =
      cursor === null || cursor === undefined
        ? []
        : typeof cursor === 'object' && !Array.isArray(cursor)
          ? Object.entries(cursor as Record<string, unknown>)
              .filter(([, v]) => v !== null && v !== undefined && v !== '')
              .map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])
          : [['position', typeof cursor === 'string' ? cursor : JSON.stringify(cursor)]];
    const pending = sync.reinitialize_pending ? 'The next Run rebuilds the target.' : sync.reset_pending ? 'The next Run reads everything.' : null;
    replace(
      syncBox,
      h(
        'section',
        { class: 'card stack', 'aria-labelledby': 'sync-title' },
        h('h2', { id: 'sync-title' }, 'Incremental sync'),
        h(
          'p',
          null,
          position.length
            ? [
                'Read up to ',
                position.map(([k, v], i) => [i ? ', ' : '', `${k.replace(/_/g, ' ')} `, h('code', null, v)]),
                sync.updated_at ? [' (', time(sync.updated_at), ')'] : null,
                '.',
              ]
            : 'No position recorded yet: the next Run reads everything.',
        ),
        pending ? h('p', { class: 'notice' }, pending) : null,
        h('div', { class: 'actions' }, reset, reinit),
        h('p', { class: 'hint' }, 'Reset: read everything again and deliver it as usual. Reinitialize: read everything and rebuild the target from it.'),
      ),
    );
  }

  render();

  return {
    title: job.name,
    dispose: () => runs.dispose(),
    node: h(
      'section',
      { class: 'job-page' },
      h('p', { class: 'breadcrumb' }, h('a', { href: '#/jobs' }, 'Jobs'), ' / '),
      h('div', { class: 'page-head' }, heading),
      h('p', { class: 'hint' }, h('code', null, job.id), ' · created ', time(job.created_at), ', updated ', time(job.updated_at), '.'),
      actions,
      status.node,
      facts,
      syncBox,
      h('section', { class: 'card', 'aria-labelledby': 'runs-title' }, h('h2', { id: 'runs-title' }, 'Runs'), runs.node),
    ),
  };
}
