import { isIPv6 } from 'node:net';
import { normalizeEmail } from '../domain/accounts/user.js';

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

/**
 * The client as the throttle counts it: an IPv4 address (also when written IPv4-mapped,
 * `::ffff:192.0.2.1`), or an IPv6 address's /64. One IPv6 subscriber is given a whole /64 (or
 * more) and can pick a fresh address for every request, so counting single IPv6 addresses would
 * throttle nobody.
 */
export function clientKey(ip: string): string {
  const bare = ip.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return mapped[1]!;
  if (!isIPv6(bare)) return bare;
  const [head, tail] = bare.split('::') as [string, string | undefined];
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  // An embedded IPv4 tail (`64:ff9b::192.0.2.1`) lies in the last 32 bits, outside the /64.
  const groups = tail === undefined ? h : [...h, ...Array<string>(Math.max(0, 8 - h.length - t.length)).fill('0'), ...t];
  return `${groups
    .slice(0, 4)
    .map((g) => parseInt(g, 16).toString(16))
    .join(':')}::/64`;
}

export const loginKeys = (email: string, ip: string): LoginKeys => {
  const client = clientKey(ip);
  return { pair: `${normalizeEmail(email)}|${client}`, address: client };
};

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

  /**
   * Before a password is checked: the wait still due (> 0: refuse the login), or 0, and then the
   * attempt already counts as a failure. Counted before the (slow) password check, not after it,
   * so that concurrent guesses see each other: counted afterwards, a burst of 15 parallel guesses
   * all passed the check while none had been counted yet.
   */
  attempt(keys: LoginKeys, now: number): number {
    const wait = this.retryAfterMs(keys, now);
    if (wait === 0) this.fail(keys, now);
    return wait;
  }

  /** Counts a failure; returns the failures now counted for the pair and the wait it earned. */
  fail(keys: LoginKeys, now: number): { failures: number; retryAfterMs: number } {
    for (const map of [this.pairs, this.addresses]) {
      const key = map === this.pairs ? keys.pair : keys.address;
      const f = map.get(key);
      map.set(key, { count: f && now - f.last < this.policy.windowMs ? f.count + 1 : 1, last: now });
      // Guessing many accounts or addresses must not grow the maps without bound.
      if (map.size > 10_000) for (const [k, v] of map) if (now - v.last >= this.policy.windowMs) map.delete(k);
    }
    return this.failed(keys, now);
  }

  /** The password of an attempt() was wrong: its wait runs from now (the end of the check). */
  failed(keys: LoginKeys, now: number): { failures: number; retryAfterMs: number } {
    for (const [map, key] of [
      [this.pairs, keys.pair],
      [this.addresses, keys.address],
    ] as const) {
      const f = map.get(key);
      if (f) f.last = Math.max(f.last, now);
    }
    return { failures: this.pairs.get(keys.pair)?.count ?? 0, retryAfterMs: this.retryAfterMs(keys, now) };
  }

  /**
   * The password of an attempt() was right: that account-and-address starts afresh, and the
   * address count gives back the attempt (the rest stays: the address may be spraying). Returns
   * the failures that came before it.
   */
  succeed(keys: LoginKeys): number {
    const had = Math.max(0, (this.pairs.get(keys.pair)?.count ?? 0) - 1);
    this.pairs.delete(keys.pair);
    const address = this.addresses.get(keys.address);
    if (address && --address.count <= 0) this.addresses.delete(keys.address);
    return had;
  }
}
