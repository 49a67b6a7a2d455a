import { lookup } from 'node:dns/promises';
import { describe, expect, it, vi } from 'vitest';
import { decide, defaultRules, egressAddress, EgressRefused, internalRules, parseAddress, parseRules, type EgressPolicy } from './egress.js';

// The resolver, watched: a refusal by name must be decided before any DNS query is sent.
vi.mock('node:dns/promises', async (original) => {
  const real = await original<typeof import('node:dns/promises')>();
  return { ...real, lookup: vi.fn(real.lookup) };
});

const policy = (allow = '', deny = '', extra: EgressPolicy['rules'] = []): EgressPolicy => ({
  rules: [...defaultRules, ...extra, ...parseRules(allow, 'allow'), ...parseRules(deny, 'deny')],
});
const verdict = (p: EgressPolicy, address: string, port = 80, host?: string) => decide(p, { address, port, ...(host ? { host } : {}) }).action;

describe('outbound policy rules', () => {
  it('parses addresses the way connections see them (IPv4-mapped IPv6 is IPv4)', () => {
    expect(parseAddress('::ffff:169.254.169.254')).toEqual(parseAddress('169.254.169.254'));
    expect(parseAddress('[::1]')).toEqual({ family: 6, bits: 1n });
    expect(parseAddress('example.org')).toBeNull();
  });

  it('refuses link-local and metadata addresses by default, allows loopback and private networks', () => {
    const p = policy();
    for (const a of ['169.254.169.254', '169.254.1.1', 'fe80::1', 'fd00:ec2::254', '100.100.100.200', '::ffff:169.254.169.254', '0.0.0.0', '::']) {
      expect(verdict(p, a), a).toBe('deny');
    }
    for (const a of ['10.1.2.3', '192.168.0.5', '172.20.0.2', '127.0.0.1', '::1', 'fd12::5', '93.184.216.34']) expect(verdict(p, a), a).toBe('allow');
    expect(verdict(p, '10.1.2.3', 80, 'metadata.google.internal')).toBe('deny');
  });

  it('decides by the most specific rule; deny wins a tie; a port makes a rule more specific', () => {
    const p = policy('10.1.0.0/16, 127.0.0.1:5432', 'private, 10.1.2.3, 127.0.0.0/8:5432');
    expect(verdict(p, '10.9.9.9')).toBe('deny');
    expect(verdict(p, '10.1.9.9')).toBe('allow');
    expect(verdict(p, '10.1.2.3')).toBe('deny');
    expect(verdict(p, '127.0.0.1', 5432)).toBe('allow');
    expect(verdict(p, '127.0.0.2', 5432)).toBe('deny');
    expect(verdict(p, '127.0.0.2', 5433)).toBe('allow');
    // An allow-list install: everything closed, some things opened.
    const only = policy('gis.example.org, 192.0.2.0/24', 'all');
    expect(verdict(only, '198.51.100.1')).toBe('deny');
    expect(verdict(only, '192.0.2.10')).toBe('allow');
    expect(verdict(only, '198.51.100.1', 443, 'gis.example.org')).toBe('allow');
    expect(verdict(policy('', '*.corp.example'), '10.0.0.1', 80, 'db.corp.example')).toBe('deny');
    // An operator may open link-local, but the metadata address stays closed unless named.
    expect(verdict(policy('169.254.0.0/16'), '169.254.1.1')).toBe('allow');
    expect(verdict(policy('169.254.0.0/16'), '169.254.169.254')).toBe('deny');
  });

  it("refuses the service's own endpoints on every local address, unless an allow entry names the port", async () => {
    const own = await internalRules([
      { what: 'PostgreSQL', host: '127.0.0.1', port: 5432 },
      { what: 'API', host: '0.0.0.0', port: 8080 },
    ]);
    const p = policy('loopback', '', own);
    expect(verdict(p, '127.0.0.1', 5432)).toBe('deny');
    expect(verdict(p, '127.0.0.5', 5432)).toBe('deny');
    expect(verdict(p, '::1', 8080)).toBe('deny');
    expect(verdict(p, '127.0.0.1', 5433)).toBe('allow');
    expect(verdict(policy('127.0.0.1:5432', '', own), '127.0.0.1', 5432)).toBe('allow');
  });

  it('names the setting in a refusal, and rejects entries it cannot read', async () => {
    const p = policy('', '127.0.0.1');
    const error = await egressAddress('127.0.0.1', 9, p).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EgressRefused);
    expect((error as Error).message).toContain('SVC_OUTBOUND_DENY entry 127.0.0.1');
    await expect(egressAddress('localhost', 9, policy('', 'loopback'))).rejects.toBeInstanceOf(EgressRefused);
    expect(await egressAddress('127.0.0.2', 9, p)).toBe('127.0.0.2');
    expect(() => parseRules('10.0.0.0/33', 'deny')).toThrow(/SVC_OUTBOUND_DENY: .*prefix/);
    expect(() => parseRules('http://x', 'allow')).toThrow(/SVC_OUTBOUND_ALLOW/);
  });

  it('refuses a name a rule names before resolving it: no DNS query is sent for metadata.google.internal', async () => {
    const watched = vi.mocked(lookup);
    watched.mockClear();
    await expect(egressAddress('metadata.google.internal', 80, policy())).rejects.toBeInstanceOf(EgressRefused);
    await expect(egressAddress('METADATA.google.internal.', 80, policy())).rejects.toBeInstanceOf(EgressRefused);
    await expect(egressAddress('db.corp.example', 5432, policy('', '*.corp.example'))).rejects.toThrow(/SVC_OUTBOUND_DENY entry \*\.corp\.example/);
    expect(watched).not.toHaveBeenCalled();
    // A name no rule names is resolved, as before; an allow on the name still resolves it.
    expect(await egressAddress('localhost', 9, policy())).toMatch(/^(127\.0\.0\.1|::1)$/);
    expect(watched).toHaveBeenCalledTimes(1);
  });
});
