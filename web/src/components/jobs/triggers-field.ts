/**
 * A Job's triggers besides its schedule: run when its Source changes (checked every N minutes
 * with the connector's cheap check, for the Source types that have one), and run after other
 * Jobs of yours end (succeeded, failed, or either). The webhook trigger is issued on the Job's
 * page: it has a secret, which exists only once the Job does.
 */
import { h, uid } from '../../dom.js';
import { fieldset, groupError, labelled, type FormErrors } from '../../forms.js';
import { rowList } from '../row-list.js';
import type { Job, JobBody } from '../../types.js';

type Triggers = NonNullable<JobBody['triggers']>;
type When = 'succeeded' | 'failed' | 'any';
const WHEN: [When, string][] = [
  ['succeeded', 'succeeds'],
  ['failed', 'fails'],
  ['any', 'succeeds or fails'],
];

export interface TriggersField {
  node: HTMLElement;
  value(): Triggers;
  attach(errors: FormErrors): void;
}

export function triggersField(initial: Job['triggers'] | undefined, otherJobs: Pick<Job, 'id' | 'name'>[], changeCheckTypes: string[]): TriggersField {
  const onChange = h('input', { type: 'checkbox', id: uid('on-change'), checked: Boolean(initial?.on_change) });
  const every = labelled(
    h('input', {
      type: 'number',
      name: 'triggers.on_change.every_minutes',
      min: '1',
      max: '1440',
      step: '1',
      value: String(initial?.on_change?.every_minutes ?? 5),
    }),
    {
      label: 'Check every (minutes)',
      hint: `The Source is asked whether it changed since the last succeeded Run (ETag, checksum, project version or a cursor column), without downloading the data. Sources that can tell: ${changeCheckTypes.join(', ')}.`,
    },
  );
  const syncEvery = () => (every.row.hidden = !onChange.checked);
  onChange.addEventListener('change', syncEvery);
  syncEvery();

  function row(jobId = '', when: When = 'succeeded') {
    const job = h(
      'select',
      { 'aria-label': 'Run after this Job' },
      h('option', { value: '' }, 'Choose a Job…'),
      otherJobs.map((j) => h('option', { value: j.id }, j.name)),
    );
    job.value = jobId;
    const whenSelect = h(
      'select',
      { 'aria-label': 'When its Run' },
      WHEN.map(([value, label]) => h('option', { value }, label)),
    );
    whenSelect.value = when;
    const node = h('div', { class: 'after-row' }, h('span', null, 'After '), job, h('span', null, ' '), whenSelect);
    return { job, when: whenSelect, node };
  }
  const list = rowList({ class: 'after-rows', addLabel: 'Add a Job to run after', fresh: () => row(), focus: (e) => e.job });
  for (const a of initial?.after ?? []) list.push(row(a.job_id, a.when as When));
  const { rows, add, entries } = list;
  const after = fieldset(
    'field',
    'After other Jobs',
    h(
      'p',
      { class: 'hint' },
      'This Job runs when a Run of the Job named ends so (a Run that found its Source unchanged starts nothing). Jobs that would start each other in a circle are refused.',
    ),
    rows,
    otherJobs.length ? add : h('p', { class: 'hint' }, 'No other Jobs yet.'),
  );
  const afterError = groupError(after);
  const node = h(
    'div',
    { class: 'stack' },
    h('div', { class: 'field field-check' }, h('div', { class: 'check-line' }, onChange, h('label', { for: onChange.id }, 'Run when the Source changes'))),
    every.row,
    after,
  );
  return {
    node,
    value: () => ({
      on_change: onChange.checked ? { every_minutes: Number(every.control.value) } : null,
      after: entries.filter((e) => e.job.value).map((e) => ({ job_id: e.job.value, when: e.when.value as When })),
    }),
    attach(errors) {
      errors
        .add('triggers', afterError)
        .add('triggers.on_change', every.handle)
        .add('triggers.on_change.every_minutes', every.handle)
        .add('triggers.after', afterError);
    },
  };
}
