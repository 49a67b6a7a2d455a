/*
 * Secrets of saved connections and notification channels as their deciders see them: sealed text
 * (AES-256-GCM, platform/cipher.ts) by field, never a plain value.
 */

/** Sealed secret values by field. */
export type SealedSecrets = Record<string, string>;
/** In a command: a string sets, null clears, absent keeps. */
export type SecretChanges = Record<string, string | null>;

/** What a create or update of a secret-holding resource carries besides its id and type. */
export interface SecretWrite {
  actorId: string;
  name: string;
  configuration: Record<string, unknown>;
  /** Secret fields the type knows; stored secrets of other fields (after a type change) are dropped. */
  secretFields: readonly string[];
  secrets: SecretChanges;
  at: Date;
}

/** What the state of a live secret-holding resource keeps. */
export interface SecretHolder {
  status: 'active' | 'deleted';
  ownerId: string;
  name: string;
  type: string;
  configuration: Record<string, unknown>;
  secrets: SealedSecrets;
}

/** What a created or updated event of a secret-holding resource sets in its state. */
export function heldFrom(data: { name: string; type: string; configuration: Record<string, unknown>; secrets: SealedSecrets }) {
  return { name: data.name, type: data.type, configuration: data.configuration, secrets: data.secrets };
}

/** The stored secrets after a write: only fields the type knows; a value sets, null clears, absent keeps. */
export function applySecretChanges(stored: SealedSecrets, changes: SecretChanges, fields: readonly string[]): SealedSecrets {
  const next: SealedSecrets = {};
  for (const field of fields) {
    const change = changes[field];
    if (typeof change === 'string') next[field] = change;
    else if (change === undefined && stored[field] !== undefined) next[field] = stored[field]!;
  }
  return next;
}
