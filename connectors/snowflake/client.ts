import { createPrivateKey } from 'node:crypto';
import type http from 'node:http';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import snowflake from 'snowflake-sdk';
import { classify, connectorErrorIn } from '../shared/policy/classify.js';
import { pinAgent } from '../shared/policy/egress.js';
import { ConnectorError, type ConnectorFailureReason } from '../../domain/transfers.js';
import { nextHop, publicUrl } from '../shared/http/redirects.js';
import { sessionsOf } from '../shared/sql/session.js';

/*
 * Connections to a user's Snowflake account through Snowflake's Node.js driver (snowflake-sdk):
 * SQL statements, results streamed row by row, and the driver's PUT (files to an internal stage)
 * for bulk loads. The driver's own logging is off: nothing of a session, a statement or a key can
 * reach a log through it. Errors are classified by Snowflake's error codes and the driver's, never
 * by message text.
 */

export interface SnowflakeConfig {
  account: string;
  username: string;
  password?: string | undefined;
  private_key?: string | undefined;
  private_key_passphrase?: string | undefined;
  warehouse?: string | undefined;
  database: string;
  schema: string;
  role?: string | undefined;
  access_url?: string | undefined;
}

snowflake.configure({ logLevel: 'OFF' });

/*
 * The outbound policy (connectors/shared/policy/egress.ts). The driver takes no agent: it builds its own
 * per connection (an OCSP- or CRL-checking https.Agent, or a proxy agent) in
 * NodeHttpClient.getAgent, for every request to the account (login, statements, result chunks).
 * That method is wrapped so each agent it hands out is pinned: its sockets open only to an
 * address the policy allowed, its own certificate checks kept. snowflake-sdk has no "exports"
 * map, so the module is the one the driver itself loaded.
 * Not covered: a PUT's upload to the stage, which the driver sends with the cloud's SDK (S3,
 * Azure, GCS) to the location the account names, with agents of their own (docs/decisions.md).
 */
function pinSnowflakeAgents(): void {
  const fromDriver = createRequire(createRequire(import.meta.url).resolve('snowflake-sdk'));
  const { NodeHttpClient } = fromDriver('./lib/http/node_untyped.js') as {
    NodeHttpClient: { prototype: { getAgent(this: unknown, url: URL, ...rest: unknown[]): http.Agent } };
  };
  const getAgent = NodeHttpClient.prototype.getAgent;
  if ((getAgent as { egress?: true }).egress) return;
  const pinned = function (this: unknown, url: URL, ...rest: unknown[]) {
    return pinAgent(getAgent.call(this, url, ...rest), url.protocol === 'http:' ? 'http:' : 'https:');
  };
  NodeHttpClient.prototype.getAgent = Object.assign(pinned, { egress: true as const });
}
pinSnowflakeAgents();

/*
 * Redirects: the driver's requests go through its own axios instance, which follows redirects
 * and, on a 307/308, sends the body again wherever the redirect points: the login request's body
 * holds the password (issue 32). Every request it makes gets a redirect hook that applies
 * connectors/shared/http/redirects.ts's rule against the request's first URL: a body never goes to
 * another origin (the redirect is refused, and the driver reports the ConnectorError as its
 * cause), nor do credential headers.
 */
interface AxiosLike {
  interceptors: { request: { use(f: (config: Record<string, any>) => Record<string, any>): void } };
}
type BeforeRedirect = (options: Record<string, any>, response: { statusCode: number }, request: { url: string; method: string }) => void;

function keepSnowflakeCredentialsAtHome(): void {
  const fromDriver = createRequire(createRequire(import.meta.url).resolve('snowflake-sdk'));
  const axios = (fromDriver('./lib/http/axios_instance.js') as { default: AxiosLike & { egress?: true } }).default;
  if (axios.egress) return;
  axios.egress = true;
  axios.interceptors.request.use((config) => {
    const first = new URL(String(config.url ?? ''), config.baseURL).toString();
    const theirs = config.beforeRedirect as BeforeRedirect | undefined;
    const hook: BeforeRedirect = (options, response, request) => {
      const hop = nextHop(
        { url: request.url, method: request.method, headers: options.headers ?? {}, body: config.data ?? undefined },
        first,
        response.statusCode,
        String(options.href),
        { label: `Snowflake at ${publicUrl(first)}` },
      );
      options.headers = hop.headers;
      theirs?.(options, response, request);
    };
    return { ...config, beforeRedirect: hook };
  });
}
keepSnowflakeCredentialsAtHome();

export const CONNECT_TIMEOUT_MS = 15_000;
export const describeServer = (c: SnowflakeConfig) => `Snowflake account ${c.account}`;
export const triedOf = (c: SnowflakeConfig) => ({
  account: c.account,
  ...(c.access_url ? { access_url: c.access_url } : {}),
  username: c.username,
  auth: c.private_key ? 'key_pair' : 'password',
  warehouse: c.warehouse ?? null,
  database: c.database,
  schema: c.schema,
  role: c.role ?? null,
});

/** Snowflake's error codes (server and driver) → reasons. */
const codeReasons: Record<string, ConnectorFailureReason> = {
  '390100': 'authentication_failed', // incorrect username or password
  '390101': 'authentication_failed', // user temporarily locked
  '390102': 'authentication_failed',
  '390144': 'authentication_failed', // JWT token is invalid
  '390318': 'authentication_failed',
  '394304': 'authentication_failed',
  '390189': 'permission_denied', // role not granted
  '390201': 'not_found', // database, schema or warehouse does not exist or is not authorized
  '390202': 'not_found',
  '002003': 'not_found', // object does not exist or not authorized
  '002043': 'not_found',
  '002002': 'target_exists',
  '003001': 'permission_denied', // insufficient privileges
  '003540': 'permission_denied',
  '001003': 'invalid_data', // syntax error
  '002262': 'invalid_data',
  '100038': 'invalid_data', // numeric value not recognized
  '100040': 'invalid_data', // date not recognized
  '100035': 'invalid_data',
  '100080': 'invalid_data', // wrong number of columns in the file
  '100205': 'invalid_data', // geography parse error
  '000630': 'timeout', // statement timeout
  '000604': 'timeout', // statement cancelled
  '401001': 'unreachable', // ERR_SF_NETWORK_COULD_NOT_CONNECT
  '401002': 'server_error',
  '401003': 'invalid_response',
  '401004': 'authentication_failed',
  '402001': 'unreachable',
  '402002': 'server_error',
};

interface DriverError {
  code?: unknown;
  sqlState?: unknown;
  data?: { errorCode?: unknown } | null;
  message?: unknown;
  cause?: unknown;
}

export function classifySnowflake(error: unknown, what: string, details: Record<string, unknown> = {}): ConnectorError {
  if (error instanceof ConnectorError) return error;
  // Our own refusal (a redirect hook's, the outbound policy's) under the driver's wrapping.
  const ours = connectorErrorIn(error);
  if (ours) return ours;
  const e = (error ?? {}) as DriverError;
  const raw = e.data?.errorCode ?? e.code;
  const code = raw === undefined || raw === null ? undefined : /^\d+$/.test(String(raw)) ? String(raw).padStart(6, '0') : String(raw);
  const message = typeof e.message === 'string' ? e.message : String(error);
  // A network failure carries its cause (ECONNREFUSED, a TLS error …): classify that.
  if (code === '401001' && e.cause) {
    const inner = classify(e.cause, what, details);
    if (inner.reason !== 'invalid_response') return inner;
  }
  if (code && codeReasons[code]) return new ConnectorError(codeReasons[code], `${what}: ${message}`, { ...details, error_code: code });
  if (typeof e.sqlState === 'string' && e.sqlState.startsWith('42'))
    return new ConnectorError('invalid_data', `${what}: ${message}`, { ...details, ...(code ? { error_code: code } : {}) });
  if (/certificate|TLS|SSL/i.test(message) && !code) return new ConnectorError('tls_error', `${what}: ${message}`, details);
  const network = classify(error, what, details);
  // Snowflake's own message names objects and statements, never a credential.
  if (network.reason === 'invalid_response' && code) return new ConnectorError('invalid_response', `${what}: ${message}`, { ...details, error_code: code });
  return network;
}

/**
 * A PEM key as pasted: a single-line form field drops its line breaks, which OpenSSL needs; the
 * body is wrapped again at 64 characters between its BEGIN and END lines.
 */
export function normalisePem(text: string): string {
  const m = /^\s*(-----BEGIN [A-Z ]+-----)\s*([\s\S]*?)\s*(-----END [A-Z ]+-----)\s*$/.exec(text);
  if (!m) return text;
  const [, begin, body, end] = m;
  // An encrypted PKCS#1 key carries headers (Proc-Type, DEK-Info) before its body: left as it is.
  if (/:/.test(body!)) return text;
  const base64 = body!.replace(/\s+/g, '');
  return `${begin}\n${base64.match(/.{1,64}/g)!.join('\n')}\n${end}\n`;
}

/** The driver's connection options: a password, or a key pair (the private key decrypted here, never logged). */
function connectionOptions(config: SnowflakeConfig): snowflake.ConnectionOptions {
  const base = {
    account: config.account,
    username: config.username,
    database: config.database,
    schema: config.schema,
    ...(config.warehouse ? { warehouse: config.warehouse } : {}),
    ...(config.role ? { role: config.role } : {}),
    ...(config.access_url ? { accessUrl: config.access_url.replace(/\/+$/, '') } : {}),
    application: 'geoflow',
    timeout: CONNECT_TIMEOUT_MS,
    sfRetryMaxLoginRetries: 1,
    clientSessionKeepAlive: false,
  };
  if (config.private_key) {
    let pem: string;
    try {
      pem = createPrivateKey({
        key: normalisePem(config.private_key),
        format: 'pem',
        ...(config.private_key_passphrase ? { passphrase: config.private_key_passphrase } : {}),
      })
        .export({ format: 'pem', type: 'pkcs8' })
        .toString();
    } catch {
      throw new ConnectorError(
        'authentication_failed',
        `${describeServer(config)}: private_key is not a PEM private key${config.private_key_passphrase ? ' (or the passphrase does not open it)' : ''}`,
        triedOf(config),
        false,
      );
    }
    return { ...base, authenticator: 'SNOWFLAKE_JWT', privateKey: pem };
  }
  if (!config.password)
    throw new ConnectorError('authentication_failed', `${describeServer(config)}: give a password or a private_key`, triedOf(config), false);
  return { ...base, password: config.password };
}

/** A statement's rows, fully read (small answers: catalogue reads, counts). */
export type Row = Record<string, unknown>;

export interface Session {
  query(sqlText: string, binds?: snowflake.Binds): Promise<Row[]>;
  /** Rows as arrays, streamed; numbers, dates and booleans as Snowflake prints them. */
  stream(sqlText: string, binds?: snowflake.Binds): Promise<{ columns: { name: string; type: string; scale: number }[]; rows: Readable }>;
  /** The names and types a query's result would have (run with LIMIT 0). */
  describe(sqlText: string): Promise<{ name: string; type: string; scale: number }[]>;
}

/**
 * One Snowflake session. The driver cannot cancel a call it has sent: when the caller's signal
 * fires, the calls waiting on it fail with a timeout and their late answers are dropped.
 */
class DriverSession implements Session {
  private stop: (error: Error) => void = () => undefined;
  private readonly stopped = new Promise<never>((_, reject) => {
    this.stop = reject;
  });

  constructor(
    readonly connection: snowflake.Connection,
    private readonly config: SnowflakeConfig,
  ) {
    this.stopped.catch(() => undefined);
  }

  interrupt(): void {
    this.stop(new ConnectorError('timeout', `${describeServer(this.config)}: no answer in time (deadline or cancellation)`, triedOf(this.config)));
  }

  private execute(sqlText: string, binds: snowflake.Binds | undefined, stream: boolean) {
    const done = new Promise<{ statement: snowflake.RowStatement; rows: unknown[] | undefined }>((resolve, reject) => {
      this.connection.execute({
        sqlText,
        // One statement per request, whatever the account's MULTI_STATEMENT_COUNT says: a query
        // Source's text cannot become a script of several (issue 32).
        parameters: { MULTI_STATEMENT_COUNT: 1 },
        ...(binds ? { binds } : {}),
        ...(stream
          ? { streamResult: true, rowMode: 'array' as const, fetchAsString: ['Number', 'Date', 'Boolean', 'JSON', 'Buffer'] as snowflake.DataType[] }
          : {}),
        complete: (error, s, rows) => (error ? reject(error) : resolve({ statement: s, rows })),
      });
    });
    return Promise.race([done, this.stopped]);
  }

  private static columnsOf(statement: snowflake.RowStatement) {
    return (statement.getColumns() ?? []).map((c) => ({ name: c.getName(), type: c.getType().toLowerCase(), scale: c.getScale() ?? 0 }));
  }

  async query(sqlText: string, binds?: snowflake.Binds) {
    return ((await this.execute(sqlText, binds, false)).rows ?? []) as Row[];
  }

  async stream(sqlText: string, binds?: snowflake.Binds) {
    const { statement } = await this.execute(sqlText, binds, true);
    return { columns: DriverSession.columnsOf(statement), rows: statement.streamRows() };
  }

  async describe(sqlText: string) {
    const { statement } = await this.execute(`SELECT * FROM ${sqlText} LIMIT 0`, undefined, false);
    return DriverSession.columnsOf(statement);
  }
}

/** Sessions of the driver, whose own HTTP agents the outbound policy pins (above): no endpoint to check here. */
const snowflakeSessions = sessionsOf<SnowflakeConfig, DriverSession>({
  describe: describeServer,
  tried: triedOf,
  classify: classifySnowflake,
  connectTimeoutMs: CONNECT_TIMEOUT_MS,
  open(config) {
    const connection = snowflake.createConnection(connectionOptions(config));
    return new Promise((resolve, reject) => connection.connect((error) => (error ? reject(error) : resolve(new DriverSession(connection, config)))));
  },
  interrupt: (session) => session.interrupt(),
  close: (session) =>
    new Promise<void>((resolve) => {
      if (!session.connection.isUp()) return resolve();
      session.connection.destroy(() => resolve());
      setTimeout(resolve, 5_000).unref();
    }),
});

/** Runs fn in one Snowflake session and always closes it; errors are classified; the signal ends the session's calls. */
export const withSession = snowflakeSessions.with;
/** The connection test: a probe on a new session; any failure is classified into the result. */
export const testConnection = snowflakeSessions.test;

/** `name` quoted for Snowflake whatever it holds (quoted identifiers keep their case). */
export const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;
/** A string literal. */
export const literal = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
