import type {} from '@fastify/cookie';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sql } from 'slonik';
import { z } from 'zod';
import { allScopes, isScope, type Scope } from '../../domain/accounts/scopes.js';
import { TOKEN_USE_RESOLUTION_MS, tokenDecider, tokenStream } from '../../domain/accounts/token.js';
import { handleCommand } from '../../domain/handler.js';
import { forbidden, unauthorized } from '../errors.js';
import type { Services } from '../../application/services.js';
import type { AuthRule, Principal } from './principal.js';
import { SESSION_COOKIE, sessionUser } from './sessions.js';
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
export function registerAuthentication(app: FastifyInstance, services: Services): void {
  const lastRecorded = new Map<string, number>();

  async function fromToken(value: string): Promise<Principal> {
    if (!looksLikeToken(value)) {
      throw unauthorized('The Bearer value is not a personal access token (session cookies are not accepted as Bearer credentials)');
    }
    const row = await services.pool.maybeOne(
      sql.type(tokenRow)`SELECT t.id, t.owner_id, t.scopes, t.expires_at, t.revoked_at, t.last_used_at, u.email, u.name
        FROM rm.tokens t JOIN rm.users u ON u.id = t.owner_id WHERE t.token_sha256 = ${sha256Hex(value)}`,
    );
    const now = services.clock();
    if (!row) throw unauthorized('The personal access token is not valid');
    if (row.revoked_at !== null) throw unauthorized('The personal access token has been revoked');
    if (row.expires_at !== null && row.expires_at <= now.getTime()) throw unauthorized('The personal access token has expired');
    recordUse(row.id, row.last_used_at, now);
    return {
      userId: row.owner_id,
      email: row.email,
      name: row.name,
      kind: 'token',
      scopes: row.scopes.filter(isScope),
      tokenId: row.id,
    };
  }

  /** last_used_at: at most one event a minute per token, written after the response path. */
  function recordUse(tokenId: string, lastUsedAt: number | null, now: Date) {
    const last = Math.max(lastUsedAt ?? 0, lastRecorded.get(tokenId) ?? 0);
    if (now.getTime() - last < TOKEN_USE_RESOLUTION_MS) return;
    lastRecorded.set(tokenId, now.getTime());
    handleCommand(services.store, tokenStream(tokenId), tokenDecider, { type: 'RecordTokenUse', tokenId, at: now }).catch((error) =>
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

  app.addHook('onRequest', async (request) => {
    const rule: AuthRule | undefined = request.routeOptions.config?.auth;
    if (!request.routeOptions.url) return; // unknown route: the 404 handler answers
    if (rule && 'public' in rule) return;

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
  });
}
