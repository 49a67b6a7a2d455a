import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import { networkInterfaces } from 'node:os';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { ConnectorError } from '../../../domain/transfers.js';

/*
 * The outbound policy: which addresses a connector may open a connection to. One module, one
 * decision, applied where the connection is made, so it holds after DNS resolution (the name is
 * resolved here and the socket is opened to the address that was checked: no DNS-rebinding
 * window), on every redirect (each hop opens its own connection through the same check), and for
 * every client the connectors use. What a redirect may carry to another origin is redirects.ts's
 * rule.
 *
 * The API, for a connector (existing or new):
 *
 *   egressFetch(url, init)            fetch() whose connections pass the policy (undici
 *                                     dispatcher) and that follows no redirect itself; to follow
 *                                     them, use fetch.ts (httpRequest, fetchJson, httpStream) or,
 *                                     for an SDK that takes a fetch, policy-fetch.ts.
 *   egressAgents()                    { http, https } node:http Agents that check and pin every
 *                                     socket: give them to SDKs (AWS: requestHandler.httpAgent /
 *                                     httpsAgent; Azure: azureEgressHttpClient(); googleapis /
 *                                     gaxios, snowflake-sdk … take an `agent`).
 *   egressAgentFor(url)               the agent of egressAgents() for a URL's scheme, for clients whose
 *                                     `agent` may be a function (gaxios: transporterOptions.agent).
 *   pinAgent(agent, protocol)         pins an SDK's own Agent in place (snowflake-sdk builds its own).
 *   await egressAddress(host, port)   the checked IP to connect to, for database and SSH clients
 *                                     (pg, mysql2, ssh2, tedious, oracledb, libpq's hostaddr …):
 *                                     connect to the address it returns, keep `host` for TLS
 *                                     server names and messages.
 *   EgressRefused                     what all of them throw (a ConnectorError whose reason is
 *                                     `refused_by_policy`; classify() finds it under SDK wrappers).
 *
 * The process reads the policy once (configureEgress, called by application/bootstrap.ts with
 * the service's own endpoints; until then SVC_OUTBOUND_ALLOW / SVC_OUTBOUND_DENY from the
 * environment apply). Rules are evaluated like a routing table: the most specific matching rule
 * decides (a host name beats any address range, a longer prefix beats a shorter one, a rule with
 * a port beats the same range without one); at equal specificity an operator's rule beats a
 * built-in one and a deny beats an allow. Built in: everything allowed, except link-local
 * (169.254.0.0/16, fe80::/10), the cloud metadata addresses, unspecified/multicast addresses and
 * the service's own PostgreSQL, Temporal, event store and API ports. Loopback and private
 * networks stay allowed (that is where PostGIS and GeoServer live): an operator closes them with
 * SVC_OUTBOUND_DENY=private,loopback.
 *
 * Refusals happen before any packet is sent, so the answer is the same whether the address is
 * open or closed: a connection test cannot be used to scan ports.
 */

export const ALLOW_SETTING = 'SVC_OUTBOUND_ALLOW';
export const DENY_SETTING = 'SVC_OUTBOUND_DENY';

type Family = 4 | 6;

interface Range {
  family: Family;
  /** The address as a number (IPv4: 32 bits, IPv6: 128 bits). */
  bits: bigint;
  prefix: number;
}

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

/** The `code` of a refusal, for SDKs that keep only an error's code and message (Azure's RestError). */
export const EGRESS_REFUSED = 'EGRESS_REFUSED';

export class EgressRefused extends ConnectorError {
  readonly code = EGRESS_REFUSED;
  constructor(message: string, details: Record<string, unknown> = {}) {
    super('refused_by_policy', message, details, false);
    this.name = 'EgressRefused';
  }

  static of(host: string, port: number, why: string): EgressRefused {
    return new EgressRefused(
      `The outbound policy refuses connections to ${host}:${port} (${why}); an operator can change this with ${ALLOW_SETTING} / ${DENY_SETTING}`,
      { host, port, setting: why.startsWith(DENY_SETTING) ? DENY_SETTING : ALLOW_SETTING },
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Addresses

function parseV4(text: string): bigint | null {
  const parts = text.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255)) return null;
  return parts.reduce((n, p) => (n << 8n) | BigInt(Number(p)), 0n);
}

function parseV6(text: string): bigint | null {
  if (net.isIPv6(text) === false) return null;
  let s = text.replace(/%.*$/, '');
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two groups.
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (v4) {
    const n = parseV4(v4[1]!);
    if (n === null) return null;
    s = `${s.slice(0, -v4[1]!.length)}${(n >> 16n).toString(16)}:${(n & 0xffffn).toString(16)}`;
  }
  const [head, tail] = s.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
  if (groups.length !== 8) return null;
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

/** An IP address as family and number; IPv4-mapped IPv6 (::ffff:a.b.c.d) counts as the IPv4 address. */
export function parseAddress(text: string): { family: Family; bits: bigint } | null {
  const bare = text.replace(/^\[|\]$/g, '');
  if (net.isIPv4(bare)) return { family: 4, bits: parseV4(bare)! };
  const v6 = parseV6(bare);
  if (v6 === null) return null;
  if (v6 >> 32n === 0xffffn) return { family: 4, bits: v6 & 0xffffffffn };
  return { family: 6, bits: v6 };
}

function inRange(range: Range, address: { family: Family; bits: bigint }): boolean {
  if (range.family !== address.family) return false;
  const width = range.family === 4 ? 32 : 128;
  const shift = BigInt(width - range.prefix);
  return range.bits >> shift === address.bits >> shift;
}

function range(text: string): Range {
  const [addr, prefixText] = text.split('/') as [string, string | undefined];
  const parsed = parseAddress(addr);
  if (!parsed) throw new Error(`"${text}" is not an IP address or CIDR range`);
  const width = parsed.family === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? width : Number(prefixText);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > width) throw new Error(`"${text}" has an invalid prefix length`);
  return { ...parsed, prefix };
}

// ---------------------------------------------------------------------------------------------
// Rules

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

// ---------------------------------------------------------------------------------------------
// The process's policy

let current: EgressPolicy | undefined;

function fromEnvironment(env: NodeJS.ProcessEnv, internal: EgressRule[] = []): EgressPolicy {
  return { rules: [...defaultRules, ...internal, ...parseRules(env[ALLOW_SETTING], 'allow'), ...parseRules(env[DENY_SETTING], 'deny')] };
}

/**
 * Sets the process's policy: the operator's settings (as `loadConfig` read them) and the
 * service's own endpoints, which are refused unless an allow entry names their exact port.
 */
export async function configureEgress(settings: { allow?: string; deny?: string; internal?: readonly InternalEndpoint[] }): Promise<void> {
  current = fromEnvironment({ [ALLOW_SETTING]: settings.allow, [DENY_SETTING]: settings.deny }, await internalRules(settings.internal ?? []));
}

export function egressPolicy(): EgressPolicy {
  current ??= fromEnvironment(process.env);
  return current;
}

/**
 * The address to connect to for `host:port`, checked: an IP literal as it is, a name refused by
 * a rule on names before it is resolved, else resolved here (the first allowed address; every
 * address refused means the first refusal). Throws
 * EgressRefused, or the resolver's error (classified unreachable) when the name does not resolve.
 */
export async function egressAddress(host: string, port: number, policy: EgressPolicy = egressPolicy()): Promise<string> {
  const bare = host.replace(/^\[|\]$/g, '');
  const literal = parseAddress(bare) !== null;
  // A rule on the name (metadata.google.internal, an operator's *.corp.example) beats every
  // address rule, so it decides before the name is resolved: no DNS query goes out for it.
  const byName = literal ? undefined : decide(policy, { address: '', port, host: bare });
  if (byName?.host !== undefined && byName.action === 'deny') throw EgressRefused.of(bare, port, byName.why);
  const candidates = literal ? [bare] : (await lookup(bare, { all: true, verbatim: true })).map((a) => a.address);
  let refusal: EgressRule | undefined;
  for (const address of candidates) {
    const rule = decide(policy, { address, port, ...(literal ? {} : { host: bare }) });
    if (rule.action === 'allow') return address;
    refusal ??= rule;
  }
  throw EgressRefused.of(bare, port, refusal?.why ?? 'no address');
}

/** The EgressRefused inside an error chain (SDKs and fetch wrap socket errors in their own), if any. */
export function egressRefusalIn(error: unknown): EgressRefused | undefined {
  for (let e: any = error, depth = 0; e && depth < 8; e = e.cause ?? e.originalError ?? e.error, depth++) {
    if (e instanceof EgressRefused) return e;
    // Rewrapped by an SDK that kept only code and message (the message says everything).
    if (e.code === EGRESS_REFUSED && typeof e.message === 'string') return new EgressRefused(e.message);
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Clients

const defaultPort = (protocol: string) => (protocol === 'https:' ? 443 : 80);

let dispatcher: Dispatcher | undefined;

/** An undici dispatcher for fetch(): every connection (each redirect hop's too) to a checked, pinned address. */
export function egressDispatcher(): Dispatcher {
  if (dispatcher) return dispatcher;
  const connect = buildConnector({ timeout: 10_000 });
  dispatcher = new Agent({
    connect(options, callback) {
      const port = Number(options.port) || defaultPort(options.protocol);
      // `hostname` is where the socket goes; `host` (kept) gives TLS its server name.
      egressAddress(options.hostname, port).then(
        (address) => connect({ ...options, hostname: address }, callback),
        (error: Error) => callback(error, null),
      );
    },
  });
  return dispatcher;
}

/**
 * fetch() through the outbound policy. It never follows a redirect itself (fetch's own following
 * would send a 307's body and every header but Authorization to another origin): with
 * `redirect: 'manual'` the caller gets the 3xx (fetch.ts follows under redirects.ts's rule),
 * otherwise a redirect is an error.
 */
export function egressFetch(input: string | URL, init: RequestInit = {}): Promise<Response> {
  return fetch(input, { ...init, redirect: init.redirect === 'manual' ? 'manual' : 'error', dispatcher: egressDispatcher() } as RequestInit);
}

type CreateConnection = (options: any, callback: (error: Error | null, socket?: net.Socket) => void) => net.Socket | undefined;

const pinnedAgents = new WeakSet<http.Agent>();

/**
 * Wraps an Agent's createConnection: resolve and check first, then open the socket to that
 * address. For SDKs that build their own agents and take none (snowflake-sdk): the agent they
 * made is pinned in place, once, keeping its own TLS checks (OCSP, CRL) around the socket.
 */
export function pinAgent<A extends http.Agent>(agent: A, protocol: 'http:' | 'https:'): A {
  if (!pinnedAgents.has(agent)) {
    pinnedAgents.add(agent);
    pinned(agent, protocol);
  }
  return agent;
}

function pinned(agent: http.Agent, protocol: 'http:' | 'https:'): void {
  const create = (agent as unknown as { createConnection: CreateConnection }).createConnection.bind(agent);
  (agent as unknown as { createConnection: CreateConnection }).createConnection = (options, callback) => {
    const host = String(options.host ?? options.hostname ?? 'localhost');
    const port = Number(options.port) || defaultPort(protocol);
    egressAddress(host, port).then(
      (address) => {
        const servername = options.servername ?? (parseAddress(host) ? undefined : host.replace(/^\[|\]$/g, ''));
        let socket: net.Socket | undefined;
        try {
          // Without the callback: net.createConnection would take it for a 'connect' listener.
          socket = create({ ...options, host: address, hostname: address, ...(servername ? { servername } : {}) }, () => undefined);
        } catch (error) {
          callback(error as Error);
          return;
        }
        if (socket) callback(null, socket);
      },
      (error: Error) => callback(error),
    );
    return undefined;
  };
}

let agents: { http: http.Agent; https: https.Agent } | undefined;

/** node:http Agents whose every socket goes to a checked, pinned address: for SDKs (AWS, Azure, Google …). */
export function egressAgents(): { http: http.Agent; https: https.Agent } {
  if (agents) return agents;
  const h = new http.Agent({ keepAlive: true });
  const s = new https.Agent({ keepAlive: true });
  pinAgent(h, 'http:');
  pinAgent(s, 'https:');
  agents = { http: h, https: s };
  return agents;
}

/** For clients whose `agent` option may be a function of the URL (gaxios, node-fetch): the egress agent for its scheme. */
export function egressAgentFor(url: URL | string): http.Agent {
  const protocol = typeof url === 'string' ? new URL(url).protocol : url.protocol;
  return protocol === 'http:' ? egressAgents().http : egressAgents().https;
}
