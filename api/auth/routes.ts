import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { allScopes } from '../../domain/accounts/scopes.js';
import { checkCredentials, loginKeys, LoginThrottle } from '../auth/accounts.js';
import { requirePrincipal } from '../auth/principal.js';
import { createSession, deleteSession, SESSION_COOKIE, SESSION_TTL_MS } from '../auth/sessions.js';
import { errorEnvelope, unauthorized } from '../errors.js';
import { timestamp } from '../schemas.js';
import type { Services } from '../../application/services.js';

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
      {
        config: { auth: { public: true } },
        schema: {
          security: [],
          tags: ['Account'],
          summary: 'Log in (browser): sets the svc_session cookie',
          body: z.object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024) }),
          response: { 200: z.object({ user }), 401: errorEnvelope, 422: errorEnvelope },
        },
      },
      async (request, reply) => {
        const now = services.clock().getTime();
        const keys = loginKeys(request.body.email, request.ip);
        const wait = throttle.attempt(keys, now);
        if (wait > 0) {
          const seconds = Math.ceil(wait / 1000);
          request.log.warn(
            { login: 'throttled', address: request.ip, retry_after_seconds: seconds },
            'login refused: too many failed logins for this account from this address',
          );
          reply.header('retry-after', String(seconds));
          throw unauthorized(`Too many failed logins for this account from this address; try again in ${seconds} seconds`, { retry_after_seconds: seconds });
        }
        const found = await checkCredentials(services, request.body.email, request.body.password);
        if (!found) {
          const { failures, retryAfterMs } = throttle.failed(keys, services.clock().getTime());
          request.log.warn({ login: 'failed', address: request.ip, failures, retry_after_seconds: Math.ceil(retryAfterMs / 1000) }, 'failed login');
          throw unauthorized('The e-mail or password is wrong');
        }
        const earlier = throttle.succeed(keys);
        if (earlier > 0)
          request.log.info({ login: 'succeeded', user_id: found.id, address: request.ip, failures_before: earlier }, 'login after failed attempts');
        const session = await createSession(services.pool, found.id, services.clock());
        reply.setCookie(SESSION_COOKIE, session, {
          path: '/',
          httpOnly: true,
          sameSite: 'lax',
          secure: request.protocol === 'https',
          maxAge: SESSION_TTL_MS / 1000,
        });
        return { user: found };
      },
    );

    app.post(
      '/auth/logout',
      {
        config: { auth: { public: true } },
        schema: { security: [], tags: ['Account'], summary: 'Log out (browser): ends the session', response: { 204: z.null() } },
      },
      async (request, reply) => {
        const value = request.cookies[SESSION_COOKIE];
        if (value) await deleteSession(services.pool, value);
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
