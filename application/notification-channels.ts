import { DomainError } from '../domain/errors.js';
import { channelDecider, channelStream, ownedChannel, type ChannelState } from '../domain/notifications/channel.js';
import { ConnectorError } from '../domain/transfers.js';
import type { NotificationFacts } from '../notifiers/message.js';
import { notifierByType, notifierTypes } from '../notifiers/registry.js';
import type { NotifierDefinition } from '../notifiers/types.js';
import { jobsNotifying } from '../projections/jobs.js';
import { listChannels as readChannels, loadChannel, type ChannelRow } from '../projections/notification-channels.js';
import type { PageRequest } from '../projections/pagination.js';
import { outboundRefusal } from '../temporal/failures.js';
import { execute, load } from './commands.js';
import type { Services } from './services.js';

/*
 * Notification channels (/notification-channels): a user's webhooks and email lists that Jobs
 * subscribe to (application/jobs.ts checks the subscriptions, the Run's notifications are sent
 * by activities/notifications.ts). Secrets are sealed with the service key before they reach a
 * command, like a connection's, and decrypted only by whoever sends (the worker, or the API for
 * a test).
 */

/** A channel body after its schema (api/notification-channels/routes.ts); a type alias, so a route's parsed body converts to it. */
export type ChannelBody = {
  name: string;
  type: string;
  configuration: Record<string, unknown>;
};

export interface OpenedChannel {
  id: string;
  name: string;
  type: string;
  notifier: NotifierDefinition;
  /** Public fields and decrypted secrets, parsed with the type's schema. */
  config: Record<string, unknown>;
}

const issue = (path: (string | number)[], message: string) => ({ path: ['body', ...path].join('.'), message });
const invalid = (issues: { path: string; message: string }[]) =>
  new DomainError('validation_error', `Invalid request body: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });

function notifierOrRefuse(type: string): NotifierDefinition {
  const notifier = notifierByType(type);
  if (!notifier) {
    throw new DomainError('validation_error', `Invalid request body: body.type: unknown type "${type}"; a channel is one of ${notifierTypes.join(', ')}`, {
      issues: [issue(['type'], `unknown type "${type}"`)],
      allowed: notifierTypes,
    });
  }
  return notifier;
}

const context = (channelId: string, field: string) => `${channelId}/${field}`;

function decrypted(services: Pick<Services, 'cipher'>, id: string, state: Extract<ChannelState, { status: 'active' | 'deleted' }>) {
  return Object.fromEntries(Object.entries(state.secrets).map(([field, sealed]) => [field, services.cipher.decrypt(sealed, context(id, field))]));
}

/**
 * The channel a body describes, checked against its type (strict: unknown fields are refused),
 * with the stored secrets the body leaves out (an update) kept: its public fields, its secret
 * changes, and where it sends, worked out from the plain values.
 */
function parseChannel(body: ChannelBody, stored: Record<string, string>) {
  const notifier = notifierOrRefuse(body.type);
  const schema = notifier.configuration.extend(Object.fromEntries(notifier.secrets.map((f) => [f, notifier.configuration.shape[f]!.nullable()])));
  const parsed = schema.safeParse(body.configuration ?? {});
  if (!parsed.success) throw invalid(parsed.error.issues.map((i) => issue(['configuration', ...(i.path as (string | number)[])], i.message)));
  const configuration: Record<string, unknown> = {};
  const secrets: Record<string, string | null> = {};
  for (const [field, value] of Object.entries(parsed.data)) {
    if (notifier.secrets.includes(field)) {
      if (value !== undefined) secrets[field] = value as string | null;
    } else if (value !== undefined) configuration[field] = value;
  }
  const plain: Record<string, unknown> = { ...configuration };
  for (const field of notifier.secrets) {
    const value = field in secrets ? secrets[field] : stored[field];
    if (typeof value === 'string') plain[field] = value;
  }
  const missing = notifier.requiredSecrets.filter((f) => typeof plain[f] !== 'string');
  if (missing.length) throw invalid(missing.map((f) => issue(['configuration', f], `a ${notifier.type} channel needs ${f}`)));
  return { notifier, configuration, secrets, endpoint: notifier.endpoint(notifier.configuration.parse(plain)) };
}

/** The owner's channel from its stream, its secrets decrypted: for whoever sends (the worker, a test). Never log or return it. */
export async function openChannel(services: Pick<Services, 'store' | 'cipher'>, id: string, ownerId: string): Promise<OpenedChannel> {
  const state = ownedChannel((await load(services, channelStream(id), channelDecider)).state, ownerId, id);
  const notifier = notifierOrRefuse(state.type);
  const config = notifier.configuration.parse({ ...state.configuration, ...decrypted(services, id, state) }) as Record<string, unknown>;
  return { id, name: state.name, type: state.type, notifier, config };
}

/** The owner's channel (another owner's is notification_channel_not_found). */
export const showChannel = (services: Services, ownerId: string, id: string): Promise<ChannelRow> => loadChannel(services.pool, ownerId, id);

export const listChannels = (services: Services, ownerId: string, page: PageRequest) => readChannels(services.pool, ownerId, page);

async function save(services: Services, ownerId: string, id: string, body: ChannelBody, type: 'CreateChannel' | 'UpdateChannel') {
  let stored: Record<string, string> = {};
  if (type === 'UpdateChannel') {
    const state = ownedChannel((await load(services, channelStream(id), channelDecider)).state, ownerId, id);
    // A type change drops the old type's secrets (the decider does the same).
    if (state.type === body.type) stored = decrypted(services, id, state);
  }
  const { notifier, configuration, secrets, endpoint } = parseChannel(body, stored);
  await execute(services, channelStream(id), channelDecider, {
    type,
    channelId: id,
    actorId: ownerId,
    name: body.name,
    channelType: notifier.type,
    configuration,
    endpoint,
    secretFields: notifier.secrets,
    secrets: Object.fromEntries(Object.entries(secrets).map(([f, v]) => [f, v === null ? null : services.cipher.encrypt(v, context(id, f))])),
    at: services.clock(),
  });
  return showChannel(services, ownerId, id);
}

export const createChannel = (services: Services, ownerId: string, body: ChannelBody) =>
  save(services, ownerId, services.newId('channel'), body, 'CreateChannel');

/** Replaces a channel; secrets the body leaves out are kept, null clears one. */
export async function updateChannel(services: Services, ownerId: string, id: string, body: ChannelBody) {
  await showChannel(services, ownerId, id);
  return save(services, ownerId, id, body, 'UpdateChannel');
}

/** Deletes a channel, refused (409, naming them) while Jobs are subscribed to it. */
export async function deleteChannel(services: Services, ownerId: string, id: string): Promise<void> {
  await showChannel(services, ownerId, id);
  const users = await jobsNotifying(services.pool, id, ownerId);
  if (users.length) {
    throw new DomainError(
      'conflict',
      `Notification channel ${id} is used by ${users.map((j) => `${j.name} (${j.id})`).join(', ')}; remove it from ${users.length === 1 ? 'that Job' : 'those Jobs'} first`,
      { jobs: users },
    );
  }
  await execute(services, channelStream(id), channelDecider, { type: 'DeleteChannel', channelId: id, actorId: ownerId, at: services.clock() });
}

export interface ChannelTestResult {
  ok: boolean;
  status: string;
  message: string;
  endpoint: string;
  duration_ms: number;
}

/** How long a test notification may take. */
const TEST_TIMEOUT_MS = 20_000;

/**
 * Sends a test notification through a channel of the owner's, now: a classified result, never a
 * thrown remote failure (an address the outbound policy refuses is a 403, as for connections).
 */
export async function testChannel(services: Services, ownerId: string, id: string): Promise<ChannelTestResult> {
  const channel = await openChannel(services, id, ownerId);
  const endpoint = channel.notifier.endpoint(channel.config);
  const now = services.clock();
  const facts: NotificationFacts = {
    event: 'test',
    delivery_id: `test-${id}-${now.getTime()}`,
    job: { id: '-', name: 'test' },
    run: null,
    url: null,
    sent_at: now.toISOString(),
  };
  const started = Date.now();
  try {
    await channel.notifier.send(channel.config, facts, { signal: AbortSignal.timeout(TEST_TIMEOUT_MS) });
    return { ok: true, status: 'ok', message: `${endpoint} accepted a test notification`, endpoint, duration_ms: Date.now() - started };
  } catch (error) {
    const failure = error instanceof ConnectorError ? error : new ConnectorError('invalid_response', `${endpoint}: the test failed unexpectedly`);
    if (failure.reason === 'refused_by_policy') throw outboundRefusal(failure.message);
    return { ok: false, status: failure.reason, message: failure.message, endpoint, duration_ms: Date.now() - started };
  }
}
