import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import { Agent, buildConnector, type Dispatcher } from 'undici';
import { ConnectorError } from '../../../domain/transfers.js';
import { parseAddress } from './addresses.js';
import {
  ALLOW_SETTING,
  decide,
  defaultRules,
  DENY_SETTING,
  internalRules,
  parseRules,
  type EgressPolicy,
  type EgressRule,
  type InternalEndpoint,
} from './rules.js';

export { parseAddress } from './addresses.js';
export { ALLOW_SETTING, decide, defaultRules, DENY_SETTING, internalRules, parseRules } from './rules.js';
export type { EgressPolicy, EgressRule, InternalEndpoint } from './rules.js';

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
 * open or closed: a connection test cannot be used to scan ports. The rules and the decision are
 * in ./rules.ts, addresses and ranges in ./addresses.ts; this module applies them.
 */

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
