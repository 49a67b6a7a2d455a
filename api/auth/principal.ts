import type { Scope } from '../../domain/accounts/scopes.js';

/** Who is calling, and with what rights. A session holds every scope; a PAT only its own. */
export interface Principal {
  userId: string;
  email: string;
  name: string;
  kind: 'session' | 'token';
  scopes: readonly Scope[];
  tokenId?: string;
}

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
