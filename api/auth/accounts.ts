import { sql } from 'slonik';
import { z } from 'zod';
import { DomainError } from '../../domain/errors.js';
import { emailClaimStream, normalizeEmail, userDecider, userStream } from '../../domain/accounts/user.js';
import { WrongExpectedRevisionError } from '../../eventstore/port.js';
import { dummyPasswordHash, hashPassword, verifyPassword } from '../../platform/passwords.js';
import { execute } from '../commands.js';
import type { Services } from '../services.js';

export const MIN_PASSWORD_LENGTH = 10;

/**
 * Registers a user. The e-mail is claimed first by creating its own stream with no_stream, so two
 * concurrent registrations of one address cannot both succeed.
 */
export async function registerUser(services: Services, input: { email: string; name?: string; password: string }) {
  const email = normalizeEmail(input.email);
  if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new DomainError('validation_error', 'The e-mail address is not valid');
  if (input.password.length < MIN_PASSWORD_LENGTH) {
    throw new DomainError('validation_error', `The password must have at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  const userId = services.newId('user');
  const at = services.clock();
  try {
    await services.store.appendToStream(emailClaimStream(email), [{ type: 'EmailClaimed', data: { user_id: userId, at: at.toISOString() } }], 'no_stream');
  } catch (error) {
    if (error instanceof WrongExpectedRevisionError) throw new DomainError('conflict', `A user with the e-mail ${email} already exists`);
    throw error;
  }
  await execute(services, userStream(userId), userDecider, {
    type: 'RegisterUser',
    userId,
    email,
    name: input.name?.trim() || email.split('@')[0]!,
    passwordHash: await hashPassword(input.password),
    at,
  });
  return { id: userId, email };
}

/** Creates the first user from SVC_ADMIN_EMAIL / SVC_ADMIN_PASSWORD once; later starts leave it alone. */
export async function ensureAdmin(services: Services): Promise<void> {
  const { adminEmail, adminPassword } = services.config;
  if (!adminEmail || !adminPassword) return;
  const history = await services.store.readStream(emailClaimStream(adminEmail));
  if (history.length > 0) return;
  await registerUser(services, { email: adminEmail, name: 'Administrator', password: adminPassword }).catch((error) => {
    if (error instanceof DomainError && error.code === 'conflict') return; // another process won the race
    throw error;
  });
  services.log.info({ email: normalizeEmail(adminEmail) }, 'created the first user from SVC_ADMIN_EMAIL');
}

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
