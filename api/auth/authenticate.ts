import type {} from '@fastify/cookie';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createAuthenticator } from '../../application/authentication.js';
import type { Services } from '../../application/services.js';
import type { Scope } from '../../domain/accounts/scopes.js';
import { forbidden, unauthorized } from '../errors.js';
import { SESSION_COOKIE, type AuthRule } from './principal.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Authenticates every request before its body is read (an anonymous upload is refused before a
 * byte is streamed), then checks the route's rule: public, session only, or scopes. Who a
 * credential is comes from application/authentication.ts; this is the HTTP around it.
 */
export async function registerAuthentication(app: FastifyInstance, services: Services): Promise<void> {
  const authenticator = await createAuthenticator(services);
  app.addHook('onClose', async () => authenticator.close());

  /** Cookie-authenticated writes from a browser must come from our own origin (CSRF). */
  function checkOrigin(request: FastifyRequest) {
    const origin = request.headers.origin;
    if (!origin) return; // not a browser form post: SameSite=Lax already keeps the cookie off cross-site requests
    const allowed = services.config.publicOrigin ?? `${request.protocol}://${request.headers.host}`;
    if (origin !== allowed) throw forbidden(`Cross-origin request from ${origin} refused`);
  }

  async function authenticate(request: FastifyRequest) {
    const rule: AuthRule | undefined = request.routeOptions.config?.auth;

    const header = request.headers.authorization;
    const cookie = request.cookies?.[SESSION_COOKIE];
    if (header !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!match) throw unauthorized('The Authorization header must be "Bearer <personal access token>"');
      request.principal = await authenticator.fromToken(match[1]!);
    } else if (cookie) {
      const principal = await authenticator.fromSession(cookie);
      if (!SAFE_METHODS.has(request.method)) checkOrigin(request);
      request.principal = principal;
    } else {
      throw unauthorized();
    }

    if (rule && 'session' in rule && request.principal.kind !== 'session') {
      throw forbidden('This route needs a browser session; a personal access token cannot create, list or revoke tokens');
    }
    if (rule && 'scopes' in rule) {
      const missing = rule.scopes.filter((s: Scope) => !request.principal!.scopes.includes(s));
      if (missing.length) {
        throw forbidden(`The token lacks the scope${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`, { missing_scopes: missing });
      }
    }
  }

  // Attached to each route that is not public as it is added (so a public route, and the 404
  // handler, pay nothing); every route added after this point goes through it.
  app.addHook('onRoute', (route) => {
    const rule: AuthRule | undefined = route.config?.auth;
    if (rule && 'public' in rule) return;
    route.onRequest = [authenticate, ...[route.onRequest ?? []].flat()] as typeof route.onRequest;
  });
}
