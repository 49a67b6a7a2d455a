import { DomainError, notFound } from '../errors.js';
import { unreachable, type Decider } from '../decider.js';
import { applySecretChanges as applyChanges, heldFrom, type SealedSecrets, type SecretChanges, type SecretHolder, type SecretWrite } from '../secrets.js';
import { kindNoun, notFoundCode, type ConnectionKind } from './kinds.js';

/*
 * Sources and Destinations: saved connections, one aggregate shape for both kinds (a kind is a
 * prefix of the stream and of the event names: SourceCreated, DestinationUpdated …).
 *
 * Secrets arrive sealed (AES-256-GCM, application/connection-secrets.ts): the decider only keeps,
 * replaces or clears ciphertext and never sees a plain value. `configuration` holds the public
 * fields only.
 */

export const connectionStream = (kind: ConnectionKind, id: string) => `${kind}-${id}`;
const eventName = <S extends 'Created' | 'Updated' | 'Deleted'>(kind: ConnectionKind, suffix: S) =>
  `${kind === 'source' ? 'Source' : 'Destination'}${suffix}` as `${'Source' | 'Destination'}${S}`;

export type { SealedSecrets, SecretChanges };

interface ConnectionData {
  id: string;
  kind: ConnectionKind;
  name: string;
  type: string;
  configuration: Record<string, unknown>;
  /** Names of the secret fields that hold a value (what has_<field> shows). */
  secret_fields: string[];
  /** Sealed values; only the event store holds them, never a read model. */
  secrets: SealedSecrets;
  at: string;
}

export type ConnectionEvent =
  | { type: 'SourceCreated' | 'DestinationCreated'; data: ConnectionData & { owner_id: string } }
  | { type: 'SourceUpdated' | 'DestinationUpdated'; data: ConnectionData }
  | { type: 'SourceDeleted' | 'DestinationDeleted'; data: { id: string; kind: ConnectionKind; at: string } };

interface Write extends SecretWrite {
  connectionId: string;
  /** The connection type (postgis, s3 …); `type` is the command's. */
  connectionType: string;
}

export type ConnectionCommand =
  | ({ type: 'CreateConnection' } & Write)
  | ({ type: 'UpdateConnection' } & Write)
  | { type: 'DeleteConnection'; connectionId: string; actorId: string; at: Date };

export type ConnectionState = { status: 'absent' } | SecretHolder;

/** Another user's connection is answered exactly like a missing one. */
export function ownedConnection(kind: ConnectionKind, state: ConnectionState, actorId: string, id: string) {
  if (state.status !== 'active' || state.ownerId !== actorId) throw notFound(notFoundCode(kind), kindNoun(kind), id);
  return state;
}

function written(kind: ConnectionKind, command: Write, secrets: SealedSecrets): ConnectionData {
  return {
    id: command.connectionId,
    kind,
    name: command.name,
    type: command.connectionType,
    configuration: command.configuration,
    secret_fields: Object.keys(secrets),
    secrets,
    at: command.at.toISOString(),
  };
}

export function connectionDecider(kind: ConnectionKind): Decider<ConnectionCommand, ConnectionState, ConnectionEvent> {
  return {
    initialState: () => ({ status: 'absent' }),

    decide(command, state) {
      switch (command.type) {
        case 'CreateConnection': {
          if (state.status !== 'absent') throw new DomainError('conflict', `${kindNoun(kind)} ${command.connectionId} already exists`);
          const secrets = applyChanges({}, command.secrets, command.secretFields);
          return [{ type: eventName(kind, 'Created'), data: { ...written(kind, command, secrets), owner_id: command.actorId } }];
        }
        case 'UpdateConnection': {
          const current = ownedConnection(kind, state, command.actorId, command.connectionId);
          const secrets = applyChanges(current.type === command.connectionType ? current.secrets : {}, command.secrets, command.secretFields);
          return [{ type: eventName(kind, 'Updated'), data: written(kind, command, secrets) }];
        }
        case 'DeleteConnection':
          ownedConnection(kind, state, command.actorId, command.connectionId);
          return [{ type: eventName(kind, 'Deleted'), data: { id: command.connectionId, kind, at: command.at.toISOString() } }];
        default:
          return unreachable(command);
      }
    },

    evolve(state, event) {
      switch (event.type) {
        case 'SourceCreated':
        case 'DestinationCreated':
          return { status: 'active', ownerId: event.data.owner_id, ...heldFrom(event.data) };
        case 'SourceUpdated':
        case 'DestinationUpdated':
          if (state.status === 'absent') return state;
          return { ...state, ...heldFrom(event.data) };
        case 'SourceDeleted':
        case 'DestinationDeleted':
          if (state.status === 'absent') return state;
          return { ...state, status: 'deleted' };
        default:
          return unreachable(event);
      }
    },
  };
}
