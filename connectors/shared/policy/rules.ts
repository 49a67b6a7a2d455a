import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { networkInterfaces } from 'node:os';
import { inRange, parseAddress, range, type Range } from './addresses.js';

/*
 * The outbound policy's rules and its one decision (./egress.ts applies it where connections are
 * made): the operator's settings parsed, the built-in rules, the service's own endpoints, and
 * which rule decides a connection, as a routing table would (the most specific match; at equal
 * specificity an operator's rule beats a built-in one and a deny beats an allow).
 */

export const ALLOW_SETTING = 'SVC_OUTBOUND_ALLOW';
export const DENY_SETTING = 'SVC_OUTBOUND_DENY';

export interface EgressRule {
  action: 'allow' | 'deny';
  /** Who wrote it: the operator's settings, or the built-in defaults. */
  origin: 'operator' | 'builtin';
  /** What a refusal says about it ("link-local", "the service's own PostgreSQL", "SVC_OUTBOUND_DENY entry 10.0.0.0/8"). */
  why: string;
  range?: Range;
  /** A host name (lower case) or a `*.` suffix pattern; matched against the name a connector was given. */
  host?: string;
  port?: number;
}

/** Named groups an operator can write instead of ranges. */
const groups: Record<string, string[]> = {
  all: ['0.0.0.0/0', '::/0'],
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7'],
  loopback: ['127.0.0.0/8', '::1/128'],
  'link-local': ['169.254.0.0/16', 'fe80::/10'],
};

/**
 * Parses one setting's value: entries separated by commas or white space, each a CIDR range or
 * address (`10.0.0.0/8`, `192.0.2.7`, `fd00::/8`), a host name (`db.example.org`, `*.example.org`),
 * a group (`private`, `loopback`, `link-local`, `all`), any of them with `:port`
 * (IPv6 then in brackets: `[::1]:5432`, `[fd00::/8]:443`). Throws a sentence naming the setting.
 */
export function parseRules(value: string | undefined, action: 'allow' | 'deny'): EgressRule[] {
  const setting = action === 'allow' ? ALLOW_SETTING : DENY_SETTING;
  const rules: EgressRule[] = [];
  for (const entry of (value ?? '').split(/[\s,]+/).filter(Boolean)) {
    try {
      let target = entry;
      let port: number | undefined;
      const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
      if (bracketed) {
        target = bracketed[1]!;
        port = bracketed[2] === undefined ? undefined : Number(bracketed[2]);
      } else if (!parseAddress(entry.split('/')[0]!) || net.isIPv4(entry.split(/[/:]/)[0]!)) {
        // IPv4, names and groups may end in :port; a bare IPv6 address may not (brackets).
        const m = /^(.*?)(?::(\d+))?$/.exec(entry)!;
        target = m[1]!;
        port = m[2] === undefined ? undefined : Number(m[2]);
      }
      if (port !== undefined && (!Number.isInteger(port) || port < 1 || port > 65535)) throw new Error(`"${entry}" has an invalid port`);
      const why = `${setting} entry ${entry}`;
      const base = { action, origin: 'operator' as const, why, ...(port === undefined ? {} : { port }) };
      if (groups[target.toLowerCase()]) {
        for (const r of groups[target.toLowerCase()]!) rules.push({ ...base, range: range(r) });
      } else if (parseAddress(target.split('/')[0]!)) {
        rules.push({ ...base, range: range(target) });
      } else if (/^(\*\.)?[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*\.?$/i.test(target)) {
        rules.push({ ...base, host: target.toLowerCase().replace(/\.$/, '') });
      } else {
        throw new Error(`"${entry}" is neither an address, a CIDR range, a host name nor one of ${Object.keys(groups).join(', ')}`);
      }
    } catch (error) {
      throw new Error(`${setting}: ${(error as Error).message}`);
    }
  }
  return rules;
}

const builtin = (action: 'allow' | 'deny', why: string, ranges: string[], port?: number): EgressRule[] =>
  ranges.map((r) => ({ action, origin: 'builtin', why, range: range(r), ...(port === undefined ? {} : { port }) }));

/** The built-in rules that do not depend on the installation. */
export const defaultRules: readonly EgressRule[] = [
  ...builtin('allow', 'allowed by default', groups.all!),
  ...builtin('deny', 'link-local, where cloud metadata services answer', groups['link-local']!),
  // AWS/GCP/Azure/OpenStack (and their IPv6), Alibaba, Azure's wire server, AWS ECS task metadata.
  ...builtin('deny', 'a cloud metadata address', ['169.254.169.254', 'fd00:ec2::254', '100.100.100.200', '168.63.129.16', '169.254.170.2']),
  { action: 'deny', origin: 'builtin', why: 'a cloud metadata address', host: 'metadata.google.internal' },
  ...builtin('deny', 'not a unicast address (unspecified, multicast or reserved)', ['0.0.0.0/8', '224.0.0.0/3', '::/128', 'ff00::/8']),
];

/** An endpoint of the service itself (its database, Temporal, event store, API), by host and port. */
export interface InternalEndpoint {
  what: string;
  host: string;
  port: number;
}

const isLocal = (address: string) => {
  const a = parseAddress(address);
  if (!a) return false;
  return [...groups.loopback!, '0.0.0.0/8', '::/128'].some((r) => inRange(range(r), a));
};

/** Every address this machine answers on (loopback included): a service bound to 0.0.0.0 listens on all of them. */
function localAddresses(): string[] {
  const own = Object.values(networkInterfaces()).flatMap((list) => (list ?? []).map((i) => i.address.replace(/%.*$/, '')));
  return ['127.0.0.0/8', '::1', ...own];
}

/**
 * The deny rules for the service's own endpoints: each host resolved (a name that does not
 * resolve is kept as a name), and an endpoint on a local or unspecified address refused on every
 * address of this machine.
 */
export async function internalRules(endpoints: readonly InternalEndpoint[]): Promise<EgressRule[]> {
  const rules: EgressRule[] = [];
  for (const e of endpoints) {
    const why = `the service's own ${e.what}`;
    const host = e.host.replace(/^\[|\]$/g, '');
    let addresses: string[] = [];
    if (parseAddress(host)) addresses = [host];
    else {
      rules.push({ action: 'deny', origin: 'builtin', why, host: host.toLowerCase(), port: e.port });
      addresses = await lookup(host, { all: true }).then(
        (all) => all.map((a) => a.address),
        () => [],
      );
    }
    const expanded = addresses.some(isLocal) ? [...addresses, ...localAddresses()] : addresses;
    for (const a of new Set(expanded)) rules.push(...builtin('deny', why, [a], e.port));
  }
  return rules;
}

function specificity(rule: EgressRule): number {
  const base = rule.host !== undefined ? 1000 : rule.range!.prefix + (rule.range!.family === 4 ? 96 : 0);
  return base * 4 + (rule.port !== undefined ? 2 : 0) + (rule.origin === 'operator' ? 1 : 0);
}

const hostMatches = (pattern: string, name: string) => (pattern.startsWith('*.') ? name.endsWith(pattern.slice(1)) : name === pattern);

export interface EgressPolicy {
  rules: readonly EgressRule[];
}

/**
 * The rule that decides a connection to `address:port`, reached through the name `host` when it
 * was one: the most specific match; at equal specificity a deny wins.
 */
export function decide(policy: EgressPolicy, target: { address: string; port: number; host?: string }): EgressRule {
  const address = parseAddress(target.address);
  const name = target.host?.toLowerCase().replace(/\.$/, '');
  let best: EgressRule | undefined;
  let bestScore = -1;
  for (const rule of policy.rules) {
    if (rule.port !== undefined && rule.port !== target.port) continue;
    const matches = rule.host !== undefined ? name !== undefined && hostMatches(rule.host, name) : address !== null && inRange(rule.range!, address);
    if (!matches) continue;
    const score = specificity(rule);
    if (score > bestScore || (score === bestScore && rule.action === 'deny')) {
      best = rule;
      bestScore = score;
    }
  }
  // An address that is not an IP (cannot happen after resolution) is refused rather than guessed at.
  return best ?? { action: 'deny', origin: 'builtin', why: 'not an IP address' };
}
