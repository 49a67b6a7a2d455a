import type { Principal } from '../domain/accounts/principal.js';
import { allScopes, isScope } from '../domain/accounts/scopes.js';
import { TOKEN_USE_RESOLUTION_MS, tokenDecider, tokenStream } from '../domain/accounts/token.js';
import { DomainError } from '../domain/errors.js';
import { tokenBySha256, userById } from '../projections/accounts.js';
import { record } from './commands.js';
import { PrincipalCache, type CachedToken } from './principal-cache.js';
import type { Services } from './services.js';
import { sessionUser } from './sessions.js';
import { looksLikeToken, sha256Hex } from './tokens.js';

const unauthorized = (message: string) => new DomainError('unauthorized', message);

/** Turns a request's credential into its principal; the API's authentication hook (api/auth/authenticate.ts) asks it. */
export interface Authenticator {
  /** A personal access token's value: unknown, revoked and expired tokens are unauthorized. */
  fromToken(value: string): Promise<Principal>;
  /** A session cookie's value: an ended session, or its user gone, is unauthorized. */
  fromSession(value: string): Promise<Principal>;
  close(): Promise<void>;
}

/**
 * Resolving tokens is the API's most frequent work, so resolved tokens are cached per process
 * (application/principal-cache.ts keeps them true to revocations); a token's last use is recorded
 * at most once a minute, in the background.
 */
export async function createAuthenticator(services: Services): Promise<Authenticator> {
  const lastRecorded = new Map<string, number>();
  const cache = new PrincipalCache(services.config.databaseUrl, services.log);
  await cache.start();

  /** The token's row, from the cache or the read model; revoked and unknown tokens are never cached. */
  async function resolveToken(sha256: string): Promise<CachedToken> {
    const cached = await cache.get(sha256);
    if (cached) return cached;
    const mark = cache.mark();
    const row = await tokenBySha256(services.pool, sha256);
    if (!row) throw unauthorized('The personal access token is not valid');
    if (row.revoked_at !== null) throw unauthorized('The personal access token has been revoked');
    const entry: CachedToken = {
      principal: { userId: row.owner_id, email: row.email, name: row.name, kind: 'token', scopes: row.scopes.filter(isScope), tokenId: row.id },
      tokenId: row.id,
      ownerId: row.owner_id,
      expiresAt: row.expires_at,
      lastUsedAt: row.last_used_at,
    };
    cache.set(sha256, entry, mark);
    return entry;
  }

  /** last_used_at: at most one event a minute per token, written after the response path. */
  function recordUse(tokenId: string, lastUsedAt: number | null, now: Date) {
    const last = Math.max(lastUsedAt ?? 0, lastRecorded.get(tokenId) ?? 0);
    if (now.getTime() - last < TOKEN_USE_RESOLUTION_MS) return;
    lastRecorded.set(tokenId, now.getTime());
    record(services, tokenStream(tokenId), tokenDecider, { type: 'RecordTokenUse', tokenId, at: now }).catch((error) =>
      services.log.warn({ err: error, tokenId }, 'could not record token use'),
    );
  }

  return {
    async fromToken(value) {
      if (!looksLikeToken(value)) {
        throw unauthorized('The Bearer value is not a personal access token (session cookies are not accepted as Bearer credentials)');
      }
      const entry = await resolveToken(sha256Hex(value));
      const now = services.clock();
      if (entry.expiresAt !== null && entry.expiresAt <= now.getTime()) throw unauthorized('The personal access token has expired');
      recordUse(entry.tokenId, entry.lastUsedAt, now);
      return entry.principal;
    },
    async fromSession(value) {
      const userId = await sessionUser(services.pool, value, services.clock());
      if (!userId) throw unauthorized('The session has ended; log in again');
      const user = await userById(services.pool, userId);
      if (!user) throw unauthorized('The session has ended; log in again');
      return { userId: user.id, email: user.email, name: user.name, kind: 'session', scopes: allScopes };
    },
    close: () => cache.close(),
  };
}
