import pg from 'pg';
import type { Logger } from 'pino';
import { ACCOUNTS_CHANNEL, type AccountsChange } from '../../projections/accounts.js';
import type { Principal } from './principal.js';

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

  constructor(
    private readonly databaseUrl: string,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.databaseUrl, application_name: 'geoflow-principal-cache' });
    this.listener = client;
    client.on('notification', (message) => this.onChange(message.payload));
    client.on('error', (error) => {
      this.log.warn({ err: error }, 'principal cache: LISTEN connection lost; caching paused until it is back');
      this.forgetAll();
      this.listening = false;
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

  /** The cached entry, after any notification already received has been applied. */
  async get(sha256: string): Promise<CachedToken | undefined> {
    if (!this.listening || !this.entries.has(sha256)) return undefined;
    // Let this turn of the event loop read the LISTEN socket first: a revocation committed before
    // this request arrived is applied before the answer is decided.
    await new Promise((resolve) => setImmediate(resolve));
    return this.entries.get(sha256);
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
