import type { FastifyInstance } from 'fastify';

/**
 * Which methods each route path answers, so a request with another method on a known path gets
 * 405 with an Allow header (RFC 9110) instead of a 404 that says the path does not exist.
 * Must be installed before the routes are added (it listens to onRoute).
 */
export function trackRouteMethods(app: FastifyInstance): (path: string) => string[] {
  const routes = new Map<string, { pattern: RegExp; methods: Set<string>; dynamic: number }>();
  app.addHook('onRoute', (route) => {
    const url = route.url;
    let entry = routes.get(url);
    if (!entry) {
      const source = url
        .split(/(:[A-Za-z0-9_]+|\*)/)
        .map((part) => (part === '*' ? '.*' : part.startsWith(':') ? '[^/]+' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
        .join('');
      entry = { pattern: new RegExp(`^${source}$`), methods: new Set(), dynamic: (url.match(/:[A-Za-z0-9_]+|\*/g) ?? []).length };
      routes.set(url, entry);
    }
    for (const method of [route.method].flat()) entry.methods.add(method);
  });
  return (path) => {
    const bare = path.length > 1 ? path.replace(/\/+$/, '') : path;
    // The most specific routes only, as the router prefers them and the document lists them:
    // /sources/test answers POST; /sources/:id (GET, PUT, DELETE) is another path.
    let best = Infinity;
    const allowed = new Set<string>();
    for (const { pattern, methods, dynamic } of routes.values()) {
      if (!pattern.test(bare) || dynamic > best) continue;
      if (dynamic < best) allowed.clear();
      best = dynamic;
      methods.forEach((m) => {
        allowed.add(m);
      });
    }
    return [...allowed].sort();
  };
}
