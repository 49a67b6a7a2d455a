import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import * as accounts from '../../application/accounts.js';
import { LoginThrottle } from '../../application/login-throttle.js';
import type { Services } from '../../application/services.js';
import { SESSION_TTL_MS } from '../../application/sessions.js';
import { allScopes } from '../../domain/accounts/scopes.js';
import { DomainError } from '../../domain/errors.js';
import { requirePrincipal, SESSION_COOKIE } from '../auth/principal.js';
import { errorEnvelope } from '../errors.js';
import { timestamp } from '../schemas.js';
import { publicRoute } from '../public-route.js';

const user = z.object({ id: z.string(), email: z.string(), name: z.string() }).meta({ id: 'User' });
const me = user
  .extend({
    auth: z.object({ kind: z.enum(['session', 'token']), scopes: z.array(z.enum(allScopes as [string, ...string[]])) }),
    created_at: timestamp.optional(),
  })
  .meta({ id: 'Me' });

export function authRoutes(services: Services): FastifyPluginAsyncZod {
  const throttle = new LoginThrottle();

  return async (app) => {
    app.post(
      '/auth/login',
      publicRoute({
        tags: ['Account'],
        summary: 'Log in (browser): sets the svc_session cookie',
        body: z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024) }),
        response: { 200: z.object({ user }), 401: errorEnvelope, 422: errorEnvelope },
      }),
      async (request, reply) => {
        const { user, session } = await accounts.logIn(services, throttle, { ...request.body, ip: request.ip }, request.log).catch((error: unknown) => {
          // A throttled login says when to come back.
          const wait = error instanceof DomainError ? error.details.retry_after_seconds : undefined;
          if (wait !== undefined) reply.header('retry-after', String(wait));
          throw error;
        });
        reply.setCookie(SESSION_COOKIE, session, {
          path: '/',
          httpOnly: true,
          sameSite: 'lax',
          secure: request.protocol === 'https',
          maxAge: SESSION_TTL_MS / 1000,
        });
        return { user };
      },
    );

    app.post(
      '/auth/logout',
      publicRoute({ tags: ['Account'], summary: 'Log out (browser): ends the session', response: { 204: z.null() } }),
      async (request, reply) => {
        const value = request.cookies[SESSION_COOKIE];
        if (value) await accounts.logOut(services, value);
        reply.clearCookie(SESSION_COOKIE, { path: '/' });
        return reply.code(204).send(null);
      },
    );

    app.get(
      '/auth/me',
      {
        config: { auth: { scopes: ['account:read'] } },
        schema: { tags: ['Account'], summary: "The caller's profile", response: { 200: me, 401: errorEnvelope, 403: errorEnvelope } },
      },
      async (request) => {
        const p = requirePrincipal(request);
        return { id: p.userId, email: p.email, name: p.name, auth: { kind: p.kind, scopes: [...p.scopes] } };
      },
    );
  };
}
