import { DomainError, notFound } from '../errors.js';
import { unreachable, type Decider } from '../decider.js';
import type { Scope } from './scopes.js';

export const tokenStream = (id: string) => `token-${id}`;

/** last_used_at moves at most once a minute, so a busy script does not write an event per call. */
export const TOKEN_USE_RESOLUTION_MS = 60_000;

export type TokenEvent =
  | {
      type: 'TokenCreated';
      data: {
        token_id: string;
        owner_id: string;
        name: string;
        scopes: Scope[];
        /** SHA-256 of the token value, hex; the value itself is never stored. */
        token_sha256: string;
        /** The first characters of the value, shown in lists so users can tell tokens apart. */
        prefix: string;
        expires_at: string | null;
        at: string;
      };
    }
  | { type: 'TokenRevoked'; data: { token_id: string; at: string } }
  | { type: 'TokenUsed'; data: { token_id: string; at: string } };

export type TokenCommand =
  | {
      type: 'CreateToken';
      tokenId: string;
      actorId: string;
      name: string;
      scopes: Scope[];
      tokenSha256: string;
      prefix: string;
      expiresAt: Date | null;
      at: Date;
    }
  | { type: 'RevokeToken'; tokenId: string; actorId: string; at: Date }
  | { type: 'RecordTokenUse'; tokenId: string; at: Date };

export type TokenState = { status: 'absent' } | { status: 'active' | 'revoked'; ownerId: string; lastUsedAt: Date | null };

export const tokenDecider: Decider<TokenCommand, TokenState, TokenEvent> = {
  initialState: () => ({ status: 'absent' }),
  decide(command, state) {
    switch (command.type) {
      case 'CreateToken':
        if (state.status !== 'absent') throw new DomainError('conflict', 'token already exists');
        return [
          {
            type: 'TokenCreated',
            data: {
              token_id: command.tokenId,
              owner_id: command.actorId,
              name: command.name,
              scopes: command.scopes,
              token_sha256: command.tokenSha256,
              prefix: command.prefix,
              expires_at: command.expiresAt?.toISOString() ?? null,
              at: command.at.toISOString(),
            },
          },
        ];
      case 'RevokeToken':
        if (state.status !== 'active' || state.ownerId !== command.actorId) {
          throw notFound('token_not_found', 'Token', command.tokenId);
        }
        return [{ type: 'TokenRevoked', data: { token_id: command.tokenId, at: command.at.toISOString() } }];
      case 'RecordTokenUse':
        if (state.status !== 'active') return [];
        if (state.lastUsedAt && command.at.getTime() - state.lastUsedAt.getTime() < TOKEN_USE_RESOLUTION_MS) return [];
        return [{ type: 'TokenUsed', data: { token_id: command.tokenId, at: command.at.toISOString() } }];
      default:
        return unreachable(command);
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'TokenCreated':
        return { status: 'active', ownerId: event.data.owner_id, lastUsedAt: null };
      case 'TokenRevoked':
        return state.status === 'absent' ? state : { ...state, status: 'revoked' };
      case 'TokenUsed':
        return state.status === 'absent' ? state : { ...state, lastUsedAt: new Date(event.data.at) };
      default:
        return unreachable(event);
    }
  },
};
