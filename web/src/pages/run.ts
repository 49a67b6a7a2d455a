/**
 * One Run: its status (followed live while queued or running), its steps with durations, the
 * counts, the error, Retry for a failed Run, and the Temporal workflow behind it (linked to the
 * Temporal UI when the server says where that is).
 */
import { get, plainMessage, post } from '../api.js';
import { live } from '../components/jobs/live.js';
import { progressText } from '../components/progress-text.js';
import { runLog } from '../components/jobs/run-log.js';
import { duration, isFinished, runDuration, skippedText, statusBadge, STEP_LABELS, TRIGGER_LABELS } from '../components/jobs/run-status.js';
import { bytes, count, focusQuietly, h, replace, time, titledSection } from '../dom.js';
import { busy, statusLine } from '../forms.js';
import type { Page, PageContext } from '../router.js';
import type { Job, Run, RunStep, System } from '../types.js';
import { columnHeads, tableRegion } from '../components/table-region.js';

const enc = encodeURIComponent;

function temporalLink(system: System | null, run: Run): HTMLElement | null {
  if (!run.workflow) return null;
  const ui = system?.temporal_ui;
  const id = h('code', null, run.workflow.workflow_id);
  if (!ui) return h('p', null, 'Temporal workflow ', id, run.workflow.run_id ? [' (run ', h('code', null, run.workflow.run_id), ')'] : null, '.');
  const href = `${ui.url}/namespaces/${enc(ui.namespace)}/workflows/${enc(run.workflow.workflow_id)}${run.workflow.run_id ? `/${enc(run.workflow.run_id)}/history` : ''}`;
  return h(
    'p',
    null,
    'Temporal workflow ',
    id,
    ': ',
    h('a', { href, target: '_blank', rel: 'noopener noreferrer', 'data-testid': 'temporal-link' }, 'open it in the Temporal UI'),
    '.',
  );
}

export async function runPage({ app, params }: PageContext): Promise<Page> {
  const jobPath = `/jobs/${enc(params.id!)}`;
  const path = `${jobPath}/runs/${enc(params.runId!)}`;
  const [initial, job, system] = await Promise.all([get<Run>(path), get<Job>(jobPath).catch(() => null), app.system().catch(() => null)]);
  let run = initial;

  const heading = h('h1', null);
  const summary = h('div');
  const steps = h('div');
  const log = h('div');
  const errorBox = h('div');
  const workflow = h('div');
  const status = statusLine();
  const announce = h('p', { class: 'visually-hidden', role: 'status', 'aria-live': 'polite' });

  function render() {
    heading.replaceChildren(`Run ${run.id} `, statusBadge(run.status));
    replace(
      summary,
      h(
        'dl',
        { class: 'facts run-facts' },
        h('div', null, h('dt', null, 'Status'), h('dd', { 'data-testid': 'run-status' }, statusBadge(run.status))),
        h('div', null, h('dt', null, 'Trigger'), h('dd', null, TRIGGER_LABELS[run.trigger] ?? run.trigger, run.attempt > 1 ? ` (attempt ${run.attempt})` : '')),
        h('div', null, h('dt', null, 'Queued'), h('dd', null, time(run.created_at))),
        h('div', null, h('dt', null, 'Started'), h('dd', null, time(run.started_at))),
        h('div', null, h('dt', null, 'Finished'), h('dd', null, time(run.finished_at))),
        h('div', null, h('dt', null, 'Duration'), h('dd', null, duration(runDuration(run)))),
        h('div', null, h('dt', null, 'Features read'), h('dd', null, run.stats.features_read === null ? '—' : count(run.stats.features_read))),
        h('div', null, h('dt', null, 'Features written'), h('dd', null, run.stats.features_written === null ? '—' : count(run.stats.features_written))),
        h('div', null, h('dt', null, 'Bytes read'), h('dd', null, bytes(run.stats.bytes_read))),
        h('div', null, h('dt', null, 'Bytes written'), h('dd', null, bytes(run.stats.bytes_written))),
      ),
      run.retry_of
        ? h(
            'p',
            null,
            'A retry of ',
            h('a', { href: `#${jobPath}/runs/${enc(run.retry_of)}` }, run.retry_of),
            run.retry_definition === 'original' ? ', as it ran (its own Job snapshot and values).' : ', with the Job as it was when retried.',
          )
        : null,
      run.triggered_by
        ? h(
            'p',
            null,
            'Started when ',
            h('a', { href: `#/jobs/${enc(run.triggered_by.job_id)}/runs/${enc(run.triggered_by.run_id)}` }, `Run ${run.triggered_by.run_id}`),
            ' of another Job ended.',
          )
        : null,
      run.started_runs.length
        ? h(
            'p',
            null,
            'Its end started ',
            run.started_runs.map((r, i) => [i ? ', ' : '', h('a', { href: `#/jobs/${enc(r.job_id)}/runs/${enc(r.run_id)}` }, `Run ${r.run_id}`)]),
            ' of the Jobs that run after this one.',
          )
        : null,
      Object.keys(run.parameters).length
        ? h(
            'p',
            null,
            'Parameters: ',
            Object.entries(run.parameters).map(([k, v], i) => [i ? ', ' : '', h('code', null, `${k} = ${String(v)}`)]),
            run.delivery_id ? [' (webhook delivery ', h('code', null, run.delivery_id), ')'] : null,
          )
        : run.delivery_id
          ? h('p', null, 'Webhook delivery ', h('code', null, run.delivery_id), '.')
          : null,
      run.retried_by ? h('p', null, 'Retried as ', h('a', { href: `#${jobPath}/runs/${enc(run.retried_by)}` }, run.retried_by), '.') : null,
      run.skipped_reason ? h('p', { class: 'notice' }, skippedText(run.skipped_reason)) : null,
    );
    replace(
      steps,
      run.steps.length
        ? tableRegion(
            'Steps',
            { class: 'table steps cards' },
            columnHeads(['Step', 'Status', 'Started', 'Finished', 'Duration']),
            h(
              'tbody',
              null,
              run.steps.map((s) =>
                h(
                  'tr',
                  { 'data-step': s.name, 'data-status': s.status },
                  h('th', { scope: 'row' }, STEP_LABELS[s.name] ?? s.name),
                  h('td', { 'data-label': 'Status' }, statusBadge(s.status), progressNote(s), attemptsNote(s)),
                  h('td', { 'data-label': 'Started' }, time(s.started_at)),
                  h('td', { 'data-label': 'Finished' }, time(s.finished_at)),
                  h(
                    'td',
                    { class: 'num', 'data-label': 'Duration' },
                    duration(s.duration_ms ?? (s.started_at && s.status === 'running' ? runDuration(s) : null)),
                  ),
                ),
              ),
            ),
          )
        : h('p', { class: 'empty' }, 'The steps appear once the Run starts.'),
    );
    replace(
      errorBox,
      run.error
        ? h(
            'section',
            { class: 'card run-error', 'aria-labelledby': 'error-title', 'data-testid': 'run-error' },
            h('h2', { id: 'error-title' }, 'What went wrong'),
            h('p', { class: 'alert' }, run.error.message),
            h(
              'dl',
              { class: 'inline-facts' },
              h('dt', null, 'code'),
              h('dd', null, h('code', null, run.error.code)),
              run.error.step ? [h('dt', null, 'step'), h('dd', null, STEP_LABELS[run.error.step] ?? run.error.step)] : null,
              run.error.reason ? [h('dt', null, 'cause'), h('dd', null, run.error.reason.replace(/_/g, ' '))] : null,
              h('dt', null, 'retryable'),
              h('dd', null, run.error.retryable ? 'yes: a retry may succeed' : 'no: fix the Job or its connections first'),
            ),
            run.status === 'failed' && !run.retried_by && job ? retryButton() : null,
          )
        : null,
    );
    replace(log, runLog(run) ?? h('p', { class: 'empty' }, 'Each step says what it read and wrote once it has finished.'));
    replace(workflow, temporalLink(system, run));
  }

  function retryButton(): HTMLElement {
    const retry = (definition: 'current' | 'original', button: HTMLButtonElement) => async () => {
      try {
        const next = await busy(button, 'Retrying…', () => post<Run>(`${path}/retry`, { definition }));
        app.flash(`Retry started as Run ${next.id}.`);
        app.navigate(`#${jobPath}/runs/${enc(next.id)}`);
      } catch (error) {
        status.set(plainMessage(error), 'error');
      }
    };
    const button = h('button', { type: 'button', class: 'button' }, 'Retry');
    button.addEventListener('click', retry('current', button));
    const asItWas = h('button', { type: 'button', class: 'button secondary' }, 'Retry as it was');
    asItWas.addEventListener('click', retry('original', asItWas));
    return h(
      'div',
      { class: 'actions' },
      button,
      asItWas,
      h(
        'span',
        { class: 'hint' },
        'Retry runs the Job as it is now (with your fixes) and this Run’s parameter values; “as it was” runs this Run’s own snapshot again. This Run stays as it is.',
      ),
    );
  }

  render();
  const flash = app.takeFlash();
  if (flash) status.set(flash, 'ok');

  const poll = live(async () => {
    const before = run.status;
    run = await get<Run>(path);
    if (run.status !== before) {
      announce.textContent = `Run ${run.status}.`;
      // Retry appears in the error card: bring keyboard users to it when the Run fails.
      if (run.status === 'failed') queueMicrotask(() => focusQuietly(errorBox.querySelector('h2')));
    }
    render();
    return !isFinished(run.status);
  }, 1000);
  if (!isFinished(run.status)) poll.wake();

  return {
    title: `Run ${run.id}`,
    dispose: () => poll.stop(),
    node: h(
      'section',
      { class: 'run-page' },
      h(
        'p',
        { class: 'breadcrumb' },
        h('a', { href: '#/jobs' }, 'Jobs'),
        ' / ',
        job ? h('a', { href: `#${jobPath}` }, job.name) : `${run.job_snapshot.name} (deleted)`,
        ' / ',
      ),
      heading,
      announce,
      status.node,
      summary,
      errorBox,
      titledSection('card', 'steps', 'Steps', steps),
      titledSection('card', 'log', 'Log', log),
      titledSection('card', 'workflow', 'Behind the scenes', workflow),
    ),
  };
}

/** How far a running step is, as it last said: "1,234,567 features · 412 of 800 MB written · 51%". */
function progressNote(step: RunStep): HTMLElement | null {
  const text = step.status === 'running' && step.progress ? progressText(step.progress) : '';
  return text ? h('p', { class: 'hint progress', 'data-testid': 'step-progress' }, text) : null;
}

/** Failed attempts of a step, in words: while it runs, Temporal is retrying it. */
function attemptsNote(step: RunStep): HTMLElement | null {
  if (!step.failed_attempts || !step.last_error) return null;
  const n = step.failed_attempts;
  const attempts = n === 1 ? 'one failed attempt' : `${n} failed attempts`;
  const text =
    step.status === 'running'
      ? `Retrying after ${attempts}: ${step.last_error.message}`
      : step.status === 'failed'
        ? `Gave up after ${attempts}.`
        : `Succeeded after ${attempts} (the last: ${step.last_error.message})`;
  return h('p', { class: 'hint attempts', 'data-testid': 'failed-attempts' }, text);
}
