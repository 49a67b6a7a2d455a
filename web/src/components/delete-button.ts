import { del } from '../api.js';
import type { App } from '../app.js';
import { h } from '../dom.js';
import { busy } from '../forms.js';
import { confirmDialog } from './dialog.js';

export interface DeleteButtonOptions {
  /** What is deleted, in the words of the page: "Job", "Recipe", "Source". */
  noun: string;
  name: string;
  /** Its API path (`/jobs/job_1`). */
  path: string;
  /** What deleting it does, for the confirmation. */
  message: string;
  /** Where to go once it is gone (its list). */
  listHref: string;
  onError(error: unknown): void;
}

/**
 * The Delete button of a saved resource's page: asks first, deletes, says so on the next page
 * and opens the list. A refusal (in use, 409) goes to `onError` and the page stays.
 */
export function deleteButton(app: App, o: DeleteButtonOptions): HTMLButtonElement {
  const button: HTMLButtonElement = h('button', { type: 'button', class: 'button danger' }, 'Delete');
  button.addEventListener('click', async () => {
    const ok = await confirmDialog({ title: `Delete “${o.name}”?`, message: o.message, confirmLabel: `Delete ${o.noun}`, danger: true });
    if (!ok) return;
    try {
      await busy(button, 'Deleting…', () => del(o.path));
      app.flash(`${o.noun} “${o.name}” deleted.`);
      app.navigate(o.listHref);
    } catch (error) {
      o.onError(error);
    }
  });
  return button;
}
