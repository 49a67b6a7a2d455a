import { createHash } from 'node:crypto';
import { DomainError } from '../errors.js';
import { unreachable, type Decider } from '../decider.js';

export const userStream = (id: string) => `user-${id}`;
/** A stream per e-mail address whose first event claims it: uniqueness through no_stream appends. */
export const emailClaimStream = (email: string) => `useremail-${createHash('sha256').update(normalizeEmail(email)).digest('hex')}`;
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export type UserEvent =
  | { type: 'UserRegistered'; data: { user_id: string; email: string; name: string; password_hash: string; at: string } }
  | { type: 'UserPasswordChanged'; data: { user_id: string; password_hash: string; at: string } };

export type UserCommand =
  | { type: 'RegisterUser'; userId: string; email: string; name: string; passwordHash: string; at: Date }
  | { type: 'ChangePassword'; userId: string; passwordHash: string; at: Date };

export type UserState = { status: 'absent' } | { status: 'active'; email: string };

export const userDecider: Decider<UserCommand, UserState, UserEvent> = {
  initialState: () => ({ status: 'absent' }),
  decide(command, state) {
    switch (command.type) {
      case 'RegisterUser':
        if (state.status !== 'absent') throw new DomainError('conflict', 'user already exists');
        return [
          {
            type: 'UserRegistered',
            data: {
              user_id: command.userId,
              email: normalizeEmail(command.email),
              name: command.name,
              password_hash: command.passwordHash,
              at: command.at.toISOString(),
            },
          },
        ];
      case 'ChangePassword':
        if (state.status === 'absent') throw new DomainError('not_found', 'user not found');
        return [{ type: 'UserPasswordChanged', data: { user_id: command.userId, password_hash: command.passwordHash, at: command.at.toISOString() } }];
      default:
        return unreachable(command);
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'UserRegistered':
        return { status: 'active', email: event.data.email };
      case 'UserPasswordChanged':
        return state;
      default:
        return unreachable(event);
    }
  },
};
