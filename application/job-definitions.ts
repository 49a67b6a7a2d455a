import { connectorFor } from '../connectors/registry.js';
import { kindNoun, notFoundCode, type ConnectionKind } from '../domain/connections/kinds.js';
import { DomainError, notFound } from '../domain/errors.js';
import { stagesOf, type JobDefinition, type Stage, type StageFlags, type TransformMode } from '../domain/jobs/definition.js';
import {
  checkDeclarations,
  checkReferences,
  fillSql,
  fillTemplate,
  placeholdersIn,
  resolveValues,
  sampleValues,
  type ParameterType,
  type ParameterValues,
} from '../domain/jobs/parameters.js';
import { checkSchedule, type JobSchedule } from '../domain/jobs/schedule.js';
import { cycleError, findCycle, MAX_AFTER, type AfterTrigger, type JobTriggers } from '../domain/jobs/triggers.js';
import { channelNotFound } from '../domain/notifications/channel.js';
import { checkSubscriptions, type NotificationEvent, type Subscription } from '../domain/notifications/subscriptions.js';
import type { Operation } from '../domain/operations.js';
import type { ConnectorDefinition } from '../connectors/types.js';
import { typesWithChangeCheck } from '../connectors/registry.js';
import { resolveOutputFormat } from '../geo/datasets/formats.js';
import { checkCreationOptions } from '../geo/datasets/convert.js';
import type { ConvertRequest } from '../domain/workspaces/contents.js';
import { checkSelectSql } from '../geo/operations/sql-guard.js';
import { connectionType } from '../projections/connections.js';
import { ownedJobIds, upstreamGraph } from '../projections/jobs.js';
import { ownedChannelIds } from '../projections/notification-channels.js';
import { recipeOperations } from '../projections/recipes.js';
import { parseSelector } from './connections.js';
import type { Services } from './services.js';

/*
 * A Job body checked and turned into the definition the Job stores (application/jobs.ts saves
 * it), and the parameter values of a Run checked against a definition (application/runs.ts,
 * application/webhooks.ts).
 */

/** A Job body after its schema (api/jobs/routes.ts): shapes are right, references and rules not yet checked. */
export interface JobBody {
  name: string;
  source_id: string;
  source_resource?: unknown;
  transform_mode?: TransformMode | null;
  operations?: Operation[] | null;
  output_fields?: string[] | null;
  recipe_id?: string | null;
  sql?: string | null;
  python_script?: string | null;
  python_filename?: string | null;
  output_format?: string | null;
  creation_options?: ConvertRequest['creation_options'];
  destination_id?: string | null;
  destination_target?: unknown;
  schedule?: JobSchedule | null;
  triggers?: { on_change?: { every_minutes: number } | null; after?: AfterTrigger[] | null } | null;
  parameters?: ParameterInput[] | null;
  /** A flag set to null goes back to "inferred". */
  pipeline?: Partial<Record<Stage, boolean | null>> | null;
  enabled?: boolean;
  notifications?: { channel_id: string; events: NotificationEvent[]; slow_after_seconds?: number | null | undefined }[] | null;
}

/** A parameter as a body declares it (api/jobs/routes.ts). */
export interface ParameterInput {
  name: string;
  type: ParameterType;
  default?: string | number | boolean | null;
  description?: string | null;
  choices?: (string | number | boolean)[] | null;
}

const refuse = (field: string, message: string) =>
  new DomainError('validation_error', `Invalid request body: body.${field}: ${message}`, { issues: [{ path: `body.${field}`, message }] });

/**
 * The stage flags after a write: on create, the flags sent; on update, the stored flags with the
 * sent ones applied on top (null clears one). A stage set to false therefore stays absent
 * through updates that do not mention it, as the spec asks ("create and update preserve
 * explicit false flags").
 */
export function mergeFlags(stored: StageFlags | undefined, sent: JobBody['pipeline']): StageFlags {
  const flags: StageFlags = { ...(stored ?? {}) };
  for (const stage of ['transform', 'python', 'convert'] as const) {
    const value = sent?.[stage];
    if (value === null) delete flags[stage];
    else if (value !== undefined) flags[stage] = value;
  }
  return flags;
}

async function ownedConnectionType(services: Pick<Services, 'pool'>, kind: ConnectionKind, id: string, ownerId: string) {
  const type = await connectionType(services.pool, kind, ownerId, id);
  const connector = type === null ? undefined : connectorFor(kind, type);
  if (!connector) throw notFound(notFoundCode(kind), kindNoun(kind), id);
  return connector;
}

/** The transform stage's fields, by mode; absent stage: none of them. */
async function transformFields(services: Pick<Services, 'pool'>, ownerId: string, body: JobBody, present: boolean, samples: ParameterValues) {
  const none = { transform_mode: null, operations: [], output_fields: null, recipe_id: null, sql: null };
  if (!present) return none;
  const mode: TransformMode = body.transform_mode ?? (body.sql ? 'sql' : body.recipe_id ? 'recipe' : 'manual');
  if (mode !== 'manual' && body.output_fields) throw refuse('output_fields', 'output_fields is used with transform_mode manual');
  if (mode !== 'sql' && body.sql) throw refuse('sql', `sql is used with transform_mode sql, not ${mode}`);
  if (mode !== 'recipe' && body.recipe_id) throw refuse('recipe_id', `recipe_id is used with transform_mode recipe, not ${mode}`);
  switch (mode) {
    case 'manual':
      return { ...none, transform_mode: mode, operations: body.operations ?? [], output_fields: body.output_fields ?? null };
    case 'recipe': {
      if (!body.recipe_id) throw refuse('recipe_id', 'transform_mode recipe needs recipe_id');
      // A snapshot: the Recipe's operations as they are now; later Recipe edits leave the Job
      // alone. Operations sent with the body are ignored (a Job read and sent back has them).
      return { ...none, transform_mode: mode, recipe_id: body.recipe_id, operations: await recipeOperations(services.pool, ownerId, body.recipe_id) };
    }
    case 'sql':
      if (!body.sql) throw refuse('sql', 'transform_mode sql needs sql: one SELECT against the relation "source"');
      if (body.operations?.length) throw refuse('operations', 'operations are used with transform_mode manual; sql excludes them');
      // With parameters: what a Run would run, with the defaults (or samples of their types).
      checkSelectSql(fillSql(body.sql, samples));
      return { ...none, transform_mode: mode, sql: body.sql };
    default:
      throw refuse('transform_mode', 'must be manual, recipe or sql');
  }
}

/** The subscriptions of a body: the rules of domain/notifications, and every channel the owner's (else notification_channel_not_found). */
async function subscriptionsFrom(services: Pick<Services, 'pool'>, ownerId: string, body: JobBody): Promise<Subscription[]> {
  const subscriptions = (body.notifications ?? []).map((n) => ({
    channel_id: n.channel_id,
    events: [...new Set(n.events)],
    slow_after_seconds: n.slow_after_seconds ?? null,
  }));
  checkSubscriptions(subscriptions);
  const owned = await ownedChannelIds(
    services.pool,
    ownerId,
    subscriptions.map((s) => s.channel_id),
  );
  const missing = subscriptions.find((s) => !owned.has(s.channel_id));
  if (missing) throw channelNotFound(missing.channel_id);
  return subscriptions;
}

/**
 * A selector or target as stored: checked by its connector. One that uses parameters is stored
 * as written (a shorthand string as the object it stands for) and checked filled with `samples`;
 * a Run fills it with its own values (checked again then).
 */
function selectorOf(
  connector: ConnectorDefinition,
  kind: 'source' | 'destination',
  value: unknown,
  field: 'source_resource' | 'destination_target',
  samples: ParameterValues,
) {
  if (placeholdersIn(value).length === 0) return parseSelector(connector, kind, value, field);
  const shorthand = kind === 'source' ? connector.source?.shorthand : undefined;
  const template = typeof value === 'string' && shorthand ? { [shorthand]: value } : value;
  parseSelector(connector, kind, fillTemplate(template, samples), field);
  return template as Record<string, unknown>;
}

/**
 * The triggers of a body: on change needs a Source type (and selector) whose connector can tell
 * a change without reading the data; `after` names the caller's own other Jobs and must not
 * close a circle (a Job not saved yet cannot be in one).
 */
async function triggersFrom(
  services: Pick<Services, 'pool'>,
  ownerId: string,
  jobId: string | undefined,
  sent: JobBody['triggers'],
  source: ConnectorDefinition,
  resource: unknown,
): Promise<JobTriggers> {
  let on_change: JobTriggers['on_change'] = null;
  if (sent?.on_change) {
    const check = source.source?.changeCheck;
    if (!check) {
      throw refuse(
        'triggers.on_change',
        `a ${source.type} Source cannot tell whether it changed without reading the data; on-change triggers work with ${typesWithChangeCheck().join(', ')} Sources`,
      );
    }
    const why = placeholdersIn(resource).length ? null : (check.unsupported?.(resource as never) ?? null);
    if (why) throw refuse('triggers.on_change', why);
    on_change = { every_minutes: sent.on_change.every_minutes };
  }
  const after: AfterTrigger[] = [];
  for (const [i, t] of (sent?.after ?? []).entries()) {
    if (after.some((a) => a.job_id === t.job_id)) throw refuse(`triggers.after[${i}].job_id`, `${t.job_id} is named twice`);
    after.push({ job_id: t.job_id, when: t.when });
  }
  if (after.length > MAX_AFTER) throw refuse('triggers.after', `at most ${MAX_AFTER} Jobs`);
  if (after.length) {
    const known = await ownedJobIds(
      services.pool,
      ownerId,
      after.map((a) => a.job_id),
    );
    const missing = after.find((a) => !known.has(a.job_id) && a.job_id !== jobId);
    if (missing) throw notFound('job_not_found', 'Job', missing.job_id);
    if (jobId) {
      const graph = await upstreamGraph(services.pool, ownerId);
      const cycle = findCycle(
        jobId,
        after.map((a) => a.job_id),
        (id) => graph.get(id) ?? [],
      );
      if (cycle) throw cycleError(cycle);
    }
  }
  return { on_change, after };
}

/**
 * Checks a Job body and turns it into the definition a Job stores: the Source and Destination
 * are the caller's (else their not-found code, never revealing another user's), the selector and
 * target pass their connector's schema, a Recipe's operations are copied, SQL passes the same
 * guard as Workspaces, the output format is one this server writes, the schedule is one that
 * fires (its timezone IANA), triggers and parameters hold together, and the fields of a stage
 * set to false are dropped. `jobId` is the Job being replaced (cycles are checked against it).
 */
export async function jobDefinitionFrom(
  services: Pick<Services, 'pool' | 'clock'>,
  ownerId: string,
  body: JobBody,
  stored?: JobDefinition,
  jobId?: string,
): Promise<JobDefinition> {
  const now = services.clock();
  const parameters = checkDeclarations(
    (body.parameters ?? []).map((d) => ({
      name: d.name,
      type: d.type,
      default: d.default ?? null,
      description: d.description ?? null,
      choices: d.choices ?? null,
    })),
  );
  checkReferences(parameters, { source_resource: body.source_resource, destination_target: body.destination_target, sql: body.sql });
  const samples = sampleValues(parameters, now.toISOString().slice(0, 10));
  const pipeline = mergeFlags(stored?.pipeline, body.pipeline);
  const sent = {
    pipeline,
    transform_mode: body.transform_mode ?? null,
    operations: body.operations ?? [],
    recipe_id: body.recipe_id ?? null,
    sql: body.sql ?? null,
    python_script: body.python_script ?? null,
    output_format: body.output_format ?? null,
  };
  const stages = stagesOf(sent);

  const transform = await transformFields(services, ownerId, body, stages.transform, samples);

  if (stages.python && !body.python_script) throw refuse('python_script', 'the python stage needs python_script');
  const python = stages.python
    ? { python_script: body.python_script!, python_filename: body.python_filename ?? 'step.py' }
    : { python_script: null, python_filename: null };
  if (python.python_filename !== null && !/^[^/\\\0]+$/.test(python.python_filename)) throw refuse('python_filename', 'a file name, without folders');

  let output_format: string | null = null;
  if (stages.convert) {
    if (!body.output_format) throw refuse('output_format', 'the convert stage needs output_format (see GET /api/v1/formats)');
    const format = resolveOutputFormat(body.output_format, 'vector') ?? resolveOutputFormat(body.output_format, 'raster');
    if (!format) throw refuse('output_format', `"${body.output_format}" is not a format this server writes; see GET /api/v1/formats`);
    output_format = format.id;
    checkCreationOptions(format, body.creation_options);
  } else if (body.creation_options) {
    throw refuse('creation_options', 'creation options belong to the convert stage: give output_format too');
  }

  const source = await ownedConnectionType(services, 'source', body.source_id, ownerId);
  const resource = selectorOf(source, 'source', body.source_resource, 'source_resource', samples);
  // A Job may be saved before it has a Destination (a draft); its Runs fail at deliver until it has one.
  const destination = body.destination_id ? await ownedConnectionType(services, 'destination', body.destination_id, ownerId) : null;
  const target = destination ? selectorOf(destination, 'destination', body.destination_target, 'destination_target', samples) : {};

  const schedule = body.schedule ? checkSchedule(body.schedule, now) : null;
  const triggers = await triggersFrom(services, ownerId, jobId, body.triggers, source, resource);
  // Nobody is there to give a value when a schedule or a trigger starts a Run.
  const required = parameters.find((p) => p.default === null);
  if (required && (schedule || triggers.on_change || triggers.after.length)) {
    throw refuse(
      `parameters`,
      `parameter "${required.name}" has no default, so a Run started by the ${schedule ? 'schedule' : 'trigger'} would have no value for it: give it a default`,
    );
  }
  const notifications = await subscriptionsFrom(services, ownerId, body);

  return {
    name: body.name,
    source_id: body.source_id,
    source_resource: Object.keys(resource).length ? resource : null,
    ...transform,
    ...python,
    output_format,
    ...(output_format && body.creation_options ? { creation_options: body.creation_options } : {}),
    destination_id: body.destination_id ?? null,
    destination_target: target,
    schedule,
    triggers,
    parameters,
    pipeline,
    notifications,
  };
}

/**
 * The parameter values of a Run of this definition (given ones checked, defaults for the rest),
 * with what they make of the selector, the target and the SQL checked as a save would check
 * them: Run Now, a webhook or a retry refuses bad values with a 422 before a Run exists.
 */
export async function checkRunValues(
  services: Pick<Services, 'pool'>,
  ownerId: string,
  definition: JobDefinition,
  given: Record<string, unknown> | null | undefined,
): Promise<ParameterValues> {
  const values = resolveValues(definition.parameters, given);
  if (definition.parameters.length === 0) return values;
  const filled = (what: string, check: () => unknown) => {
    try {
      check();
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      throw new DomainError(
        error.code === 'invalid_parameter' ? 'invalid_parameter' : 'validation_error',
        `With these parameter values, ${what}: ${error.message}`,
        {
          ...error.details,
          parameters: values,
        },
      );
    }
  };
  const source = await ownedConnectionType(services, 'source', definition.source_id, ownerId);
  filled('source_resource is not valid', () => parseSelector(source, 'source', fillTemplate(definition.source_resource, values) ?? {}, 'source_resource'));
  if (definition.destination_id) {
    const destination = await ownedConnectionType(services, 'destination', definition.destination_id, ownerId);
    filled('destination_target is not valid', () =>
      parseSelector(destination, 'destination', fillTemplate(definition.destination_target, values), 'destination_target'),
    );
  }
  if (definition.sql) filled('the SQL is refused', () => checkSelectSql(fillSql(definition.sql!, values)));
  return values;
}
