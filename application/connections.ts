import { z } from 'zod';
import { connectionDecider, connectionStream, ownedConnection, type SecretChanges } from '../domain/connections/connection.js';
import { kindNoun, notFoundCode, type ConnectionKind } from '../domain/connections/kinds.js';
import { DomainError } from '../domain/errors.js';
import { readOptionsRecord, splitReadOptions } from '../geo/datasets/read-options.js';
import { configurationBodySchema, connectorFor, requireImplemented, typesOf } from '../connectors/registry.js';
import type { ConnectorContext, ConnectorDefinition, Discovery, TestResult } from '../connectors/types.js';
import { ConnectorError } from '../domain/transfers.js';
import type { Cipher } from '../platform/cipher.js';
import { jobsUsing } from '../projections/jobs.js';
import { listConnections as readConnections, loadConnection, type ConnectionRow } from '../projections/connections.js';
import type { PageRequest } from '../projections/pagination.js';
import { outboundRefusal } from '../temporal/failures.js';
import { execute, load } from './commands.js';
import type { Services } from './services.js';

/*
 * Saved connections as the use cases and the worker use them: validating a body against its
 * type's connector, sealing secrets before they reach a command, and opening a saved connection
 * (decrypted, in the process that uses it) for test, discover, extract and deliver; and the
 * use cases of /sources and /destinations (at the end): create, replace, delete, read, test, discover.
 */

/** A Source or Destination body after its schema (api/connections/routes.ts); a type alias, so a route's parsed body converts to it. */
export type ConnectionBody = {
  name: string;
  type: string;
  configuration: Record<string, unknown>;
};

const issue = (path: (string | number)[], message: string) => ({ path: ['body', ...path].join('.'), message });

/** The connector of a body's type for a kind, or a 422 naming `type` with the valid ones. */
export function connectorOrRefuse(kind: ConnectionKind, type: string): ConnectorDefinition {
  const connector = connectorFor(kind, type);
  if (connector) return connector;
  const other = connectorFor(kind === 'source' ? 'destination' : 'source', type);
  const why = other ? `"${type}" can only be a ${kind === 'source' ? 'Destination' : 'Source'}` : `unknown type "${type}"`;
  throw new DomainError('validation_error', `Invalid request body: body.type: ${why}; a ${kindNoun(kind)} is one of ${typesOf(kind).join(', ')}`, {
    issues: [issue(['type'], why)],
    allowed: typesOf(kind),
  });
}

/**
 * Checks a configuration against its type (strict: unknown fields are refused) and splits it into
 * public fields and secret changes (a value sets, null clears, absent keeps). Nothing secret stays
 * in `configuration`.
 */
export function parseConfiguration(
  kind: ConnectionKind,
  body: ConnectionBody,
): { connector: ConnectorDefinition; configuration: Record<string, unknown>; secrets: Record<string, string | null> } {
  const connector = connectorOrRefuse(kind, body.type);
  const parsed = configurationBodySchema(connector).safeParse(body.configuration ?? {});
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => issue(['configuration', ...(i.path as (string | number)[])], i.message));
    throw new DomainError('validation_error', `Invalid request body: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
  }
  const configuration: Record<string, unknown> = {};
  const secrets: Record<string, string | null> = {};
  for (const [field, value] of Object.entries(parsed.data)) {
    if (connector.secrets.includes(field)) {
      if (value !== undefined) secrets[field] = value as string | null;
    } else if (value !== undefined) configuration[field] = value;
  }
  return { connector, configuration, secrets };
}

/** Seals secret values for one connection; the cipher's associated data binds each to its field. */
export function sealSecrets(cipher: Cipher, connectionId: string, secrets: Record<string, string | null>): SecretChanges {
  return Object.fromEntries(
    Object.entries(secrets).map(([field, value]) => [field, value === null ? null : cipher.encrypt(value, `${connectionId}/${field}`)]),
  );
}

/** A saved connection as it can be shown and checked without its secrets: type, public fields, which secrets are stored. */
export interface DescribedConnection {
  id: string;
  kind: ConnectionKind;
  name: string;
  type: string;
  connector: ConnectorDefinition;
  /** Public fields only, as stored. */
  configuration: Record<string, unknown>;
  /** Names of the secrets that are set (never their values). */
  secrets: string[];
}

export interface OpenedConnection {
  id: string;
  kind: ConnectionKind;
  name: string;
  type: string;
  connector: ConnectorDefinition;
  /** Public fields and decrypted secrets, parsed with the type's schema (defaults filled in). */
  config: Record<string, unknown>;
}

async function loadOwned(services: Pick<Services, 'store'>, kind: ConnectionKind, id: string, actorId: string) {
  const { state: stored } = await load(services, connectionStream(kind, id), connectionDecider(kind));
  const connector = stored.status === 'absent' ? undefined : connectorFor(kind, stored.type);
  // Ownership first: another owner's connection is not found, whatever its type.
  const state = ownedConnection(kind, stored, actorId, id);
  if (!connector) throw new DomainError(notFoundCode(kind), `${kindNoun(kind)} ${id} has a type this server no longer knows (${state.type})`, { id });
  return { state, connector };
}

/**
 * A saved connection the actor owns, described without decrypting anything: enough to check a
 * request against its type (importable, deliverable, the selector's schema) in a process that
 * does not talk to the remote system.
 */
export async function describeConnection(services: Pick<Services, 'store'>, kind: ConnectionKind, id: string, actorId: string): Promise<DescribedConnection> {
  const { state, connector } = await loadOwned(services, kind, id, actorId);
  return { id, kind, name: state.name, type: state.type, connector, configuration: state.configuration, secrets: Object.keys(state.secrets) };
}

/**
 * Loads a saved connection the actor owns from its stream and decrypts its secrets. Only the
 * process that talks to the remote system calls this (the API for test and discover, an activity
 * for extract and deliver); the result must never be logged, returned or put in a payload.
 */
export async function openConnection(
  services: Pick<Services, 'store' | 'cipher'>,
  kind: ConnectionKind,
  id: string,
  actorId: string,
): Promise<OpenedConnection> {
  const { state, connector } = await loadOwned(services, kind, id, actorId);
  const secrets = Object.fromEntries(Object.entries(state.secrets).map(([field, sealed]) => [field, services.cipher.decrypt(sealed, `${id}/${field}`)]));
  const config = connector.configuration.parse({ ...state.configuration, ...secrets }) as Record<string, unknown>;
  return { id, kind, name: state.name, type: state.type, connector, config };
}

/** A draft (unsaved) connection for POST /sources/test: validated, secrets in the clear, never stored. */
export function draftConnection(kind: ConnectionKind, body: ConnectionBody): OpenedConnection {
  const { connector, configuration, secrets } = parseConfiguration(kind, body);
  const present = Object.fromEntries(Object.entries(secrets).filter(([, v]) => v !== null));
  const config = connector.configuration.parse({ ...configuration, ...present }) as Record<string, unknown>;
  return { id: 'draft', kind, name: body.name ?? 'draft', type: connector.type, connector, config };
}

/**
 * A per-use selector (source_resource) or target (destination_target) checked by the connector.
 * A plain string is the type's shorthand field (a table, an object key …). Missing where required
 * is invalid_parameter (the spec's code); a wrong shape is a 422 naming the field.
 */
export function parseSelector(
  connector: ConnectorDefinition,
  kind: ConnectionKind,
  value: unknown,
  field: 'source_resource' | 'destination_target',
): Record<string, unknown> {
  const support = kind === 'source' ? connector.source : connector.destination;
  if (!support) throw new DomainError(kind === 'source' ? 'invalid_source' : 'invalid_destination', `A ${connector.type} connection cannot be a ${kind}`);
  const schema = kind === 'source' ? connector.source!.resource : connector.destination!.target;
  const shorthand = kind === 'source' ? connector.source!.shorthand : undefined;
  let given = value;
  if (
    given === undefined ||
    given === null ||
    (typeof given === 'object' && !Array.isArray(given) && Object.keys(given).length === 0 && kind === 'source' && connector.source!.resourceRequired)
  ) {
    if (kind === 'source' && connector.source!.resourceRequired) {
      throw new DomainError(
        'invalid_parameter',
        `A ${connector.type} Source needs source_resource to say what to read${shorthand ? ` (e.g. {"${shorthand}": …})` : ''}`,
        {
          parameter: field,
          schema: z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }),
        },
      );
    }
    given = {};
  }
  // Reading options (source_crs, x_column, …) apply to any Source: taken out before the
  // connector's own schema sees the selector, kept beside what it parsed.
  let read: Record<string, string> = {};
  if (kind === 'source' && typeof given === 'object' && given !== null && !Array.isArray(given)) {
    const split = splitReadOptions(given as Record<string, unknown>, field);
    read = readOptionsRecord(split.options);
    given = split.rest;
    if (Object.keys(read).length && Object.keys(given as object).length === 0 && connector.source!.resourceRequired) {
      throw new DomainError('invalid_parameter', `A ${connector.type} Source needs source_resource to say what to read, besides how to read it`, {
        parameter: field,
        schema: z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }),
      });
    }
  }
  if (typeof given === 'string') {
    if (!shorthand)
      throw new DomainError('validation_error', `Invalid request body: body.${field}: a ${connector.type} ${kind} takes an object here`, {
        issues: [issue([field], 'must be an object')],
      });
    given = { [shorthand]: given };
  }
  const parsed = schema.safeParse(given);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => issue([field, ...(i.path as (string | number)[])], i.message));
    throw new DomainError('validation_error', `Invalid request body: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, { issues });
  }
  return { ...(parsed.data as Record<string, unknown>), ...read };
}

/** A connector call with a deadline: its signal aborts after `ms`, and the call's own errors pass through. */
export async function withDeadline<T>(ms: number, base: Omit<ConnectorContext, 'signal'>, fn: (ctx: ConnectorContext) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new ConnectorError('timeout', `no answer within ${ms / 1000} s`)), ms);
  try {
    return await fn({ ...base, signal: controller.signal });
  } finally {
    clearTimeout(timer);
  }
}

// ---- The use cases of /sources and /destinations ---------------------------------------------

/** How long a connection test may take; discovery may take three times as long. */
const TEST_TIMEOUT_MS = 10_000;

/** The owner's Source or Destination (any other is its kind's not-found). */
export const showConnection = (services: Services, kind: ConnectionKind, ownerId: string, id: string): Promise<ConnectionRow> =>
  loadConnection(services.pool, kind, ownerId, id);

/** The owner's Sources or Destinations, newest first. */
export const listConnections = (services: Services, kind: ConnectionKind, ownerId: string, page: PageRequest) =>
  readConnections(services.pool, kind, ownerId, page);

/** Runs a create or replace: the body checked against its type, its secrets sealed before they reach the command. */
async function save(
  services: Services,
  kind: ConnectionKind,
  ownerId: string,
  id: string,
  body: ConnectionBody,
  type: 'CreateConnection' | 'UpdateConnection',
) {
  const { connector, configuration, secrets } = parseConfiguration(kind, body);
  await execute(services, connectionStream(kind, id), connectionDecider(kind), {
    type,
    connectionId: id,
    actorId: ownerId,
    name: body.name,
    connectionType: connector.type,
    configuration,
    secretFields: connector.secrets,
    secrets: sealSecrets(services.cipher, id, secrets),
    at: services.clock(),
  });
  return showConnection(services, kind, ownerId, id);
}

export const createConnection = (services: Services, kind: ConnectionKind, ownerId: string, body: ConnectionBody) =>
  save(services, kind, ownerId, services.newId(kind), body, 'CreateConnection');

/** Replaces a saved connection; secrets the body leaves out are kept, null clears one. */
export async function updateConnection(services: Services, kind: ConnectionKind, ownerId: string, id: string, body: ConnectionBody) {
  await showConnection(services, kind, ownerId, id);
  return save(services, kind, ownerId, id, body, 'UpdateConnection');
}

/** Deletes a saved connection, refused (409, naming them) while Jobs use it: they would fail at their next Run. */
export async function deleteConnection(services: Services, kind: ConnectionKind, ownerId: string, id: string): Promise<void> {
  await showConnection(services, kind, ownerId, id);
  const users = await jobsUsing(services.pool, kind, id, ownerId);
  if (users.length) {
    throw new DomainError(
      'conflict',
      `${kindNoun(kind)} ${id} is used by ${users.length === 1 ? 'the Job' : `${users.length} Jobs:`} ${users.map((j) => `${j.name} (${j.id})`).join(', ')}; change or delete ${users.length === 1 ? 'it' : 'them'} first`,
      { jobs: users },
    );
  }
  await execute(services, connectionStream(kind, id), connectionDecider(kind), {
    type: 'DeleteConnection',
    connectionId: id,
    actorId: ownerId,
    at: services.clock(),
  });
}

/** Where a use case logs what a connector reports (the request's logger). */
export type Log = ConnectorContext['log'];

/** What a connector call from the API gets besides its signal: the request's logger, the data folder, the upload limit. */
const callContext = (services: Services, log: Log) => ({ log, workDir: services.config.dataDir, maxBytes: services.config.maxUploadBytes });

/** A connector's refusal as the API's error. */
export function domainOf(error: ConnectorError): DomainError {
  if (error.reason === 'not_implemented') return new DomainError('not_implemented', error.message, error.details);
  return new DomainError('invalid_parameter', error.message, { reason: error.reason, ...error.details });
}

/**
 * Tests a saved connection of the owner's, or a draft (`body`, nothing stored): always a
 * classified result, never a thrown remote failure; an address the outbound policy refuses is a
 * 403 naming the setting (a classified result would tell open ports from closed ones).
 */
export async function testConnection(
  services: Services,
  kind: ConnectionKind,
  ownerId: string,
  what: { id: string } | { draft: ConnectionBody },
  log: Log,
): Promise<TestResult> {
  const connection = 'draft' in what ? draftConnection(kind, what.draft) : await openConnection(services, kind, what.id, ownerId);
  const { connector } = connection;
  try {
    requireImplemented(connector, 'test');
  } catch (error) {
    throw domainOf(error as ConnectorError);
  }
  const started = Date.now();
  let result: TestResult;
  try {
    result = await withDeadline(TEST_TIMEOUT_MS, callContext(services, log), (ctx) => connector.test(connection.config, ctx));
  } catch (error) {
    const failure = error instanceof ConnectorError ? error : new ConnectorError('invalid_response', `${connector.label} test failed unexpectedly`);
    result = { ok: false, status: failure.reason, message: failure.message, tried: {}, duration_ms: Date.now() - started };
  }
  if (result.status === 'refused_by_policy') throw outboundRefusal(result.message);
  return result;
}

/** The schemas of a saved database connection of the owner's, or with `schema`, its tables and views. */
export async function discover(
  services: Services,
  kind: ConnectionKind,
  ownerId: string,
  id: string,
  schema: string | undefined,
  log: Log,
): Promise<Discovery> {
  const connection = await openConnection(services, kind, id, ownerId);
  if (!connection.connector.discover) {
    throw new DomainError(
      kind === 'source' ? 'invalid_source' : 'invalid_destination',
      `Discovery works on ${kindNoun(kind)}s whose type can list its tables (GET /api/v1/connectors: capabilities.discover); this one is ${connection.type}`,
      { type: connection.type },
    );
  }
  try {
    return await withDeadline(TEST_TIMEOUT_MS * 3, callContext(services, log), (ctx) => connection.connector.discover!(connection.config, { schema }, ctx));
  } catch (error) {
    if (error instanceof ConnectorError) {
      if (error.reason === 'refused_by_policy') throw outboundRefusal(error.message);
      throw new DomainError('postgis_failed', error.message, { reason: error.reason, ...error.details });
    }
    throw error;
  }
}
