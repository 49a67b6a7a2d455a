/**
 * One Job: what it does, when it runs (its schedule's next Runs, its triggers, the Jobs that run
 * after it, its webhook), its actions (Run now, with parameters when it has them, enable/disable,
 * incremental sync reset and reinitialize, edit, delete) and its Runs, which update live while
 * one is queued or running.
 */
import { del, get, plainMessage, post } from '../api.js';
import { allConnections } from '../components/connections/kinds.js';
import { confirmDialog } from '../components/dialog.js';
import { deleteButton } from '../components/delete-button.js';
import { disabledReason, jobStages, scheduleText, statusBadge, STEP_LABELS } from '../components/jobs/run-status.js';
import { runNowDialog, type Values } from '../components/jobs/run-now-dialog.js';
import { runsTable } from '../components/jobs/runs-table.js';
import { h, replace, time, titledSection } from '../dom.js';
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
  const triggersBox = h('div');
  const jobNames = new Map<string, string>();
  const others = await get<{ items: Job[] }>('/jobs?limit=200').catch(() => ({ items: [] as Job[] }));
  for (const j of others.items) jobNames.set(j.id, j.name);

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
        h('div', null, h('dt', null, 'Schedule'), h('dd', null, scheduleText(job))),
        h(
          'div',
          null,
          h('dt', null, 'Next runs (your time)'),
          h(
            'dd',
            null,
            job.next_run_times.length
              ? h(
                  'ol',
                  { class: 'next-runs', 'data-testid': 'next-runs' },
                  job.next_run_times.map((t) => h('li', null, time(t))),
                )
              : job.schedule
                ? 'Disabled'
                : 'Not scheduled',
          ),
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
      titledSection('card', 'stages', 'What each Run does', stagesText(job, catalog)),
    );
    renderActions();
    renderSync();
    renderTriggers();
  }

  const jobLink = (id: string) => h('a', { href: `#/jobs/${enc(id)}` }, jobNames.get(id) ?? id);
  const WHEN: Record<string, string> = { succeeded: 'succeeds', failed: 'fails', any: 'succeeds or fails' };

  /** The secret of a webhook just issued: shown here once, with how to call it. */
  let shownSecret: { secret: string; url: string; auth: string } | null = null;

  async function webhookAction(kind: 'issue' | 'revoke', button: HTMLButtonElement, auth: 'hmac' | 'bearer' = 'hmac') {
    if (kind === 'revoke') {
      const ok = await confirmDialog({
        title: 'Revoke the webhook?',
        message: 'Its URL stops starting Runs at once; callers get 401. You can issue a new one later (with a new secret).',
        confirmLabel: 'Revoke',
        danger: true,
      });
      if (!ok) return;
    } else if (job.webhook) {
      const ok = await confirmDialog({
        title: 'Rotate the secret?',
        message: 'A new secret is made and shown once; the old one stops working at once, so update the callers.',
        confirmLabel: 'Rotate',
      });
      if (!ok) return;
    }
    try {
      if (kind === 'revoke') {
        await busy(button, 'Revoking…', () => del(`${path}/webhook`));
        shownSecret = null;
        status.set('Webhook revoked.', 'ok');
      } else {
        shownSecret = await busy(button, 'Issuing…', () => post<{ secret: string; url: string; auth: string }>(`${path}/webhook`, { auth }));
        status.set('Webhook issued: copy its secret now, it is not shown again.', 'ok');
      }
      job = await get<Job>(path);
      render();
    } catch (error) {
      status.set(plainMessage(error), 'error');
    }
  }

  function renderTriggers() {
    const issue = h('button', { type: 'button', class: 'button secondary small' }, job.webhook ? 'Rotate secret…' : 'Issue a webhook (signed)');
    issue.addEventListener('click', () => void webhookAction('issue', issue, job.webhook?.auth ?? 'hmac'));
    const bearer = h('button', { type: 'button', class: 'button secondary small' }, 'Issue with a bearer secret');
    bearer.addEventListener('click', () => void webhookAction('issue', bearer, 'bearer'));
    const revoke = h('button', { type: 'button', class: 'button danger-quiet small' }, 'Revoke…');
    revoke.addEventListener('click', () => void webhookAction('revoke', revoke));
    const secret = shownSecret;
    const example =
      secret &&
      (secret.auth === 'bearer'
        ? `curl -X POST '${secret.url}' -H 'Authorization: Bearer ${secret.secret}' -H 'X-Geoflow-Delivery: build-123'`
        : [
            `SECRET='${secret.secret}'; TS=$(date +%s); ID=build-123; BODY='{}'`,
            `SIG=$(printf '%s.%s.%s' "$TS" "$ID" "$BODY" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.* //')`,
            `curl -X POST '${secret.url}' -H 'Content-Type: application/json' -H "X-Geoflow-Timestamp: $TS" -H "X-Geoflow-Delivery: $ID" -H "X-Geoflow-Signature: sha256=$SIG" -d "$BODY"`,
          ].join('\n'));
    replace(
      triggersBox,
      titledSection(
        'card stack',
        'triggers',
        'Triggers',
        h(
          'dl',
          { class: 'facts' },
          h(
            'div',
            null,
            h('dt', null, 'When the Source changes'),
            h('dd', null, job.triggers.on_change ? `Checked every ${job.triggers.on_change.every_minutes} min` : 'Off'),
          ),
          h(
            'div',
            null,
            h('dt', null, 'Runs after'),
            h(
              'dd',
              null,
              job.triggers.after.length ? job.triggers.after.map((a, i) => [i ? '; ' : '', jobLink(a.job_id), ` ${WHEN[a.when] ?? a.when}`]) : 'No other Job',
            ),
          ),
          h(
            'div',
            null,
            h('dt', null, 'Runs before'),
            h(
              'dd',
              null,
              job.followers.length ? job.followers.map((f, i) => [i ? '; ' : '', jobLink(f.id), ` (when this Job ${WHEN[f.when] ?? f.when})`]) : 'No other Job',
            ),
          ),
          h(
            'div',
            null,
            h('dt', null, 'Webhook'),
            h(
              'dd',
              null,
              job.webhook
                ? [
                    h('code', { class: 'break' }, job.webhook.url),
                    ` (${job.webhook.auth === 'hmac' ? 'signed with HMAC' : 'bearer secret'}, issued `,
                    time(job.webhook.rotated_at ?? job.webhook.created_at),
                    ')',
                  ]
                : 'None',
            ),
          ),
        ),
        secret
          ? h(
              'div',
              { class: 'notice', role: 'status' },
              h('p', null, 'The webhook’s secret, shown this once: ', h('code', { class: 'break', 'data-testid': 'webhook-secret' }, secret.secret)),
              h('pre', { class: 'mono code' }, example),
            )
          : null,
        h('div', { class: 'actions' }, issue, job.webhook ? null : bearer, job.webhook ? revoke : null),
        job.parameters.length
          ? h(
              'div',
              null,
              h('h3', null, 'Parameters'),
              h(
                'ul',
                null,
                job.parameters.map((p) =>
                  h(
                    'li',
                    null,
                    h('code', null, `{{${p.name}}}`),
                    ` ${p.type}`,
                    p.default === null ? ', required' : [', default ', h('code', null, String(p.default))],
                    p.choices ? `, one of ${p.choices.join(', ')}` : '',
                    p.description ? ` — ${p.description}` : '',
                  ),
                ),
              ),
            )
          : null,
      ),
    );
  }

  function renderActions() {
    const runNow = h('button', { type: 'button', class: 'button' }, job.parameters.length ? 'Run now…' : 'Run now');
    const start = async (values?: Values) => {
      const key = idempotencyKey();
      const run = await busy(runNow, 'Starting…', () =>
        post<Run>(`${path}/run`, values ? { parameters: values } : undefined, { headers: { 'idempotency-key': key } }),
      );
      status.set(['Started Run ', h('a', { href: `#${path}/runs/${enc(run.id)}` }, run.id), '; the Runs table below follows it.'], 'ok');
      runs.refresh();
    };
    runNow.addEventListener('click', async () => {
      if (job.parameters.length) {
        await runNowDialog(job, (values) => start(values));
        return;
      }
      try {
        await start();
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
    const remove = deleteButton(app, {
      noun: 'Job',
      name: job.name,
      path,
      message: 'The Job and its schedule are removed; no more Runs start. Its Source and Destination stay.',
      listHref: '#/jobs',
      onError: (error) => status.set(plainMessage(error), 'error'),
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
      titledSection(
        'card stack',
        'sync',
        'Incremental sync',
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
      triggersBox,
      syncBox,
      titledSection('card', 'runs', 'Runs', runs.node),
    ),
  };
}
