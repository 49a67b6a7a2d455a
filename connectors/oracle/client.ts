import oracledb from 'oracledb';
import { classify } from '../shared/policy/classify.js';
import { sessionsOf } from '../shared/sql/session.js';
import { ConnectorError, type ConnectorFailureReason } from '../../domain/transfers.js';

/*
 * Connections to a user's Oracle Database through node-oracledb in Thin mode: pure JavaScript,
 * no Instant Client, no wallet. Each session gets ISO 8601 date formats, '.' as decimal mark and
 * UTC, so values printed by the server (a cursor's largest value, dates fetched as text) read
 * back the same on any database. Errors are classified by ORA- and NJS- codes, never by text.
 */

export interface OracleConfig {
  host?: string | undefined;
  port: number;
  service_name?: string | undefined;
  connect_string?: string | undefined;
  username: string;
  password?: string | undefined;
}

export const CONNECT_TIMEOUT_MS = 10_000;

/** A connect-descriptor value: parentheses and the like cannot be escaped there, so they are refused. */
const descriptorValue = (what: string, v: string) => {
  if (/[()=\\"'\s]/.test(v)) throw new ConnectorError('invalid_data', `The Oracle ${what} must not contain parentheses, quotes, '=' or spaces`, {}, false);
  return v;
};

/**
 * The connect string: the configured Easy Connect string, or a connect descriptor of host, port
 * and service_name (a descriptor takes any service name; Easy Connect's parser refuses some).
 */
export function connectStringOf(c: OracleConfig, address = c.host): string {
  if (c.connect_string) return c.connect_string;
  if (!c.host || !c.service_name) {
    throw new ConnectorError('invalid_data', 'An Oracle connection needs host and service_name, or connect_string (Easy Connect)', {}, false);
  }
  descriptorValue('host', c.host);
  return `(DESCRIPTION=(ADDRESS=(PROTOCOL=TCP)(HOST=${descriptorValue('host', address!)})(PORT=${c.port}))(CONNECT_DATA=(SERVICE_NAME=${descriptorValue('service_name', c.service_name)})))`;
}

/**
 * Host and port an Easy Connect string names (`[tcp[s]://][//]host[:port][/service]…`), for the
 * outbound policy; null for forms it cannot read (a full descriptor), which are refused.
 */
export function easyConnectEndpoint(connectString: string): { host: string; port: number } | null {
  const m = /^(?:tcps?:\/\/)?(?:\/\/)?(\[[^\]]+\]|[^:/?\s()]+)(?::(\d+))?(?:[/?]|$)/i.exec(connectString.trim());
  if (!m) return null;
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port: m[2] ? Number(m[2]) : 1521 };
}

/**
 * Where a configuration connects, for the outbound policy: a descriptor of ours connects to the
 * checked address (no second lookup); an Easy Connect string is checked by its host and port
 * (its name is resolved again by the driver, which keeps TLS server-name checks working for
 * tcps://). A connect_string that is a full descriptor cannot be checked and is refused.
 */
export function endpointOf(c: OracleConfig): { host: string; port: number } {
  if (!c.connect_string) {
    connectStringOf(c);
    return { host: c.host!, port: c.port };
  }
  const endpoint = easyConnectEndpoint(c.connect_string);
  if (!endpoint) {
    throw new ConnectorError(
      'invalid_data',
      'connect_string must be an Easy Connect string (host[:port]/service): a full connect descriptor cannot be checked by the outbound policy; use host, port and service_name',
      {},
      false,
    );
  }
  return endpoint;
}

export const describeServer = (c: OracleConfig) => `Oracle at ${c.connect_string ?? `${c.host ?? '?'}:${c.port}/${c.service_name ?? '?'}`}`;
export const triedOf = (c: OracleConfig) => ({
  host: c.host ?? null,
  port: c.port,
  service_name: c.service_name ?? null,
  connect_string: c.connect_string ?? null,
  username: c.username,
});

const codeReasons: Record<string, ConnectorFailureReason> = {
  'ORA-01017': 'authentication_failed', // invalid username/password
  'ORA-28000': 'authentication_failed', // account locked
  'ORA-28001': 'authentication_failed', // password expired
  'ORA-01045': 'permission_denied', // no CREATE SESSION
  'ORA-01031': 'permission_denied', // insufficient privileges
  'ORA-01456': 'permission_denied', // a write inside a READ ONLY transaction (a query Source's)
  'ORA-01950': 'permission_denied', // no quota on tablespace
  'ORA-01536': 'permission_denied', // quota exceeded
  'ORA-00942': 'not_found', // table or view does not exist
  'ORA-00904': 'not_found', // invalid identifier (column)
  'ORA-04043': 'not_found', // object does not exist
  'ORA-01918': 'not_found', // user does not exist
  'ORA-12514': 'not_found', // listener does not know the service
  'ORA-12505': 'not_found', // listener does not know the SID
  'ORA-00955': 'target_exists', // name already used by an existing object
  'ORA-12541': 'unreachable', // no listener
  'ORA-12543': 'unreachable',
  'ORA-12545': 'unreachable', // host not found
  'ORA-12170': 'timeout', // connect timeout
  'ORA-01013': 'timeout', // user requested cancel
  'ORA-00054': 'timeout', // resource busy
  'ORA-01653': 'server_error', // unable to extend table
  'ORA-01654': 'server_error',
  'ORA-04031': 'server_error',
  'NJS-500': 'unreachable', // connection to the database was closed
  'NJS-501': 'unreachable',
  'NJS-503': 'unreachable', // could not establish a connection to host
  'NJS-510': 'timeout', // connection timed out
  'NJS-511': 'unreachable',
  'NJS-518': 'not_found', // service not registered with the listener
  'NJS-521': 'unreachable',
  'NJS-515': 'invalid_data', // not an Easy Connect string
};

export function reasonOfCode(code: string): ConnectorFailureReason | undefined {
  return codeReasons[code] ?? (/^ORA-13\d{3}$/.test(code) || /^ORA-0(1400|1401|1438|1722|1840|1841|1861|12899)$/.test(code) ? 'invalid_data' : undefined);
}

/** Any error of an Oracle conversation as a ConnectorError; Oracle's message names objects, never a password. */
export function classifyOracle(error: unknown, what: string, details: Record<string, unknown> = {}): ConnectorError {
  if (error instanceof ConnectorError) return error;
  const e = error as { code?: unknown; message?: unknown; cause?: unknown };
  const message = typeof e?.message === 'string' ? e.message.split('\n')[0]! : String(error);
  const code = typeof e?.code === 'string' ? e.code : undefined;
  if (code) {
    const reason = reasonOfCode(code);
    if (reason === 'unreachable' || reason === 'timeout') {
      // The socket's own error (ECONNREFUSED, a certificate that does not verify …) may say more.
      const inner = e.cause ? classify(e.cause, what, details) : null;
      if (inner && inner.reason !== 'invalid_response') return new ConnectorError(inner.reason, `${what}: ${message}`, { ...details, error_code: code });
      if (/certificate|TLS|SSL/i.test(message)) return new ConnectorError('tls_error', `${what}: ${message}`, { ...details, error_code: code });
    }
    if (reason) return new ConnectorError(reason, `${what}: ${message}`, { ...details, error_code: code });
    if (code.startsWith('ORA-')) return new ConnectorError('invalid_data', `${what}: ${message}`, { ...details, error_code: code });
    if (/certificate|TLS|SSL/i.test(message)) return new ConnectorError('tls_error', `${what}: ${message}`, { ...details, error_code: code });
  }
  return classify(error, what, details);
}

/** Formats the session prints and reads dates and numbers in. */
export const SESSION_SETUP = `ALTER SESSION SET NLS_DATE_FORMAT = 'YYYY-MM-DD"T"HH24:MI:SS' NLS_TIMESTAMP_FORMAT = 'YYYY-MM-DD"T"HH24:MI:SS.FF6' NLS_TIMESTAMP_TZ_FORMAT = 'YYYY-MM-DD"T"HH24:MI:SS.FF6TZH:TZM' NLS_NUMERIC_CHARACTERS = '.,' TIME_ZONE = '+00:00'`;

/** Thin-mode sessions; the signal breaks a running call. */
const oracleSessions = sessionsOf<OracleConfig, oracledb.Connection>({
  describe: describeServer,
  tried: triedOf,
  classify: classifyOracle,
  connectTimeoutMs: CONNECT_TIMEOUT_MS,
  endpoint: endpointOf,
  async open(config, address) {
    const connection = await oracledb.getConnection({
      user: config.username,
      password: config.password ?? '',
      connectString: config.connect_string ?? connectStringOf(config, address!),
      connectTimeout: CONNECT_TIMEOUT_MS / 1000,
      transportConnectTimeout: CONNECT_TIMEOUT_MS / 1000,
    });
    try {
      await connection.execute(SESSION_SETUP);
    } catch (error) {
      await connection.close().catch(() => undefined);
      throw error;
    }
    return connection;
  },
  interrupt: (connection) => void connection.break().catch(() => undefined),
  close: (connection) => connection.close().catch(() => undefined),
});

/** A connected Thin-mode session (the caller closes it); the signal ends a pending connect with a timeout (a late session is closed). */
export const connect = oracleSessions.open;
/** Runs fn with a session and always closes it; errors are classified; the signal breaks the session. */
export const withConnection = oracleSessions.with;
/** The connection test: a probe on a new session; any failure is classified into the result. */
export const testConnection = oracleSessions.test;
/** Runs fn with a session of its own deadline, for cleanup; never throws. */
export const cleanupConnection = oracleSessions.cleanup;

/** Rows of a small query as arrays. */
export async function rows(c: oracledb.Connection, sql: string, binds: oracledb.BindParameters = {}): Promise<unknown[][]> {
  const r = await c.execute<unknown[]>(sql, binds, { outFormat: oracledb.OUT_FORMAT_ARRAY });
  return r.rows ?? [];
}
