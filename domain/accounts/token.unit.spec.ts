import { describe, expect, it } from 'vitest';
import { deciderSpec } from '../../test/support/decider.js';
import { tokenDecider, type TokenEvent } from './token.js';

const t0 = new Date('2026-01-01T00:00:00Z');
const plus = (ms: number) => new Date(t0.getTime() + ms);
const created: TokenEvent = {
  type: 'TokenCreated',
  data: {
    token_id: 'tok_1',
    owner_id: 'usr_a',
    name: 'n',
    scopes: ['account:read'],
    token_sha256: 'h',
    prefix: 'svcpat_abcd',
    expires_at: null,
    at: t0.toISOString(),
  },
};
const { state } = deciderSpec(tokenDecider);

describe('token decider', () => {
  it('records use at most once a minute', () => {
    const first = tokenDecider.decide({ type: 'RecordTokenUse', tokenId: 'tok_1', at: plus(1000) }, state([created]));
    expect(first).toHaveLength(1);
    const used = [created, ...first];
    expect(tokenDecider.decide({ type: 'RecordTokenUse', tokenId: 'tok_1', at: plus(59_000) }, state(used))).toEqual([]);
    expect(tokenDecider.decide({ type: 'RecordTokenUse', tokenId: 'tok_1', at: plus(61_000) }, state(used))).toHaveLength(1);
  });

  it('revokes only for the owner, once, and stops recording use', () => {
    expect(() => tokenDecider.decide({ type: 'RevokeToken', tokenId: 'tok_1', actorId: 'usr_b', at: t0 }, state([created]))).toThrow(/not found/);
    const revoked = tokenDecider.decide({ type: 'RevokeToken', tokenId: 'tok_1', actorId: 'usr_a', at: t0 }, state([created]));
    expect(revoked[0]!.type).toBe('TokenRevoked');
    expect(() => tokenDecider.decide({ type: 'RevokeToken', tokenId: 'tok_1', actorId: 'usr_a', at: t0 }, state([created, ...revoked]))).toThrow();
    expect(tokenDecider.decide({ type: 'RecordTokenUse', tokenId: 'tok_1', at: plus(120_000) }, state([created, ...revoked]))).toEqual([]);
  });
});
