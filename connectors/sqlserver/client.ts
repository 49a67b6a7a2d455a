import { Connection, Request, TYPES, type ConnectionConfiguration } from 'tedious';
import { classify } from '../shared/policy/classify.js';
import { sessionsOf } from '../shared/sql/session.js';
import { ConnectorError, type ConnectorFailureReason } from '../../domain/transfers.js';

/*
 * Connections to a user's SQL Server (or Azure SQL) through tedious, Microsoft's maintained
 * TDS client for Node: the connection test, discovery, the reads of a Source, the bulk load and
 * the swap of a delivery. TLS is on unless the configuration turns it off, and the server's
 * certificate is verified against the system's CAs unless trust_server_certificate opts out.
 * Errors are classified by SQL Server's error numbers and tedious' codes, never by message text.
 */

export interface SqlServerConfig {
  host: string;
  port: number;
  database: string;
  username: string;
  password?: string | undefined;
  encrypt: boolean;
  trust_server_certificate: boolean;
}

export const CONNECT_TIMEOUT_MS = 10_000;

export const describeServer = (c: SqlServerConfig) => `SQL Server at ${c.host}:${c.port}`;
export const triedOf = (c: SqlServerConfig) => ({
  host: c.host,
  port: c.port,
  database: c.database,
  username: c.username,
  encrypt: c.encrypt,
  trust_server_certificate: c.trust_server_certificate,
});

/** SQL Server error numbers (sys.messages) → reasons. */
const numberReasons: Record<number, ConnectorFailureReason> = {
  18456: 'authentication_failed', // Login failed for user
  18452: 'authentication_failed', // untrusted domain login
  18470: 'authentication_failed', // account disabled
  18487: 'authentication_failed', // password expired
  18488: 'authentication_failed', // password must be changed
  4060: 'not_found', // cannot open database requested by the login
  911: 'not_found', // database does not exist
  208: 'not_found', // invalid object name
  207: 'not_found', // invalid column name
  2760: 'not_found', // schema does not exist or no permission
  15151: 'not_found', // cannot find the object, or no permission
  3701: 'not_found', // cannot drop: does not exist or no permission
  229: 'permission_denied', // permission denied on object
  230: 'permission_denied', // permission denied on column
  262: 'permission_denied', // permission denied in database (CREATE TABLE …)
  916: 'permission_denied', // principal cannot access the database
  1088: 'permission_denied',
  15247: 'permission_denied', // no permission to perform this action
  2714: 'target_exists', // there is already an object named
  1205: 'server_error', // deadlock victim
  1222: 'timeout', // lock request timeout
  701: 'server_error', // out of memory
  1105: 'server_error', // filegroup full
  9002: 'server_error', // transaction log full
  40613: 'unreachable', // Azure SQL: database not currently available
  40197: 'server_error',
  40501: 'server_error', // Azure SQL: service busy
};

/** SQL Server's own numbers of data errors (conversion, truncation, constraint, spatial parsing). */
const dataNumbers = new Set([102, 156, 170, 241, 242, 245, 515, 2601, 2627, 2628, 8114, 8115, 8152, 6522, 24111, 24112, 24114, 24119, 24200, 24205, 24206]);

export function reasonOfNumber(n: number): ConnectorFailureReason | undefined {
  return numberReasons[n] ?? (dataNumbers.has(n) ? 'invalid_data' : undefined);
}

/** Any error of a SQL Server conversation as a ConnectorError; the server's message names objects, never a password. */
export function classifySqlServer(error: unknown, what: string, details: Record<string, unknown> = {}): ConnectorError {
  if (error instanceof ConnectorError) return error;
  const e = error as { code?: unknown; number?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  // tedious reports a login that several errors refused as an AggregateError-like list.
  const message = typeof e?.message === 'string' ? e.message : String(error);
  const number = typeof e?.number === 'number' ? e.number : undefined;
  if (number !== undefined) {
    const reason = reasonOfNumber(number) ?? (number >= 50000 ? 'server_error' : 'invalid_data');
    return new ConnectorError(reason, `${what}: ${message}`, { ...details, error_number: number });
  }
  const code = typeof e?.code === 'string' ? e.code : undefined;
  if (code === 'ELOGIN')
    return new ConnectorError(/Cannot open database/i.test(message) ? 'not_found' : 'authentication_failed', `${what}: ${message}`, {
      ...details,
      error_code: code,
    });
  if (code === 'ETIMEOUT')
    return new ConnectorError('timeout', `${what} did not answer within ${CONNECT_TIMEOUT_MS / 1000} s`, { ...details, error_code: code });
  if (code === 'ECANCEL') return new ConnectorError('timeout', `${what}: stopped (deadline or cancellation)`, { ...details, error_code: code });
  if (code === 'EINSTLOOKUP') return new ConnectorError('unreachable', `${what}: ${message}`, { ...details, error_code: code });
  const causeCode = (e?.cause as { code?: unknown } | undefined)?.code;
  if (code === 'ESOCKET' || code === 'ECONNCLOSED' || code === 'ENOTOPEN') {
    // The socket's own error (ECONNREFUSED, a certificate that does not verify …) says more.
    const inner = classify(e.cause ?? error, what, details);
    if (inner.reason !== 'invalid_response') return inner;
    if (/certificate|TLS|SSL|encrypt/i.test(message)) return new ConnectorError('tls_error', `${what}: ${message}`, { ...details, error_code: code });
    return new ConnectorError('unreachable', `${what} could not be reached (${code})`, { ...details, error_code: code });
  }
  if (typeof causeCode === 'string' || /certificate|self[- ]signed/i.test(message)) {
    const inner = classify(e.cause ?? error, what, details);
    if (inner.reason !== 'invalid_response') return inner;
    return new ConnectorError('tls_error', `${what}: ${message}`, details);
  }
  return classify(error, what, details);
}

/**
 * tedious' connection settings of a configuration (the password in memory only). `address` is
 * the one the outbound policy checked (connect there, no second lookup to rebind); the configured
 * host stays the TLS server name.
 */
export function connectionConfig(c: SqlServerConfig, address = c.host): ConnectionConfiguration {
  return {
    server: address,
    authentication: { type: 'default', options: { userName: c.username, password: c.password ?? '' } },
    options: {
      port: c.port,
      database: c.database,
      encrypt: c.encrypt,
      trustServerCertificate: c.trust_server_certificate,
      ...(address !== c.host ? { serverName: c.host } : {}),
      connectTimeout: CONNECT_TIMEOUT_MS,
      // Long reads and bulk loads are bounded by the caller's signal, not by a fixed time.
      requestTimeout: 0,
      appName: 'geoflow',
      useUTC: true,
      // Rows as arrays in column order, whatever the names.
      useColumnNames: false,
    },
  };
}

/** tedious connections; closing one ends a pending connect or a running request at once. */
const sqlServerSessions = sessionsOf<SqlServerConfig, Connection>({
  describe: describeServer,
  tried: triedOf,
  classify: classifySqlServer,
  connectTimeoutMs: CONNECT_TIMEOUT_MS,
  endpoint: (c) => ({ host: c.host, port: c.port }),
  open(config, address, signal) {
    const connection = new Connection(connectionConfig(config, address!));
    // Errors after connecting surface on the next request.
    connection.on('error', () => undefined);
    const onAbort = () => connection.close();
    signal.addEventListener('abort', onAbort, { once: true });
    return new Promise<Connection>((resolve, reject) => {
      connection.connect((error) => {
        signal.removeEventListener('abort', onAbort);
        if (error) {
          connection.close();
          reject(error);
        } else resolve(connection);
      });
    });
  },
  interrupt: (connection) => connection.close(),
  close: async (connection) => connection.close(),
});

/** A connected tedious connection (the caller closes it); the signal ends a pending connect with a timeout. */
export const connect = sqlServerSessions.open;
/** Runs fn with a connection and always closes it; errors are classified; the signal closes the connection. */
export const withConnection = sqlServerSessions.with;
/** The connection test: a probe on a new session; any failure is classified into the result. */
export const testConnection = sqlServerSessions.test;
/** Runs fn with a connection of its own deadline, for cleanup; never throws. */
export const cleanupConnection = sqlServerSessions.cleanup;

/** What tedious says about a result column (the parts used here). */
export interface ColumnInfo {
  colName: string;
  type: { name: string };
  precision?: number | undefined;
  scale?: number | undefined;
  udtInfo?: { typeName: string } | undefined;
}

const columnsOf = (meta: unknown): ColumnInfo[] => (Array.isArray(meta) ? meta : Object.values(meta as object)) as ColumnInfo[];

export type Params = Record<string, string | number | boolean | null | Buffer>;

function addParameters(request: Request, params: Params): void {
  for (const [name, value] of Object.entries(params)) {
    if (typeof value === 'number') request.addParameter(name, Number.isInteger(value) ? TYPES.BigInt : TYPES.Float, value);
    else if (typeof value === 'boolean') request.addParameter(name, TYPES.Bit, value);
    else if (Buffer.isBuffer(value)) request.addParameter(name, TYPES.VarBinary, value, { length: Infinity });
    else request.addParameter(name, TYPES.NVarChar, value, { length: typeof value === 'string' && value.length > 4000 ? Infinity : 4000 });
  }
}

export interface QueryResult {
  columns: ColumnInfo[];
  rows: unknown[][];
  rowCount: number;
}

/** One batch with named parameters (@name); rows as arrays. For small results (checks, catalogues). */
export function query(connection: Connection, sql: string, params: Params = {}): Promise<QueryResult> {
  return new Promise((resolve, reject) => {
    const rows: unknown[][] = [];
    let columns: ColumnInfo[] = [];
    const request = new Request(sql, (error, rowCount) => (error ? reject(error) : resolve({ columns, rows, rowCount: rowCount ?? 0 })));
    addParameters(request, params);
    request.on('columnMetadata', (meta) => {
      // A batch of several statements: the last result set's columns.
      columns = columnsOf(meta);
    });
    request.on('row', (row) => rows.push((Array.isArray(row) ? row : Object.values(row)).map((c: { value: unknown }) => c.value)));
    Object.keys(params).length ? connection.execSql(request) : connection.execSqlBatch(request);
  });
}

/** The rows of one query, streamed: at most `highWater` rows wait in memory (the request pauses meanwhile). */
export async function* streamRows(
  connection: Connection,
  sql: string,
  params: Params = {},
  onColumns?: (columns: ColumnInfo[]) => void,
  highWater = 2000,
): AsyncGenerator<unknown[]> {
  const queue: unknown[][] = [];
  let finished = false;
  let failure: unknown;
  let wake: (() => void) | undefined;
  const notify = () => {
    wake?.();
    wake = undefined;
  };
  const request = new Request(sql, (error) => {
    finished = true;
    failure = error ?? undefined;
    notify();
  });
  addParameters(request, params);
  request.on('columnMetadata', (meta) => onColumns?.(columnsOf(meta)));
  request.on('row', (row) => {
    queue.push((Array.isArray(row) ? row : Object.values(row)).map((c: { value: unknown }) => c.value));
    if (queue.length >= highWater) request.pause();
    notify();
  });
  connection.execSql(request);
  while (true) {
    if (queue.length) {
      const batch = queue.splice(0, queue.length);
      request.resume();
      for (const row of batch) yield row;
      continue;
    }
    if (finished) {
      if (failure) throw failure;
      return;
    }
    await new Promise<void>((resolve) => {
      wake = resolve;
    });
  }
}

/** Runs fn inside a transaction: committed when it returns, rolled back when it throws. */
export async function inTransaction<T>(connection: Connection, fn: () => Promise<T>): Promise<T> {
  await new Promise<void>((resolve, reject) => connection.beginTransaction((e) => (e ? reject(e) : resolve())));
  try {
    const value = await fn();
    await new Promise<void>((resolve, reject) => connection.commitTransaction((e) => (e ? reject(e) : resolve())));
    return value;
  } catch (error) {
    await new Promise<void>((resolve) => connection.rollbackTransaction(() => resolve()));
    throw error;
  }
}

/**
 * Runs fn inside a transaction that is always rolled back: a user's query is read this way, so
 * whatever it could change in the database (SQL Server has no read-only session) is undone. The
 * one-statement check (one-select.ts) is what keeps it a SELECT; this is the second line.
 */
export async function rolledBack<T>(connection: Connection, fn: () => Promise<T>): Promise<T> {
  await new Promise<void>((resolve, reject) => connection.beginTransaction((e) => (e ? reject(e) : resolve())));
  try {
    return await fn();
  } finally {
    await new Promise<void>((resolve) => connection.rollbackTransaction(() => resolve()));
  }
}
