import type {} from '@fastify/cookie';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sql } from 'slonik';
import { z } from 'zod';
import { allScopes, isScope, type Scope } from '../../domain/accounts/scopes.js';
import { TOKEN_USE_RESOLUTION_MS, tokenDecider, tokenStream } from '../../domain/accounts/token.js';
import { record } from '../../application/commands.js';
import { forbidden, unauthorized } from '../errors.js';
import type { Services } from '../../application/services.js';
import type { AuthRule, Principal } from './principal.js';
import { SESSION_COOKIE, sessionUser } from './sessions.js';
import { PrincipalCache, type CachedToken } from './principal-cache.js';
import { looksLikeToken, sha256Hex } from './tokens.js';

const tokenRow = z.object({
  id: z.string(),
  owner_id: z.string(),
  scopes: z.array(z.string()),
  expires_at: z.number().nullable(),
  revoked_at: z.number().nullable(),
  last_used_at: z.number().nullable(),
  email: z.string(),
  name: z.string(),
});
const userRow = z.object({ id: z.string(), email: z.string(), name: z.string() });

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Authenticates every request before its body is read (an anonymous upload is refused before a
 * byte is streamed), then checks the route's rule: public, session only, or scopes.
 */
export async function registerAuthentication(app: FastifyInstance, services: Services): Promise<void> {
  const lastRecorded = new Map<string, number>();
  const cache = new PrincipalCache(services.config.databaseUrl, services.log);
  await cache.start();
  app.addHook('onClose', async () => cache.close());

  /** The token's row, from the cache or the read model; revoked and unknown tokens are never cached. */
  async function resolveToken(sha256: string): Promise<CachedToken> {
    const cached = await cache.get(sha256);
    if (cached) return cached;
    const mark = cache.mark();
    const row = await services.pool.maybeOne(
      sql.type(tokenRow)`SELECT t.id, t.owner_id, t.scopes, t.expires_at, t.revoked_at, t.last_used_at, u.email, u.name
        FROM rm.tokens t JOIN rm.users u ON u.id = t.owner_id WHERE t.token_sha256 = ${sha256}`,
    );
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

  async function fromToken(value: string): Promise<Principal> {
    if (!looksLikeToken(value)) {
      throw unauthorized('The Bearer value is not a personal access token (session cookies are not accepted as Bearer credentials)');
    }
    const entry = await resolveToken(sha256Hex(value));
    const now = services.clock();
    if (entry.expiresAt !== null && entry.expiresAt <= now.getTime()) throw unauthorized('The personal access token has expired');
    recordUse(entry.tokenId, entry.lastUsedAt, now);
    return entry.principal;
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

  async function fromSession(request: FastifyRequest, value: string): Promise<Principal> {
    const userId = await sessionUser(services.pool, value, services.clock());
    if (!userId) throw unauthorized('The session has ended; log in again');
    const user = await services.pool.maybeOne(sql.type(userRow)`SELECT id, email, name FROM rm.users WHERE id = ${userId}`);
    if (!user) throw unauthorized('The session has ended; log in again');
    if (!SAFE_METHODS.has(request.method)) checkOrigin(request);
    return { userId: user.id, email: user.email, name: user.name, kind: 'session', scopes: allScopes };
  }

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
      request.principal = await fromToken(match[1]!);
    } else if (cookie) {
      request.principal = await fromSession(request, cookie);
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
