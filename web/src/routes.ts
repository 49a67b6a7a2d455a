/**
 * Every page of the app. Entries with `nav` appear in the top bar, in this order. A later
 * capability adds its pages here, for example:
 *   { path: '/sources', nav: { label: 'Sources', href: '#/sources', match: /^\/sources/ }, render: sourcesPage },
 *   { path: '/sources/:id', render: sourcePage },
 */
import { accountPage } from './pages/account.js';
import { loginPage } from './pages/login.js';
import { recipeEditPage, recipesPage } from './pages/recipes.js';
import { workspacePage, workspaceUploadPage } from './pages/workspace.js';
import type { Route } from './router.js';

export const routes: Route[] = [
  { path: '/login', public: true, render: loginPage },
  { path: '/workspace', nav: { label: 'Workspace', href: '#/workspace', match: /^\/workspace/ }, render: workspaceUploadPage },
  { path: '/workspace/:id', render: workspacePage },
  { path: '/recipes', nav: { label: 'Recipes', href: '#/recipes', match: /^\/recipes/ }, render: recipesPage },
  { path: '/recipes/new', render: recipeEditPage },
  { path: '/recipes/:id', render: recipeEditPage },
  { path: '/account', nav: { label: 'Account', href: '#/account', match: /^\/account/ }, render: accountPage },
  { path: '/account/tokens', render: accountPage },
];
