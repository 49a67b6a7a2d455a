/**
 * Run Now for a Job with parameters: a modal form with one field per parameter (its default
 * filled in, a choice list when it has choices, a checkbox for a boolean). Resolves the values
 * to send, or null when cancelled. The server checks them; its refusal is shown in the dialog.
 */
import { h, uid } from '../../dom.js';
import type { Job } from '../../types.js';

type Parameter = Job['parameters'][number];
export type Values = Record<string, string | number | boolean>;

function control(p: Parameter): { node: HTMLElement; read(): string | number | boolean | undefined } {
  const id = uid(`run-${p.name}`);
  if (p.type === 'boolean') {
    const box = h('input', { type: 'checkbox', id, checked: p.default === true });
    return { node: h('div', { class: 'check-line' }, box, h('label', { for: id }, p.name)), read: () => box.checked };
  }
  let input: HTMLInputElement | HTMLSelectElement;
  if (p.choices?.length) {
    input = h(
      'select',
      { id },
      p.choices.map((c) => h('option', { value: String(c) }, String(c))),
    );
  } else {
    input = h('input', { id, type: p.type === 'date' ? 'date' : p.type === 'string' ? 'text' : 'number', step: p.type === 'integer' ? '1' : 'any' });
  }
  if (p.default !== null && p.default !== undefined) input.value = String(p.default);
  return {
    node: h(
      'div',
      { class: 'field' },
      h('label', { for: id }, p.name, p.default === null ? ' (required)' : ''),
      input,
      p.description ? h('p', { class: 'hint' }, p.description) : null,
    ),
    read: () => {
      const v = input.value.trim();
      if (v === '') return undefined;
      return p.type === 'integer' || p.type === 'number' ? Number(v) : v;
    },
  };
}

/** Asks for the values of a Run; `start` sends them and may throw (its message is shown, the dialog stays). */
export function runNowDialog(job: Pick<Job, 'name' | 'parameters'>, start: (values: Values) => Promise<void>): Promise<boolean> {
  const previous = document.activeElement as HTMLElement | null;
  return new Promise((resolve) => {
    const titleId = uid('run-title');
    const fields = job.parameters.map((p) => ({ p, ...control(p) }));
    const error = h('p', { class: 'notice warn', role: 'alert', hidden: true });
    const cancel = h('button', { type: 'button', class: 'button secondary', onclick: () => dialog.close('cancel') }, 'Cancel');
    const submit = h('button', { type: 'submit', class: 'button' }, 'Run now');
    const form = h(
      'form',
      {
        method: 'dialog',
        class: 'stack',
        onsubmit: async (event: Event) => {
          event.preventDefault();
          const values: Values = {};
          for (const f of fields) {
            const v = f.read();
            if (v !== undefined) values[f.p.name] = v;
          }
          submit.disabled = true;
          try {
            await start(values);
            dialog.close('started');
          } catch (e) {
            error.textContent = (e as Error).message;
            error.hidden = false;
          } finally {
            submit.disabled = false;
          }
        },
      },
      h('h2', { id: titleId }, `Run “${job.name}” now`),
      h('p', { class: 'hint' }, 'Values for this Run; the Run records them.'),
      fields.map((f) => f.node),
      error,
      h('div', { class: 'actions' }, cancel, submit),
    );
    const dialog = h('dialog', { class: 'dialog', 'aria-labelledby': titleId }, form);
    dialog.addEventListener('close', () => {
      dialog.remove();
      previous?.focus();
      resolve(dialog.returnValue === 'started');
    });
    document.body.append(dialog);
    dialog.showModal();
    (fields[0]?.node.querySelector('input, select') as HTMLElement | null)?.focus();
  });
}
