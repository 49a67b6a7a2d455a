import type { Logger } from 'pino';
import { DomainError } from '../domain/errors.js';
import { emailClaimStream, normalizeEmail, userDecider, userStream } from '../domain/accounts/user.js';
import { WrongExpectedRevisionError } from '../eventstore/port.js';
import { dummyPasswordHash, hashPassword, verifyPassword } from '../platform/passwords.js';
import { userByEmail } from '../projections/accounts.js';
import { execute } from './commands.js';
import { loginKeys, type LoginThrottle } from './login-throttle.js';
import type { Services } from './services.js';
import { createSession, deleteSession } from './sessions.js';

/*
 * Users: registered (the first one from the settings), logging in and out of a browser session.
 * How a request is authenticated (a session or a personal access token) is application/authentication.ts.
 */

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

/** Returns the user when the password matches; the same work is done when the user is unknown. */
export async function checkCredentials(services: Pick<Services, 'pool'>, email: string, password: string) {
  const user = await userByEmail(services.pool, normalizeEmail(email));
  const ok = await verifyPassword(password, user?.password_hash ?? dummyPasswordHash);
  return ok && user ? { id: user.id, email: user.email, name: user.name } : null;
}

/**
 * A browser login: refused while the throttle makes this account-and-address wait (unauthorized,
 * with retry_after_seconds), else the password is checked and a session started. Failures and
 * throttled attempts are logged with the client's address, never the password.
 */
export async function logIn(
  services: Pick<Services, 'pool' | 'clock'>,
  throttle: LoginThrottle,
  request: { email: string; password: string; ip: string },
  log: Pick<Logger, 'info' | 'warn'>,
) {
  const now = services.clock().getTime();
  const keys = loginKeys(request.email, request.ip);
  const wait = throttle.attempt(keys, now);
  if (wait > 0) {
    const seconds = Math.ceil(wait / 1000);
    log.warn(
      { login: 'throttled', address: request.ip, retry_after_seconds: seconds },
      'login refused: too many failed logins for this account from this address',
    );
    throw new DomainError('unauthorized', `Too many failed logins for this account from this address; try again in ${seconds} seconds`, {
      retry_after_seconds: seconds,
    });
  }
  const found = await checkCredentials(services, request.email, request.password);
  if (!found) {
    const { failures, retryAfterMs } = throttle.failed(keys, services.clock().getTime());
    log.warn({ login: 'failed', address: request.ip, failures, retry_after_seconds: Math.ceil(retryAfterMs / 1000) }, 'failed login');
    throw new DomainError('unauthorized', 'The e-mail or password is wrong');
  }
  const earlier = throttle.succeed(keys);
  if (earlier > 0) log.info({ login: 'succeeded', user_id: found.id, address: request.ip, failures_before: earlier }, 'login after failed attempts');
  return { user: found, session: await createSession(services.pool, found.id, services.clock()) };
}

/** Ends a browser session (a value that names none is no error). */
export const logOut = (services: Pick<Services, 'pool'>, session: string) => deleteSession(services.pool, session);
