import { DomainError } from '../domain/errors.js';
import { emailClaimStream, normalizeEmail, userDecider, userStream } from '../domain/accounts/user.js';
import { WrongExpectedRevisionError } from '../eventstore/port.js';
import { hashPassword } from '../platform/passwords.js';
import { execute } from './commands.js';
import type { Services } from './services.js';

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
