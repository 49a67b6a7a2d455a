import mysql from 'mysql2/promise';
import { classify } from '../shared/policy/classify.js';
import { sessionsOf } from '../shared/sql/session.js';
import { ConnectorError, type ConnectorFailureReason } from '../../domain/transfers.js';

/*
 * Connections to a user's MySQL or MariaDB through mysql2, for everything that is SQL rather than
 * bulk data: the connection test, checks before a transfer, and the swap of a delivery. Bulk
 * reads and loads go through GDAL's MySQL driver (./ogr.ts). Errors are classified by the
 * server's error codes, never by message text.
 */

/** The parsed configuration (its schema is in ./index.ts). */
export interface MysqlConfig {
  host: string;
  port: number;
  database: string;
  username: string;
  password?: string | undefined;
  ssl: boolean;
}

export const CONNECT_TIMEOUT_MS = 10_000;

export const describeServer = (c: MysqlConfig) => `MySQL at ${c.host}:${c.port}`;
export const triedOf = (c: MysqlConfig) => ({ host: c.host, port: c.port, database: c.database, username: c.username, ssl: c.ssl });

/** mysql2's error codes (the server's ER_* names and the client's own) → reasons. */
const codeReasons: Record<string, ConnectorFailureReason> = {
  ER_ACCESS_DENIED_ERROR: 'authentication_failed',
  ER_ACCESS_DENIED_NO_PASSWORD_ERROR: 'authentication_failed',
  ER_NOT_SUPPORTED_AUTH_MODE: 'authentication_failed',
  ER_HOST_NOT_PRIVILEGED: 'authentication_failed',
  ER_DBACCESS_DENIED_ERROR: 'permission_denied',
  ER_TABLEACCESS_DENIED_ERROR: 'permission_denied',
  ER_COLUMNACCESS_DENIED_ERROR: 'permission_denied',
  ER_SPECIFIC_ACCESS_DENIED_ERROR: 'permission_denied',
  ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION: 'permission_denied',
  ER_BAD_DB_ERROR: 'not_found',
  ER_NO_SUCH_TABLE: 'not_found',
  ER_BAD_FIELD_ERROR: 'not_found',
  ER_BAD_TABLE_ERROR: 'not_found',
  ER_TABLE_EXISTS_ERROR: 'target_exists',
  ER_PARSE_ERROR: 'invalid_data',
  ER_WRONG_VALUE_COUNT_ON_ROW: 'invalid_data',
  ER_TRUNCATED_WRONG_VALUE: 'invalid_data',
  ER_TRUNCATED_WRONG_VALUE_FOR_FIELD: 'invalid_data',
  ER_BAD_NULL_ERROR: 'invalid_data',
  ER_DUP_ENTRY: 'invalid_data',
  ER_CANT_CREATE_GEOMETRY_OBJECT: 'invalid_data',
  ER_DATA_TOO_LONG: 'invalid_data',
  ER_LOCK_WAIT_TIMEOUT: 'timeout',
  ER_LOCK_DEADLOCK: 'server_error',
  ER_CON_COUNT_ERROR: 'server_error',
  ER_SERVER_SHUTDOWN: 'server_error',
  HANDSHAKE_NO_SSL_SUPPORT: 'tls_error',
  PROTOCOL_CONNECTION_LOST: 'unreachable',
};

/** Any error of a MySQL conversation as a ConnectorError; the server's message names objects, never a password. */
export function classifyMysql(error: unknown, what: string, details: Record<string, unknown> = {}): ConnectorError {
  if (error instanceof ConnectorError) return error;
  const e = error as { code?: unknown; errno?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : undefined;
  const message = typeof e?.message === 'string' ? e.message : String(error);
  if (code && codeReasons[code]) return new ConnectorError(codeReasons[code], `${what}: ${message}`, { ...details, error_code: code });
  if (code === 'ETIMEDOUT')
    return new ConnectorError('timeout', `${what} did not answer within ${CONNECT_TIMEOUT_MS / 1000} s`, { ...details, error_code: code });
  if (/SSL|TLS|certificate/i.test(message) && !code?.startsWith('ER_')) return new ConnectorError('tls_error', `${what}: ${message}`, details);
  if (code?.startsWith('ER_')) return new ConnectorError('invalid_data', `${what}: ${message}`, { ...details, error_code: code });
  return classify(error, what, details);
}

/**
 * mysql2 sessions. `ssl: true` requires TLS and verifies the certificate against Node's CA store;
 * a server without TLS fails with tls_error.
 */
const mysqlSessions = sessionsOf<MysqlConfig, mysql.Connection>({
  describe: describeServer,
  tried: triedOf,
  classify: classifyMysql,
  connectTimeoutMs: CONNECT_TIMEOUT_MS,
  endpoint: (c) => ({ host: c.host, port: c.port }),
  async open(config, address) {
    const connection = await mysql.createConnection({
      host: address!,
      port: config.port,
      database: config.database,
      user: config.username,
      password: config.password ?? '',
      connectTimeout: CONNECT_TIMEOUT_MS,
      charset: 'utf8mb4_unicode_ci',
      ...(config.ssl ? { ssl: { rejectUnauthorized: true } } : {}),
      supportBigNumbers: true,
      bigNumberStrings: true,
      dateStrings: true,
    });
    connection.on('error', () => undefined);
    return connection;
  },
  interrupt: (connection) => connection.destroy(),
  close: (connection) => connection.end().catch(() => connection.destroy()),
});

/** Runs fn with a connection and always closes it; errors are classified; the signal destroys the connection. */
export const withConnection = mysqlSessions.with;
/** The connection test: a probe on a new session; any failure is classified into the result. */
export const testConnection = mysqlSessions.test;
/** Runs fn with a connection of its own deadline, for cleanup; never throws. */
export const cleanupConnection = mysqlSessions.cleanup;

/** `name`, quoted for MySQL whatever it holds. */
export const ident = (name: string) => `\`${name.replace(/`/g, '``')}\``;
