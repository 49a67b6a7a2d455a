import type { Principal } from '../../domain/accounts/principal.js';
import type { Scope } from '../../domain/accounts/scopes.js';

/** The cookie that carries a browser session (application/sessions.ts keeps what it names). */
export const SESSION_COOKIE = 'svc_session';

/** What a route demands. Routes without a rule need an authenticated caller and no scope. */
export type AuthRule = { public: true } | { session: true } | { scopes: Scope[] };

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthRule;
  }
  interface FastifyRequest {
    principal?: Principal;
  }
}

export function requirePrincipal(request: { principal?: Principal }): Principal {
  if (!request.principal) throw new Error('route reached without authentication; check its auth rule');
  return request.principal;
}
