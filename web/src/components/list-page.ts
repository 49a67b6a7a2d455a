import { get, plainMessage } from '../api.js';
import { h, replace, type Child } from '../dom.js';
import type { App } from '../app.js';
import { statusLine } from '../forms.js';
import type { Page } from '../router.js';
import type { Page as ListPage } from '../types.js';

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
  return cursor
    ? h('button', { type: 'button', class: 'button secondary', onclick: () => void load(true).catch((e) => status.set(plainMessage(e), 'error')) }, 'Show more')
    : null;
}

/** The first load of a list; when it fails, the list's place says why. */
export function firstLoad(body: HTMLElement, load: (more: boolean) => Promise<void>): void {
  load(false).catch((error) => replace(body, h('p', { class: 'alert', role: 'alert' }, plainMessage(error))));
}

/** A list the server answers in pages of 50: the items loaded so far and the cursor of the next page. */
export function pagedList<T>(path: string) {
  let items: T[] = [];
  let cursor: string | null = null;
  return {
    get items() {
      return items;
    },
    get cursor() {
      return cursor;
    },
    /** The first page again, or (`more`) the next one added to what is shown. */
    async fetch(more: boolean): Promise<void> {
      const page = await get<ListPage<T>>(`${path}?limit=50${more && cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      items = more ? [...items, ...page.items] : page.items;
      cursor = page.next_cursor;
    },
  };
}

export interface PagedListPageOptions<T, A> {
  title: string;
  newHref: string;
  newLabel: string;
  lead: string;
  /** The collection (`/jobs`), read 50 at a time. */
  path: string;
  /** What the rows need beside the items (the catalogue, the saved connections), loaded with each page. */
  also: () => Promise<A>;
  /** The list's place while the collection is empty. */
  empty: (also: A) => Child;
  table: (items: T[], also: A) => Child;
}

/**
 * A list page over a paged collection: "Loading …", the flash of the action that led here, the
 * list (or what to do while it is empty) and "Show more" while the server has more.
 */
export function pagedListPage<T, A>(app: App, o: PagedListPageOptions<T, A>): Page {
  const body = h('div', null, h('p', { class: 'empty' }, `Loading ${o.title}…`));
  const status = statusLine();
  const flash = app.takeFlash();
  if (flash) status.set(flash, 'ok');
  const list = pagedList<T>(o.path);

  async function load(more = false) {
    const [, also] = await Promise.all([list.fetch(more), o.also()]);
    if (!list.items.length) {
      replace(body, o.empty(also));
      return;
    }
    replace(body, o.table(list.items, also), showMore(list.cursor, load, status));
  }
  firstLoad(body, load);

  return listPage({ title: o.title, newHref: o.newHref, newLabel: o.newLabel, lead: o.lead, status, body });
}
