import { h } from '../dom.js';

export interface ConfirmOptions {
  title: string;
  message: string;
  confirmLabel: string;
  cancelLabel?: string;
  danger?: boolean;
}

/**
 * A modal confirmation (<dialog>): focus starts on Cancel, Escape cancels, focus returns to
 * what had it before. Resolves true only when the confirm button was pressed.
 */
export function confirmDialog(options: ConfirmOptions): Promise<boolean> {
  const previous = document.activeElement as HTMLElement | null;
  return new Promise((resolve) => {
    const titleId = `dialog-title-${Date.now()}`;
    const cancel = h('button', { type: 'button', class: 'button secondary', onclick: () => dialog.close('cancel') }, options.cancelLabel ?? 'Cancel');
    const confirm = h(
      'button',
      { type: 'button', class: `button ${options.danger ? 'danger' : ''}`, onclick: () => dialog.close('confirm') },
      options.confirmLabel,
    );
    const dialog = h(
      'dialog',
      { class: 'dialog', 'aria-labelledby': titleId },
      h('h2', { id: titleId }, options.title),
      h('p', null, options.message),
      h('div', { class: 'actions' }, cancel, confirm),
    );
    dialog.addEventListener('close', () => {
      const ok = dialog.returnValue === 'confirm';
      dialog.remove();
      previous?.focus();
      resolve(ok);
    });
    document.body.append(dialog);
    dialog.showModal();
    cancel.focus();
  });
}
