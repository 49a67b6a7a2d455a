import './styles.css';
import { type ApiError, plainMessage, post, setUnauthorizedHandler } from './api.js';
import { createApp } from './app.js';
import { focusQuietly, h, replace } from './dom.js';
import { currentPath, matchRoute, type Page } from './router.js';
import { routes } from './routes.js';

const app = createApp();

const nav = h('ul', { class: 'nav-links' });
const user = h('div', { class: 'user' });
const main = h('main', { id: 'main', tabindex: '-1' });
const header = h(
  'header',
  { class: 'topbar' },
  h(
    'a',
    {
      class: 'skip-link',
      href: '#main',
      onclick: (e: Event) => {
        e.preventDefault();
        focusQuietly(main);
      },
    },
    'Skip to content',
  ),
  h('a', { class: 'brand', href: '#/workspace' }, h('span', { class: 'brand-mark', 'aria-hidden': 'true' }), 'geoflow'),
  h('nav', { 'aria-label': 'Main' }, nav),
  user,
);

let current: Page | null = null;
let renderToken = 0;
let firstRender = true;

function renderChrome(path: string) {
  replace(
    nav,
    app.session
      ? routes
          .filter((r) => r.nav)
          .map((r) => {
            const active = r.nav!.match.test(path);
            return h('li', null, h('a', { href: r.nav!.href, 'aria-current': active ? 'page' : null }, r.nav!.label));
          })
      : null,
  );
  replace(
    user,
    app.session
      ? [
          h('span', { class: 'user-email', title: app.session.email }, app.session.email),
          h('button', { type: 'button', class: 'button secondary small', onclick: logout }, 'Log out'),
        ]
      : null,
  );
}

async function logout() {
  try {
    await post('/auth/logout');
  } catch {
    // the cookie is cleared server-side when it can be; the page forgets the session anyway
  }
  app.session = null;
  app.flash('You are logged out.');
  app.navigate('#/login');
}

async function render() {
  const token = ++renderToken;
  const { path, query } = currentPath();
  const match = matchRoute(routes, path, query);
  if (!match) {
    app.navigate(app.session ? '#/workspace' : '#/login');
    return;
  }
  if (!match.route.public && !app.session) {
    const next = location.hash && !location.hash.startsWith('#/login') ? location.hash : '';
    app.navigate(`#/login${next ? `?next=${encodeURIComponent(next)}` : ''}`);
    return;
  }
  if (path === '/login' && app.session) {
    app.navigate('#/workspace');
    return;
  }
  renderChrome(path);
  current?.dispose?.();
  current = null;
  main.setAttribute('aria-busy', 'true');
  let page: Page;
  try {
    page = await match.route.render({ app, params: match.params, query });
  } catch (error) {
    page = {
      title: 'Error',
      node: h('section', null, h('h1', null, 'This page could not be shown'), h('p', { class: 'alert', role: 'alert' }, plainMessage(error))),
    };
  }
  if (token !== renderToken) {
    page.dispose?.();
    return;
  }
  current = page;
  document.title = `${page.title} · geoflow`;
  replace(main, page.node);
  main.removeAttribute('aria-busy');
  // After navigation, screen reader and keyboard users start at the page heading.
  if (!firstRender) focusQuietly(main.querySelector('h1'));
  firstRender = false;
}

setUnauthorizedHandler((error: ApiError) => {
  if (!app.session) return;
  app.session = null;
  app.flash(error.message || 'Your session has ended; log in again.');
  const next = location.hash.startsWith('#/login') ? '' : location.hash;
  app.navigate(`#/login${next ? `?next=${encodeURIComponent(next)}` : ''}`);
});

async function boot() {
  document.body.append(header, main);
  try {
    await app.refreshSession();
  } catch (error) {
    replace(main, h('h1', null, 'The service is not reachable'), h('p', { class: 'alert', role: 'alert' }, plainMessage(error)));
    return;
  }
  window.addEventListener('hashchange', () => void render());
  await render();
}

void boot();
