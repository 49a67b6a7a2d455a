/** Every page of the app. Entries with `nav` appear in the top bar, in this order. */
import { accountPage } from './pages/account.js';
import { connectionEditPage, connectionsPage } from './pages/connections.js';
import { jobPage } from './pages/job.js';
import { jobEditPage } from './pages/job-editor.js';
import { jobsPage } from './pages/jobs.js';
import { loginPage } from './pages/login.js';
import { recipeEditPage, recipesPage } from './pages/recipes.js';
import { runPage } from './pages/run.js';
import { workspacePage, workspaceUploadPage } from './pages/workspace.js';
import type { Route } from './router.js';

export const routes: Route[] = [
  { path: '/login', public: true, render: loginPage },
  { path: '/workspace', nav: { label: 'Workspace', href: '#/workspace', match: /^\/workspace/ }, render: workspaceUploadPage },
  { path: '/workspace/:id', render: workspacePage },
  { path: '/jobs', nav: { label: 'Jobs', href: '#/jobs', match: /^\/jobs/ }, render: jobsPage },
  { path: '/jobs/new', render: jobEditPage },
  { path: '/jobs/:id', render: jobPage },
  { path: '/jobs/:id/edit', render: jobEditPage },
  { path: '/jobs/:id/runs/:runId', render: runPage },
  { path: '/sources', nav: { label: 'Sources', href: '#/sources', match: /^\/sources/ }, render: connectionsPage('source') },
  { path: '/sources/new', render: connectionEditPage('source') },
  { path: '/sources/:id', render: connectionEditPage('source') },
  { path: '/destinations', nav: { label: 'Destinations', href: '#/destinations', match: /^\/destinations/ }, render: connectionsPage('destination') },
  { path: '/destinations/new', render: connectionEditPage('destination') },
  { path: '/destinations/:id', render: connectionEditPage('destination') },
  { path: '/recipes', nav: { label: 'Recipes', href: '#/recipes', match: /^\/recipes/ }, render: recipesPage },
  { path: '/recipes/new', render: recipeEditPage },
  { path: '/recipes/:id', render: recipeEditPage },
  { path: '/account', nav: { label: 'Account', href: '#/account', match: /^\/account/ }, render: accountPage },
  { path: '/account/tokens', render: accountPage },
];
