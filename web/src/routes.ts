/** Every page of the app. Entries with `nav` appear in the top bar, in this order. */
import { accountPage } from './pages/account.js';
import { loginPage } from './pages/login.js';
import { recipeEditPage, recipesPage } from './pages/recipes.js';
import { workspacePage, workspaceUploadPage } from './pages/workspace.js';
import type { PageContext, Route } from './router.js';

/** Pages loaded on first use (their own chunk): the first page stays small. */
const jobs = () => import('./pages/jobs-pages.js');
const later =
  (pick: (m: Awaited<ReturnType<typeof jobs>>) => Route['render']): Route['render'] =>
  async (context: PageContext) =>
    pick(await jobs())(context);

export const routes: Route[] = [
  { path: '/login', public: true, render: loginPage },
  { path: '/workspace', nav: { label: 'Workspace', href: '#/workspace', match: /^\/workspace/ }, render: workspaceUploadPage },
  { path: '/workspace/:id', render: workspacePage },
  { path: '/jobs', nav: { label: 'Jobs', href: '#/jobs', match: /^\/jobs/ }, render: later((m) => m.jobsPage) },
  { path: '/jobs/new', render: later((m) => m.jobEditPage) },
  { path: '/jobs/:id', render: later((m) => m.jobPage) },
  { path: '/jobs/:id/edit', render: later((m) => m.jobEditPage) },
  { path: '/jobs/:id/runs/:runId', render: later((m) => m.runPage) },
  { path: '/sources', nav: { label: 'Sources', href: '#/sources', match: /^\/sources/ }, render: later((m) => m.connectionsPage('source')) },
  { path: '/sources/new', render: later((m) => m.connectionEditPage('source')) },
  { path: '/sources/:id', render: later((m) => m.connectionEditPage('source')) },
  {
    path: '/destinations',
    nav: { label: 'Destinations', href: '#/destinations', match: /^\/destinations/ },
    render: later((m) => m.connectionsPage('destination')),
  },
  { path: '/destinations/new', render: later((m) => m.connectionEditPage('destination')) },
  { path: '/destinations/:id', render: later((m) => m.connectionEditPage('destination')) },
  { path: '/recipes', nav: { label: 'Recipes', href: '#/recipes', match: /^\/recipes/ }, render: recipesPage },
  { path: '/recipes/new', render: recipeEditPage },
  { path: '/recipes/:id', render: recipeEditPage },
  { path: '/account', nav: { label: 'Account', href: '#/account', match: /^\/account/ }, render: accountPage },
  { path: '/account/tokens', render: accountPage },
];
