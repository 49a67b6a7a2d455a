import type { FastifyInstance, FastifyReply } from 'fastify';
import { createReadStream } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { ensureWebBuild } from '../../web/build.js';

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.geojson': 'application/geo+json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.woff2': 'font/woff2',
};

/**
 * The page's rules: scripts and API calls only from this origin; styles may be set inline
 * (Leaflet positions map panes that way); images from this origin, and from the operator's tile
 * service when one is set (SVC_BASEMAP_URL: its origin, never any https site).
 */
export function contentSecurityPolicy(basemapOrigin: string | null = null): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    `img-src 'self' data: blob:${basemapOrigin ? ` ${basemapOrigin}` : ''}`,
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The browser app (web/): index.html at `/`, the hashed bundle under `/assets/…`. Built on
 * registration when web/dist is missing or older than web/src. Public, like any login page: the
 * app itself calls /api/v1 with the session cookie.
 */
export async function registerWeb(app: FastifyInstance, options: { basemapOrigin?: string | null } = {}): Promise<void> {
  const dist = await ensureWebBuild();
  const policy = contentSecurityPolicy(options.basemapOrigin ?? null);
  const assets = path.join(dist, 'assets');
  const rule = { config: { auth: { public: true as const } }, schema: { hide: true } };

  const index = async (_request: unknown, reply: FastifyReply) => {
    const html = await readFile(path.join(dist, 'index.html'));
    return reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-cache')
      .header('content-security-policy', policy)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin')
      .send(html);
  };
  app.get('/', rule, index);
  app.get('/index.html', rule, index);

  app.get<{ Params: { '*': string } }>('/assets/*', rule, async (request, reply) => {
    const name = request.params['*'];
    const file = path.resolve(assets, name);
    const type = CONTENT_TYPES[path.extname(file)];
    if (!type || !file.startsWith(assets + path.sep) || name.includes('\0')) return reply.callNotFound();
    let size: number;
    try {
      const info = await stat(file);
      if (!info.isFile()) return reply.callNotFound();
      size = info.size;
    } catch {
      return reply.callNotFound();
    }
    return (
      reply
        .header('content-type', type)
        .header('content-length', size)
        // Every file name under assets/ carries a content hash: a new build has new names.
        .header('cache-control', 'public, max-age=31536000, immutable')
        .header('x-content-type-options', 'nosniff')
        .send(createReadStream(file))
    );
  });
}
