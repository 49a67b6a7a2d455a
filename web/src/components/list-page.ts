import { plainMessage } from '../api.js';
import { h, replace } from '../dom.js';
import type { statusLine } from '../forms.js';
import type { Page } from '../router.js';

type StatusLine = ReturnType<typeof statusLine>;

/** The frame of a list page: the heading with its "New …" button, a lead, the status line, the list. */
export function listPage(o: { title: string; newHref: string; newLabel: string; lead: string; status: StatusLine; body: HTMLElement }): Page {
  return {
    title: o.title,
    node: h(
      'section',
      null,
      h('div', { class: 'page-head' }, h('h1', null, o.title), h('a', { class: 'button', href: o.newHref }, o.newLabel)),
      h('p', { class: 'lead' }, o.lead),
      o.status.node,
      o.body,
    ),
  };
}

/** "Show more" while the server has another page; a failure to load it goes to the status line. */
export function showMore(cursor: string | null, load: (more: boolean) => Promise<void>, status: StatusLine): HTMLElement | null {
  return cursor ? h('button', { type: 'button', class: 'button secondary', onclick: () => void load(true).catch((e) => status.set(plainMessage(e), 'error')) }, 'Show more') : null;
}

/** The first load of a list; when it fails, the list's place says why. */
export function firstLoad(body: HTMLElement, load: (more: boolean) => Promise<void>): void {
  load(false).catch((error) => replace(body, h('p', { class: 'alert', role: 'alert' }, plainMessage(error))));
}
