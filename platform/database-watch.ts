import pg from 'pg';
import { destroySocket } from './db.js';

/*
 * Whether the service database answers, as seen from this process. A network partition drops
 * packets without a word: a query sent on a pooled connection then waits for TCP to give up
 * (a quarter of an hour), and a new connection waits for its timeout. The API answers requests
 * from this watch instead (503 with Retry-After while the database is unreachable), so clients
 * and load balancers learn it in seconds and try another replica or later.
 *
 * One connection of its own asks `SELECT 1` every second, each try bounded by a short timeout;
 * two failed tries in a row make the database unreachable, one answer makes it reachable again.
 */

export interface DatabaseWatch {
  /** The verdict of the last tries (reachable until two tries in a row have failed). */
  reachable(): boolean;
  /** Tries now (at most `timeoutMs`) and answers whether the database answered. */
  check(): Promise<boolean>;
  /** Whether a try failed within the last `ms` (a request that lost its connection then lost it to that). */
  failedWithin(ms: number): boolean;
  close(): Promise<void>;
}

export interface DatabaseWatchOptions {
  everyMs?: number;
  timeoutMs?: number;
  /** Called when the verdict changes. */
  onChange?: (reachable: boolean, error?: Error) => void;
}

export function watchDatabase(url: string, options: DatabaseWatchOptions = {}): DatabaseWatch {
  const { everyMs = 1_000, timeoutMs = 3_000, onChange } = options;
  let client: pg.Client | null = null;
  let reachable = true;
  let failures = 0;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<boolean> | null = null;
  let lastFailure = 0;

  const drop = () => {
    const c = client;
    client = null;
    if (c) {
      destroySocket(c);
      c.end().catch(() => undefined);
    }
  };
  const verdict = (ok: boolean, error?: Error) => {
    failures = ok ? 0 : failures + 1;
    if (!ok) lastFailure = Date.now();
    const now = ok ? true : failures >= 2 ? false : reachable;
    if (now !== reachable) {
      reachable = now;
      onChange?.(now, error);
    }
  };
  const tryOnce = async (): Promise<boolean> => {
    try {
      if (!client) {
        const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs, application_name: 'geoflow-watch' });
        c.on('error', () => undefined); // a lost connection surfaces on the next try
        client = c;
        await c.connect();
      }
      await client.query('SELECT 1');
      verdict(true);
      return true;
    } catch (error) {
      drop();
      verdict(false, error as Error);
      return false;
    }
  };
  const check = () => {
    inFlight ??= tryOnce().finally(() => {
      inFlight = null;
    });
    return inFlight;
  };
  const loop = () => {
    if (closed) return;
    timer = setTimeout(() => void check().finally(loop), everyMs);
    timer.unref();
  };
  loop();

  return {
    reachable: () => reachable,
    failedWithin: (ms) => lastFailure > 0 && Date.now() - lastFailure <= ms,
    async check() {
      return check();
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      await inFlight?.catch(() => undefined);
      drop();
    },
  };
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'EAI_AGAIN',
  // PostgreSQL: connection exceptions (class 08), shutting down or starting up (57P01–57P03).
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
  '57P01',
  '57P02',
  '57P03',
]);
const CONNECTION_MESSAGES =
  /connection terminated|timeout exceeded when trying to connect|timeout expired|query read timeout|connection error|not queryable|ECONNREFUSED|ETIMEDOUT/i;
const CONNECTION_ERRORS = new Set(['ConnectionError', 'BackendTerminatedError', 'BackendTerminatedUnexpectedlyError']);

/**
 * Whether an error looks like a lost or refused database connection rather than a refused
 * statement (it may also come from another server: the API asks the watch before it says 503).
 */
export function looksLikeConnectionFailure(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current && depth < 8; depth++) {
    const e = current as { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
    if (typeof e.code === 'string' && CONNECTION_CODES.has(e.code)) return true;
    // slonik's errors are told apart by their class (their `name` is Error's).
    if ([e.name, (current as object).constructor?.name].some((n) => typeof n === 'string' && CONNECTION_ERRORS.has(n))) return true;
    if (typeof e.message === 'string' && CONNECTION_MESSAGES.test(e.message)) return true;
    current = e.cause;
  }
  return false;
}
