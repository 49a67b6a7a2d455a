import { createHash } from 'node:crypto';
import type { Scope } from '../domain/accounts/scopes.js';
import { tokenDecider, tokenStream } from '../domain/accounts/token.js';
import { WrongExpectedRevisionError } from '../eventstore/port.js';
import { randomBase62 } from '../platform/ids.js';
import { listTokens as readTokens, loadToken, type TokenRow } from '../projections/accounts.js';
import type { PageRequest } from '../projections/pagination.js';
import { execute } from './commands.js';
import type { Services } from './services.js';

/*
 * Personal access tokens: created (the value shown once, only its SHA-256 kept), listed and
 * revoked by their owner. The API allows these only in a browser session (a PAT cannot mint PATs);
 * how a request authenticates with one is application/authentication.ts.
 */

/** `svcpat_` + 43 base62 characters (≈256 bits): recognisable by secret scanners, never guessable. */
export const TOKEN_PREFIX = 'svcpat_';
export const newTokenValue = () => `${TOKEN_PREFIX}${randomBase62(43)}`;
export const sha256Hex = (value: string) => createHash('sha256').update(value).digest('hex');
/** What lists show so a user can tell tokens apart: the prefix and four characters. */
export const displayPrefix = (value: string) => value.slice(0, TOKEN_PREFIX.length + 4);
export const looksLikeToken = (value: string) => /^svcpat_[0-9A-Za-z]{43}$/.test(value);

export interface TokenRequest {
  name: string;
  scopes: Scope[];
  /** Omitted: a token that does not expire. */
  expires_in_days?: number | undefined;
}

/** A new token of the owner's: the stored token, and its value (never stored, shown this once). */
export async function createToken(services: Services, ownerId: string, request: TokenRequest): Promise<{ token: TokenRow; value: string }> {
  const value = newTokenValue();
  const tokenId = services.newId('token');
  const at = services.clock();
  const days = request.expires_in_days;
  await execute(services, tokenStream(tokenId), tokenDecider, {
    type: 'CreateToken',
    tokenId,
    actorId: ownerId,
    name: request.name,
    scopes: [...new Set(request.scopes)],
    tokenSha256: sha256Hex(value),
    prefix: displayPrefix(value),
    expiresAt: days ? new Date(at.getTime() + days * 86_400_000) : null,
    at,
  });
  return { token: await loadToken(services.pool, ownerId, tokenId), value };
}

/** The owner's tokens, newest first (never their values). */
export const listTokens = (services: Services, ownerId: string, page: PageRequest) => readTokens(services.pool, ownerId, page);

/** Revokes the owner's token (another owner's is token_not_found). */
export async function revokeToken(services: Services, ownerId: string, tokenId: string): Promise<void> {
  // The token's own stream also takes TokenUsed events, written in the background while it is
  // in use: a revocation that meets one decides again on the new state instead of answering 409.
  for (let attempt = 1; ; attempt++) {
    try {
      await execute(services, tokenStream(tokenId), tokenDecider, { type: 'RevokeToken', tokenId, actorId: ownerId, at: services.clock() });
      return;
    } catch (error) {
      if (!(error instanceof WrongExpectedRevisionError) || attempt >= 5) throw error;
    }
  }
}
