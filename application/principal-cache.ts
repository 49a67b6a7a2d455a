import pg from 'pg';
import type { Logger } from 'pino';
import type { Principal } from '../domain/accounts/principal.js';
import { destroySocket } from '../platform/db.js';
import { ACCOUNTS_CHANNEL, type AccountsChange } from '../projections/accounts.js';

/** What a token resolved to, as the token path needs it on the next request. */
export interface CachedToken {
  principal: Principal;
  tokenId: string;
  ownerId: string;
  /** Epoch ms; checked on every hit, so expiry takes effect at once without any event. */
  expiresAt: number | null;
  lastUsedAt: number | null;
}

const MAX_ENTRIES = 10_000;
/** A barrier unanswered for this long means a connection that stopped answering: see sendBarrier. */
export const BARRIER_TIMEOUT_MS = 2_000;

/**
 * Personal access tokens resolved to their principal, by SHA-256, so an authenticated request
 * does not query the token and its user every time (the most frequent work of the API).
 *
 * Every API process keeps its own cache and a dedicated connection LISTENing on the accounts
 * projection's channel: the projection NOTIFYs in the transaction that marks a token revoked (or
 * changes a user), so on commit every process on the database drops the entry. While that
 * connection is down nothing is cached (a notification could be missed), and what was cached is
 * dropped when it comes back.
 */
export class PrincipalCache {
  private readonly entries = new Map<string, CachedToken>();
  private listener: pg.Client | undefined;
  private listening = false;
  private closed = false;
  /** Bumped by every notification: a lookup that started before one must not fill the cache. */
  private generation = 0;
  /** Hits waiting for the next barrier (see barrier()), and whether one is on the wire. */
  private waiting: { resolve: () => void; reject: (error: unknown) => void }[] = [];
  private barrierInFlight = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'geoflow-principal-cache' });
    this.listener = client;
    client.on('notification', (message) => this.onChange(message.payload));
    let lost = false;
    client.on('error', (error) => {
      if (lost) return; // once per connection: a late second error must not start a second listener
      lost = true;
      this.log.warn({ err: error }, 'principal cache: LISTEN connection lost; caching paused until it is back');
      this.forgetAll();
      this.listening = false;
      destroySocket(client);
      client.end().catch(() => undefined);
      if (!this.closed) setTimeout(() => void this.start().catch(() => undefined), 1000).unref();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${ACCOUNTS_CHANNEL}`);
      this.forgetAll();
      this.listening = true;
    } catch (error) {
      client.emit('error', error as Error);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.listening = false;
    this.forgetAll();
    await this.listener?.end().catch(() => undefined);
  }

  /** The cached entry, after every notification committed before this call has been applied. */
  async get(sha256: string): Promise<CachedToken | undefined> {
    if (!this.listening || !this.entries.has(sha256)) return undefined;
    try {
      await this.barrier();
    } catch {
      return undefined; // the LISTEN connection failed: its error handler empties the cache
    }
    return this.entries.get(sha256);
  }

  /**
   * A round trip on the LISTEN connection, sent after this call. A revocation's NOTIFY is in the
   * queue before its transaction commits, and PostgreSQL hands a listening backend's pending
   * notifications to its client as it reads the next query, before answering it; pg emits
   * 'notification' as it parses the message, before the query resolves. So once the barrier
   * resolves, every change committed before it was sent has been applied. Waiting one turn of
   * the event loop instead (the first version) only applied what had already reached the socket:
   * on a busy machine the notification could arrive after the next request was answered
   * (CI saw a revoked token accepted once by the other instance). Calls that arrive while a
   * barrier is on the wire share the next one, so there is at most one in flight.
   */
  private barrier(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (!this.barrierInFlight) this.sendBarrier();
    });
  }

  private sendBarrier(): void {
    const batch = this.waiting;
    this.waiting = [];
    this.barrierInFlight = batch.length > 0;
    if (!this.barrierInFlight) return;
    const client = this.listener;
    const sent = client ? client.query('SELECT 1') : Promise.reject(new Error('not listening'));
    // A connection that stops answering (a network partition, a frozen server) must not hold every
    // authenticated request: past the timeout the hits waiting become lookups, and the connection
    // is dropped as lost (nothing is cached until a new one listens).
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const error = new Error(`the LISTEN connection did not answer within ${BARRIER_TIMEOUT_MS} ms`);
        reject(error);
        client?.emit('error', error);
      }, BARRIER_TIMEOUT_MS).unref();
    });
    Promise.race([sent, timedOut])
      .finally(() => clearTimeout(timer))
      .then(
        () => {
          for (const w of batch) w.resolve();
          this.sendBarrier();
        },
        (error: unknown) => {
          for (const w of batch) w.reject(error);
          this.sendBarrier();
        },
      );
  }

  /** Call before the lookup; pass the result to set() so a lookup overtaken by a change is not cached. */
  mark(): number {
    return this.generation;
  }

  set(sha256: string, entry: CachedToken, mark: number): void {
    if (!this.listening || mark !== this.generation) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(sha256, entry);
  }

  private onChange(payload: string | undefined): void {
    this.generation++;
    let change: AccountsChange;
    try {
      change = JSON.parse(payload ?? '') as AccountsChange;
    } catch {
      this.forgetAll();
      return;
    }
    for (const [key, entry] of this.entries) {
      if (('token_id' in change && entry.tokenId === change.token_id) || ('user_id' in change && entry.ownerId === change.user_id)) {
        this.entries.delete(key);
      }
    }
  }

  private forgetAll(): void {
    this.generation++;
    this.entries.clear();
  }
}
