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

/**
 * Failed logins are counted per address and per client IP in a sliding window; past the limit
 * the login is refused without checking the password, and the answer says when to retry.
 */
export class LoginThrottle {
  private readonly failures = new Map<string, number[]>();
  constructor(
    private readonly limitPerKey = 5,
    private readonly windowMs = 15 * 60_000,
  ) {}

  retryAfterMs(keys: string[], now: number): number {
    let wait = 0;
    for (const key of keys) {
      const recent = (this.failures.get(key) ?? []).filter((t) => now - t < this.windowMs);
      this.failures.set(key, recent);
      const limit = key.startsWith('ip:') ? this.limitPerKey * 4 : this.limitPerKey;
      if (recent.length >= limit) wait = Math.max(wait, recent[recent.length - limit]! + this.windowMs - now);
    }
    return wait;
  }

  fail(keys: string[], now: number) {
    for (const key of keys) this.failures.set(key, [...(this.failures.get(key) ?? []), now]);
    // Guessing many addresses must not grow this map without bound: forget stale keys now and then.
    if (this.failures.size > 10_000) {
      for (const [key, times] of this.failures) if (now - times[times.length - 1]! >= this.windowMs) this.failures.delete(key);
    }
  }

  succeed(keys: string[]) {
    for (const key of keys) if (!key.startsWith('ip:')) this.failures.delete(key);
  }
}
