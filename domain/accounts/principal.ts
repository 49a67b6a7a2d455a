import type { Scope } from './scopes.js';

/** Who is calling, and with what rights. A session holds every scope; a PAT only its own. */
export interface Principal {
  userId: string;
  email: string;
  name: string;
  kind: 'session' | 'token';
  scopes: readonly Scope[];
  tokenId?: string;
}
