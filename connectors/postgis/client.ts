import pg from 'pg';
import type { ConnectionOptions } from 'node:tls';
import { classify } from '../shared/policy/classify.js';
import { parseAddress } from '../shared/policy/egress.js';
import { sessionsOf } from '../shared/sql/session.js';
import { ConnectorError, type ConnectorFailureReason } from '../../domain/transfers.js';
import { destroySocket } from '../../platform/db.js';

const egressIsIp = (host: string) => parseAddress(host) !== null;

/*
 * Connections to a user's PostgreSQL through node-postgres, for everything that is SQL rather than
 * bulk data: the connection test, discovery, checks before a transfer and the swap of a delivery.
 * Bulk reads and loads go through GDAL (./ogr.ts). Errors are classified by SQLSTATE, which is
 * stable across versions and languages, never by message text.
 */

export type SslMode = 'disable' | 'allow' | 'prefer' | 'require' | 'verify-ca' | 'verify-full';

export interface PostgisConfig {
  host: string;
  port: number;
  database: string;
  username: string;
  password?: string | undefined;
  ssl_mode: SslMode;
}

/** Longest wait for a connection (libpq's connect_timeout for GDAL says the same). */
export const CONNECT_TIMEOUT_MS = 10_000;

export const describeServer = (c: PostgisConfig) => `PostgreSQL at ${c.host}:${c.port}`;

/** What was tried, for results and error details: never the password. */
export const triedOf = (c: PostgisConfig) => ({ host: c.host, port: c.port, database: c.database, username: c.username, ssl_mode: c.ssl_mode });

/** SQLSTATE classes and codes → reasons (https://www.postgresql.org/docs/current/errcodes-appendix.html). */
const sqlstateReasons: Record<string, ConnectorFailureReason> = {
  '28P01': 'authentication_failed',
  '28000': 'authentication_failed',
  '3D000': 'not_found',
  '3F000': 'not_found',
  '42P01': 'not_found',
  '42703': 'not_found',
  '42883': 'invalid_data',
  '42501': 'permission_denied',
  '25006': 'permission_denied',
  '42P07': 'target_exists',
  '57014': 'timeout',
  '57P01': 'server_error',
  '57P02': 'server_error',
  '57P03': 'unreachable',
  '53300': 'server_error',
  '40001': 'server_error',
  '40P01': 'server_error',
  '55P03': 'timeout',
};
const sqlstateClassReasons: Record<string, ConnectorFailureReason> = {
  '08': 'unreachable',
  '0A': 'invalid_data',
  '22': 'invalid_data',
  '23': 'invalid_data',
  '2B': 'invalid_data',
  '42': 'invalid_data',
  '53': 'server_error',
  '58': 'server_error',
  XX: 'server_error',
};

export function reasonOfSqlstate(code: string): ConnectorFailureReason | undefined {
  return sqlstateReasons[code] ?? sqlstateClassReasons[code.slice(0, 2)];
}

/**
 * Any error of a PostgreSQL conversation as a ConnectorError. `what` names the server (and the
 * object, when there is one); the server's own message is kept, as it names objects and never
 * echoes a password.
 */
export function classifyPg(error: unknown, what: string, details: Record<string, unknown> = {}): ConnectorError {
  if (error instanceof ConnectorError) return error;
  const e = error as { code?: unknown; message?: unknown; detail?: unknown };
  const message = typeof e?.message === 'string' ? e.message : String(error);
  if (typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code)) {
    const reason = reasonOfSqlstate(e.code) ?? 'invalid_response';
    return new ConnectorError(reason, `${what}: ${message}`, { ...details, sqlstate: e.code });
  }
  if (/does not support SSL/i.test(message)) return new ConnectorError('tls_error', `${what} does not accept TLS connections (ssl_mode requires TLS)`, details);
  if (/timeout/i.test(message)) return new ConnectorError('timeout', `${what} did not answer within ${CONNECT_TIMEOUT_MS / 1000} s`, details);
  if (/Connection terminated unexpectedly/i.test(message)) return new ConnectorError('unreachable', `${what} closed the connection`, details);
  return classify(error, what, details);
}

function tlsOptions(config: PostgisConfig, mode: 'plain' | 'tls'): false | ConnectionOptions {
  if (mode === 'plain') return false;
  switch (config.ssl_mode) {
    case 'verify-full':
      return { rejectUnauthorized: true, servername: config.host };
    case 'verify-ca':
      // The chain is checked, the host name is not (libpq's verify-ca).
      return { rejectUnauthorized: true, checkServerIdentity: () => undefined };
    default:
      // allow, prefer, require: encrypted, the certificate not checked (as libpq does).
      return { rejectUnauthorized: false };
  }
}

async function connectOnce(config: PostgisConfig, address: string, mode: 'plain' | 'tls', signal: AbortSignal): Promise<pg.Client> {
  const tls = tlsOptions(config, mode);
  const client = new pg.Client({
    host: address,
    port: config.port,
    database: config.database,
    user: config.username,
    password: config.password ?? '',
    // The name stays the TLS server name (SNI, and what verify-full checks).
    ssl: tls && !egressIsIp(config.host) ? { servername: config.host, ...tls } : tls,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: 'geoflow',
  });
  // A server that goes away later must not crash the process: errors surface on the next query.
  client.on('error', () => undefined);
  // Closing the socket makes the pending connect fail at once.
  const abort = () => destroySocket(client);
  signal.addEventListener('abort', abort, { once: true });
  try {
    await client.connect();
    return client;
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  } finally {
    signal.removeEventListener('abort', abort);
  }
}

/**
 * node-postgres sessions, honouring ssl_mode as libpq does: `prefer` falls back to a plain
 * connection when the server has no TLS, `allow` tries plain first and TLS when the server
 * demands it, `require` and the verify modes fail with tls_error without TLS. Verification uses
 * Node's CA store (the system's certificates). The signal closes the socket.
 */
const postgisSessions = sessionsOf<PostgisConfig, pg.Client>({
  describe: describeServer,
  tried: triedOf,
  classify: classifyPg,
  connectTimeoutMs: CONNECT_TIMEOUT_MS,
  endpoint: (c) => ({ host: c.host, port: c.port }),
  async open(config, address, signal) {
    const attempts: ('plain' | 'tls')[] =
      config.ssl_mode === 'disable' ? ['plain'] : config.ssl_mode === 'allow' ? ['plain', 'tls'] : config.ssl_mode === 'prefer' ? ['tls', 'plain'] : ['tls'];
    let last: ConnectorError | undefined;
    for (const mode of attempts) {
      try {
        return await connectOnce(config, address!, mode, signal);
      } catch (error) {
        last = classifyPg(error, describeServer(config), triedOf(config));
        const tlsRefused = mode === 'tls' && last.reason === 'tls_error';
        // pg_hba.conf may accept only TLS (hostssl): for `allow` that is the cue to try TLS.
        const plainRefused = mode === 'plain' && last.reason === 'authentication_failed';
        if (signal.aborted || (!tlsRefused && !plainRefused)) break;
      }
    }
    throw last!;
  },
  interrupt: destroySocket,
  close: (client) => client.end().catch(() => undefined),
});

/** A connected client (the caller closes it). */
export const connect = postgisSessions.open;
/** Runs fn with a connected client and always closes it. Query errors are classified. */
export const withClient = postgisSessions.with;
/** The connection test: a probe on a new session; any failure is classified into the result. */
export const testConnection = postgisSessions.test;
/** Runs fn with a client already connected (left open): the signal closes its socket, query errors are classified. */
export const onClient = postgisSessions.on;
/** Runs fn with a client of its own deadline, for cleanup; never throws. */
export const cleanupClient = postgisSessions.cleanup;

/** "schema"."table", quoted, whatever the names hold. */
export const qualified = (schema: string, table: string) => `${pg.escapeIdentifier(schema)}.${pg.escapeIdentifier(table)}`;
export const ident = (name: string) => pg.escapeIdentifier(name);
export const literal = (value: string) => pg.escapeLiteral(value);

/** PostgreSQL truncates identifiers to 63 bytes; so do we, on a character boundary. */
export function pgName(name: string): string {
  let out = name;
  while (Buffer.byteLength(out) > 63) out = out.slice(0, -1);
  return out;
}
