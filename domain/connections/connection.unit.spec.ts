import { describe, expect, it } from 'vitest';
import { deciderSpec } from '../../test/support/decider.js';
import { DomainError } from '../errors.js';
import { connectionDecider } from './connection.js';

const at = new Date('2026-01-01T00:00:00Z');
const sut = connectionDecider('source');
const { decide } = deciderSpec(sut);
const write = {
  connectionId: 'src_1',
  actorId: 'usr_a',
  name: 'db',
  connectionType: 'postgis',
  configuration: { host: 'h' },
  secretFields: ['password'] as const,
  at,
};
const created = decide([], { type: 'CreateConnection', ...write, secrets: { password: 'sealed-1' } })[0]!;

describe('connection decider', () => {
  it('creates a Source with its sealed secret and says which fields hold one', () => {
    expect(created.type).toBe('SourceCreated');
    expect(created.data).toMatchObject({ id: 'src_1', owner_id: 'usr_a', secret_fields: ['password'], secrets: { password: 'sealed-1' } });
  });

  it('an update that omits a secret keeps it; null clears it; a value replaces it', () => {
    const kept = decide([created], { type: 'UpdateConnection', ...write, secrets: {} })[0]!;
    expect(kept.data).toMatchObject({ secret_fields: ['password'], secrets: { password: 'sealed-1' } });
    const cleared = decide([created], { type: 'UpdateConnection', ...write, secrets: { password: null } })[0]!;
    expect(cleared.data).toMatchObject({ secret_fields: [], secrets: {} });
    const replaced = decide([created], { type: 'UpdateConnection', ...write, secrets: { password: 'sealed-2' } })[0]!;
    expect(replaced.data).toMatchObject({ secrets: { password: 'sealed-2' } });
  });

  it('a type change drops the secrets of the old type', () => {
    const changed = decide([created], { type: 'UpdateConnection', ...write, connectionType: 's3', secretFields: ['secret_key'], secrets: {} })[0]!;
    expect(changed.data).toMatchObject({ type: 's3', secret_fields: [], secrets: {} });
  });

  it("another user's Source is source_not_found, like a missing one", () => {
    const other = { type: 'UpdateConnection' as const, ...write, actorId: 'usr_b', secrets: {} };
    expect(() => decide([created], other)).toThrow(DomainError);
    expect(() => decide([created], other)).toThrow(/not found/);
    try {
      decide([], { type: 'DeleteConnection', connectionId: 'src_1', actorId: 'usr_a', at });
    } catch (e) {
      expect((e as DomainError).code).toBe('source_not_found');
    }
  });

  it('deletes once; Destinations get their own event names and code', () => {
    const deleted = decide([created], { type: 'DeleteConnection', connectionId: 'src_1', actorId: 'usr_a', at });
    expect(deleted[0]!.type).toBe('SourceDeleted');
    expect(() => decide([created, ...deleted], { type: 'DeleteConnection', connectionId: 'src_1', actorId: 'usr_a', at })).toThrow(/not found/);
    const dst = connectionDecider('destination');
    expect(dst.decide({ type: 'CreateConnection', ...write, secrets: {} }, dst.initialState())[0]!.type).toBe('DestinationCreated');
    expect(() => dst.decide({ type: 'DeleteConnection', connectionId: 'x', actorId: 'usr_a', at }, dst.initialState())).toThrow(/Destination x was not found/);
  });
});
