import { DomainError, notFound } from '../errors.js';
import { unreachable, type Decider } from '../decider.js';
import { applySecretChanges as applyChanges, heldFrom, type SealedSecrets, type SecretHolder, type SecretWrite } from '../secrets.js';

/*
 * A notification channel: where a user wants to be told about their Jobs' Runs (a webhook, an
 * email address list over SMTP). Like a saved connection, its secrets (a signing secret, an SMTP
 * password) arrive sealed (AES-256-GCM, application/notification-channels.ts): the decider only
 * keeps, replaces or clears ciphertext, and `configuration` holds the public fields only.
 */

export const channelStream = (id: string) => `channel-${id}`;

interface ChannelData {
  channel_id: string;
  name: string;
  /** The channel type (webhook, email). */
  type: string;
  configuration: Record<string, unknown>;
  /** Where it sends, without secrets (a webhook's origin, an SMTP server and recipients): worked out from the plain values when written. */
  endpoint: string;
  /** Names of the secret fields that hold a value (what has_<field> shows). */
  secret_fields: string[];
  /** Sealed values; only the event store holds them, never a read model. */
  secrets: SealedSecrets;
  at: string;
}

export type ChannelEvent =
  | { type: 'NotificationChannelCreated'; data: ChannelData & { owner_id: string } }
  | { type: 'NotificationChannelUpdated'; data: ChannelData }
  | { type: 'NotificationChannelDeleted'; data: { channel_id: string; at: string } };

interface Write extends SecretWrite {
  channelId: string;
  channelType: string;
  endpoint: string;
}

export type ChannelCommand =
  | ({ type: 'CreateChannel' } & Write)
  | ({ type: 'UpdateChannel' } & Write)
  | { type: 'DeleteChannel'; channelId: string; actorId: string; at: Date };

export type ChannelState = { status: 'absent' } | (SecretHolder & { endpoint: string });

export const channelNotFound = (id: string) => notFound('notification_channel_not_found', 'Notification channel', id);

/** Another user's channel is answered exactly like a missing one. */
export function ownedChannel(state: ChannelState, actorId: string, id: string) {
  if (state.status !== 'active' || state.ownerId !== actorId) throw channelNotFound(id);
  return state;
}

function written(command: Write, secrets: SealedSecrets): ChannelData {
  return {
    channel_id: command.channelId,
    name: command.name,
    type: command.channelType,
    configuration: command.configuration,
    endpoint: command.endpoint,
    secret_fields: Object.keys(secrets),
    secrets,
    at: command.at.toISOString(),
  };
}

export const channelDecider: Decider<ChannelCommand, ChannelState, ChannelEvent> = {
  initialState: () => ({ status: 'absent' }),

  decide(command, state) {
    switch (command.type) {
      case 'CreateChannel': {
        if (state.status !== 'absent') throw new DomainError('conflict', `Notification channel ${command.channelId} already exists`);
        const secrets = applyChanges({}, command.secrets, command.secretFields);
        return [{ type: 'NotificationChannelCreated', data: { ...written(command, secrets), owner_id: command.actorId } }];
      }
      case 'UpdateChannel': {
        const current = ownedChannel(state, command.actorId, command.channelId);
        const secrets = applyChanges(current.type === command.channelType ? current.secrets : {}, command.secrets, command.secretFields);
        return [{ type: 'NotificationChannelUpdated', data: written(command, secrets) }];
      }
      case 'DeleteChannel':
        ownedChannel(state, command.actorId, command.channelId);
        return [{ type: 'NotificationChannelDeleted', data: { channel_id: command.channelId, at: command.at.toISOString() } }];
      default:
        return unreachable(command);
    }
  },

  evolve(state, event) {
    switch (event.type) {
      case 'NotificationChannelCreated':
        return { status: 'active', ownerId: event.data.owner_id, ...heldFrom(event.data), endpoint: event.data.endpoint };
      case 'NotificationChannelUpdated':
        if (state.status === 'absent') return state;
        return { ...state, ...heldFrom(event.data), endpoint: event.data.endpoint };
      case 'NotificationChannelDeleted':
        if (state.status === 'absent') return state;
        return { ...state, status: 'deleted' };
      default:
        return unreachable(event);
    }
  },
};
