import { sql } from 'slonik';
import { z } from 'zod';
import { normalizeEmail } from '../../domain/accounts/user.js';
import { dummyPasswordHash, verifyPassword } from '../../platform/passwords.js';
import type { Services } from '../../application/services.js';

const userRow = z.object({ id: z.string(), email: z.string(), name: z.string(), password_hash: z.string() });

/** Returns the user when the password matches; the same work is done when the user is unknown. */
export async function checkCredentials(services: Services, email: string, password: string) {
  const user = await services.pool.maybeOne(
    sql.type(userRow)`SELECT id, email, name, password_hash FROM rm.users WHERE email = ${normalizeEmail(email)}`,
  );
  const ok = await verifyPassword(password, user?.password_hash ?? dummyPasswordHash);
  return ok && user ? { id: user.id, email: user.email, name: user.name } : null;
}

/** How one kind of key is throttled: failures allowed freely, then a delay that doubles with each failure, up to a cap. */
export interface ThrottleRule {
  free: number;
  firstDelayMs: number;
  maxDelayMs: number;
}

/**
 * The login policy (docs/operations.md, "Login throttling"; OWASP's authentication cheat sheet):
 * failures are counted per account *and address* (one client guessing one account) and per
 * address (one client spraying many accounts), never per account alone: an account-wide lock is
 * what lets anyone lock the administrator out by typing wrong passwords. Past a few free
 * failures each further failure doubles the wait of that key (1 s, 2 s, 4 s … up to 15 minutes);
 * a key is forgotten once it has been quiet for its window. While a key waits, a login through
 * it is refused before the password is checked (so guessing gains nothing), whatever the
 * password; the same account from another address, or after the wait, logs in as usual, and a
 * correct password clears that account-and-address count.
 */
export const loginPolicy = {
  pair: { free: 5, firstDelayMs: 1_000, maxDelayMs: 15 * 60_000 },
  address: { free: 20, firstDelayMs: 1_000, maxDelayMs: 15 * 60_000 },
  /** A key is forgotten after this long without a failure. */
  windowMs: 60 * 60_000,
} as const;

interface Failures {
  count: number;
  last: number;
}

/** The wait after `count` failures: none while free, then firstDelay · 2^(count − free), capped. */
export function delayAfter(rule: ThrottleRule, count: number): number {
  if (count < rule.free) return 0;
  return Math.min(rule.maxDelayMs, rule.firstDelayMs * 2 ** Math.min(30, count - rule.free));
}

export interface LoginKeys {
  /** The account and the client address together. */
  pair: string;
  /** The client address alone. */
  address: string;
}

export const loginKeys = (email: string, ip: string): LoginKeys => ({ pair: `${normalizeEmail(email)}|${ip}`, address: ip });

export class LoginThrottle {
  private readonly pairs = new Map<string, Failures>();
  private readonly addresses = new Map<string, Failures>();
  constructor(private readonly policy: { pair: ThrottleRule; address: ThrottleRule; windowMs: number } = loginPolicy) {}

  private wait(map: Map<string, Failures>, key: string, rule: ThrottleRule, now: number): number {
    const f = map.get(key);
    if (!f) return 0;
    if (now - f.last >= this.policy.windowMs) {
      map.delete(key);
      return 0;
    }
    return Math.max(0, f.last + delayAfter(rule, f.count) - now);
  }

  /** How long this account-and-address must still wait (0: the password may be checked). */
  retryAfterMs(keys: LoginKeys, now: number): number {
    return Math.max(this.wait(this.pairs, keys.pair, this.policy.pair, now), this.wait(this.addresses, keys.address, this.policy.address, now));
  }

  /** Records a wrong password; returns the failures now counted for the pair and the wait it earned. */
  fail(keys: LoginKeys, now: number): { failures: number; retryAfterMs: number } {
    for (const map of [this.pairs, this.addresses]) {
      const key = map === this.pairs ? keys.pair : keys.address;
      const f = map.get(key);
      map.set(key, { count: f && now - f.last < this.policy.windowMs ? f.count + 1 : 1, last: now });
      // Guessing many accounts or addresses must not grow the maps without bound.
      if (map.size > 10_000) for (const [k, v] of map) if (now - v.last >= this.policy.windowMs) map.delete(k);
    }
    return { failures: this.pairs.get(keys.pair)!.count, retryAfterMs: this.retryAfterMs(keys, now) };
  }

  /** A correct password: that account-and-address starts afresh (the address count stays: it may be spraying). */
  succeed(keys: LoginKeys): number {
    const had = this.pairs.get(keys.pair)?.count ?? 0;
    this.pairs.delete(keys.pair);
    return had;
  }
}
