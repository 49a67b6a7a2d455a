/**
 * Hash routes (#/recipes/rcp_…): the server only serves one page, and every link still works
 * after a reload. Routes are a list; the top navigation is the routes that have a `nav` entry,
 * in order, so a new capability (Sources, Destinations, Jobs) is one more entry in routes.ts.
 */
import type { App } from './app.js';

export interface PageContext {
  app: App;
  params: Record<string, string>;
  query: URLSearchParams;
}

export interface Page {
  title: string;
  node: HTMLElement;
  /** Called when the page is left (maps, uploads in flight). */
  dispose?: () => void;
}

export interface Route {
  /** `/recipes/:id` style; matched against the part of the hash before `?`. */
  path: string;
  /** Pages anyone can see (the login page); the others need a session. */
  public?: boolean;
  /** Top navigation entry; `match` tells which paths light it up. */
  nav?: { label: string; href: string; match: RegExp };
  render(context: PageContext): Page | Promise<Page>;
}

export interface Match {
  route: Route;
  params: Record<string, string>;
  query: URLSearchParams;
  path: string;
}

export function currentPath(): { path: string; query: URLSearchParams } {
  const raw = location.hash.replace(/^#/, '') || '/';
  const [path = '/', search = ''] = raw.split('?');
  return { path: path.startsWith('/') ? path : `/${path}`, query: new URLSearchParams(search) };
}

export function matchRoute(routes: Route[], path: string, query: URLSearchParams): Match | null {
  const parts = path.split('/').filter(Boolean);
  for (const route of routes) {
    const pattern = route.path.split('/').filter(Boolean);
    if (pattern.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let ok = true;
    pattern.forEach((segment, i) => {
      const part = parts[i]!;
      if (segment.startsWith(':')) params[segment.slice(1)] = decodeURIComponent(part);
      else if (segment !== part) ok = false;
    });
    if (ok) return { route, params, query, path };
  }
  return null;
}
