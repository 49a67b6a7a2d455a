import type { z } from 'zod';
import type { NotificationFacts } from './message.js';

/*
 * The contract of a notification channel type (notifiers/<type>.ts), listed once in
 * notifiers/registry.ts: its configuration (secrets included, write-only), what it shows of where
 * it sends, and how it sends. The API, the worker's activity, the docs and the browser read it
 * from there, as they read a connector's.
 */

export interface SendContext {
  /** Aborted when the activity is cancelled or times out. */
  signal: AbortSignal;
}

export interface NotifierDefinition<C extends object = Record<string, unknown>> {
  type: string;
  label: string;
  description: string;
  /** Strict; secret fields optional there (kept when left out of an update). */
  configuration: z.ZodObject;
  secrets: readonly string[];
  /** Secrets a channel must hold (a webhook's URL): required on create, and an update cannot clear them. */
  requiredSecrets: readonly string[];
  example: Record<string, unknown>;
  /** More for docs/notifications.md, in Markdown. */
  notes: string;
  /** Where it sends, without secrets (a webhook's origin, an SMTP server and its recipients): shown as the channel's `endpoint`. */
  endpoint(config: C): string;
  /**
   * Sends one notification, or throws a classified ConnectorError (retryable or not): the
   * activity's retries handle the transient ones. Messages name the endpoint, never a secret.
   */
  send(config: C, facts: NotificationFacts, ctx: SendContext): Promise<void>;
}

export function defineNotifier<S extends z.ZodObject>(definition: NotifierDefinition<z.output<S>> & { configuration: S }) {
  return definition;
}
