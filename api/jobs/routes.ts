import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { sql } from 'slonik';
import { z } from 'zod';
import { execute } from '../../application/commands.js';
import { jobDefinitionFrom, type JobBody } from '../../application/jobs.js';
import { checkQueueRoom, checkRetryable, claimIdempotencyKey, recordQueuedRun, signalRun } from '../../application/runs.js';
import type { RunTicket } from '../../temporal/tickets.js';
import type { Services } from '../../application/services.js';
import { DomainError } from '../../domain/errors.js';
import { jobDecider, jobStream, type ActiveJob, type JobCommand } from '../../domain/jobs/job.js';
import { requirePrincipal } from '../auth/principal.js';
import { errorEnvelope } from '../errors.js';
import {
  jobColumns,
  jobFrom,
  jobRow,
  jobSchema,
  loadJob,
  loadRun,
  representJob,
  representRun,
  runColumns,
  runRow,
  runSchema,
  runStatuses,
} from './representation.js';
import { keysetWhere, limitPlusOne, pageOf, pageQuery, toPage } from '../pagination.js';
import { nonBlank, operationList } from '../schemas.js';

const errors = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope, 409: errorEnvelope, 422: errorEnvelope };
const params = z.object({ id: z.string().min(1).max(100) });
const runParams = params.extend({ runId: z.string().min(1).max(100) });
const selector = z
  .union([z.string().min(1).max(100_000), z.record(z.string(), z.unknown())])
  .nullable()
  .optional();

const jobBody = z
  .object({
    name: nonBlank(200),
    source_id: z.string().min(1).max(100).describe('A Source you own'),
    source_resource: selector.describe("What to read (table, object, layer, collection, asset), checked by the Source's connector"),
    transform_mode: z.enum(['manual', 'recipe', 'sql'], { error: 'must be manual, recipe or sql' }).nullable().optional(),
    operations: operationList.nullable().optional().describe('With manual: ordered operations'),
    output_fields: z.array(z.string().min(1).max(255)).max(1000).nullable().optional().describe('With manual: the columns to keep, in order'),
    recipe_id: z.string().min(1).max(100).nullable().optional().describe('With recipe: the Recipe whose operations are copied onto the Job'),
    sql: z.string().max(100_000).nullable().optional().describe('With sql: one SELECT against the relation `source`'),
    python_script: z.string().min(1).max(1_000_000).nullable().optional(),
    python_filename: z.string().min(1).max(255).nullable().optional(),
    output_format: z.string().min(1).max(100).nullable().optional().describe('An id (or extension) from GET /api/v1/formats'),
    destination_id: z
      .string()
      .min(1)
      .max(100)
      .nullable()
      .optional()
      .describe('A Destination you own; a Job saved without one fails its Runs at deliver until it has one'),
    destination_target: selector.describe("Per-run target (schema and table, write_mode, object key …), checked by the Destination's connector"),
    schedule: z
      .object({
        kind: z.literal('daily'),
        timezone: z.string().min(1).max(100).describe('IANA timezone, e.g. Europe/Berlin'),
        hour: z.number().int().min(0).max(23),
        minute: z.number().int().min(0).max(59),
      })
      .strict()
      .nullable()
      .optional(),
    pipeline: z
      .object({ transform: z.boolean().nullable().optional(), convert: z.boolean().nullable().optional(), python: z.boolean().nullable().optional() })
      .strict()
      .nullable()
      .optional()
      .describe('Stage flags: false removes a stage, true keeps it, null (or absent on create) infers it; an update keeps the flags it does not mention'),
    enabled: z.boolean().optional(),
  })
  .meta({ id: 'JobBody' });

const runsQuery = pageQuery.extend({ status: z.enum(runStatuses).optional().describe('Only Runs with this status') });
const idempotencyHeaders = z.looseObject({
  'idempotency-key': z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces')
    .optional()
    .describe('The same key within 24 hours returns the same Run instead of starting another'),
});

/**
 * /jobs and their Runs. The same routes answer under /pipelines (the spec's internal
 * compatibility aliases), hidden from the OpenAPI document.
 */
export function jobRoutes(services: Services, base: 'jobs' | 'pipelines' = 'jobs'): FastifyPluginAsyncZod {
  const hide = base === 'pipelines';
  const tags = ['Jobs'];
  const route = (path: string) => `/${base}${path}`;
  const ownerOf = (request: FastifyRequest) => requirePrincipal(request).userId;
  const jobView = async (ownerId: string, id: string) => representJob(await loadJob(services.pool, ownerId, id), services.clock());

  /** Runs a Job command; the answer waits for the read models and, briefly, for the Job's Schedule to follow. */
  async function change(command: JobCommand) {
    const result = await execute(services, jobStream(command.jobId), jobDecider, command);
    if (result && services.reactors) {
      await services.reactors
        .waitFor(result.position, 5_000)
        .catch((error) => services.log.warn({ err: error, jobId: command.jobId }, 'the Job schedule is catching up'));
    }
  }

  /** The Job's stored state from its stream (for updates, which merge stage flags). */
  async function storedJob(ownerId: string, id: string): Promise<ActiveJob> {
    const row = await loadJob(services.pool, ownerId, id);
    return row.state as ActiveJob;
  }

  /** Hands a ticket to the Job's coordinator, records the Run, waits for the read model. */
  async function requestRun(ticket: RunTicket, request: FastifyRequest) {
    try {
      await signalRun(services, ticket);
    } catch (error) {
      request.log.error({ err: error, jobId: ticket.jobId }, 'could not hand the Run to Temporal');
      throw new DomainError(
        'service_unavailable',
        'The Run could not be started: the workflow service does not answer; nothing was recorded, try again shortly',
      );
    }
    const queued = await recordQueuedRun(services, ticket);
    await services.projections.waitFor(BigInt(queued.position));
    return representRun(await loadRun(services.pool, ticket.ownerId, ticket.jobId, ticket.runId));
  }

  return async (app) => {
    app.get(
      route(''),
      {
        config: { auth: { scopes: ['jobs:read'] } },
        schema: { hide, tags, summary: 'List your Jobs', querystring: pageQuery, response: { 200: pageOf(jobSchema), ...errors } },
      },
      async (request) => {
        const rows = await services.pool.any(sql.type(jobRow)`SELECT ${jobColumns} FROM ${jobFrom}
        WHERE j.owner_id = ${ownerOf(request)} AND ${keysetWhere(request.query, 'j')}
        ORDER BY j.created_at DESC, j.id DESC LIMIT ${limitPlusOne(request.query)}`);
        const now = services.clock();
        return toPage([...rows], request.query, (r) => representJob(r, now));
      },
    );

    app.get(
      route('/:id'),
      {
        config: { auth: { scopes: ['jobs:read'] } },
        schema: { hide, tags, summary: 'Get a Job', params, response: { 200: jobSchema, ...errors } },
      },
      async (request) => jobView(ownerOf(request), request.params.id),
    );

    app.post(
      route(''),
      {
        config: { auth: { scopes: ['jobs:write'] } },
        schema: { hide, tags, summary: 'Create a Job', body: jobBody, response: { 201: jobSchema, ...errors } },
      },
      async (request, reply) => {
        const ownerId = ownerOf(request);
        const body = request.body as JobBody;
        const definition = await jobDefinitionFrom(services, ownerId, body);
        const jobId = services.newId('job');
        await change({ type: 'CreateJob', jobId, actorId: ownerId, definition, enabled: body.enabled ?? true, at: services.clock() });
        return reply.code(201).send(await jobView(ownerId, jobId));
      },
    );

    app.put(
      route('/:id'),
      {
        config: { auth: { scopes: ['jobs:write'] } },
        schema: { hide, tags, summary: 'Replace a Job (stage flags not mentioned are kept)', params, body: jobBody, response: { 200: jobSchema, ...errors } },
      },
      async (request) => {
        const ownerId = ownerOf(request);
        const body = request.body as JobBody;
        const stored = await storedJob(ownerId, request.params.id);
        const definition = await jobDefinitionFrom(services, ownerId, body, stored.definition);
        await change({
          type: 'UpdateJob',
          jobId: request.params.id,
          actorId: ownerId,
          definition,
          ...(body.enabled === undefined ? {} : { enabled: body.enabled }),
          at: services.clock(),
        });
        return jobView(ownerId, request.params.id);
      },
    );

    app.delete(
      route('/:id'),
      {
        config: { auth: { scopes: ['jobs:write'] } },
        schema: {
          hide,
          tags,
          summary: 'Delete a Job: its schedule is removed and a Run in progress is cancelled',
          params,
          response: { 204: z.null().describe('Deleted'), ...errors },
        },
      },
      async (request, reply) => {
        await change({ type: 'DeleteJob', jobId: request.params.id, actorId: ownerOf(request), at: services.clock() });
        return reply.code(204).send(null);
      },
    );

    for (const [action, type, summary] of [
      ['enable', 'EnableJob', 'Enable a Job (its schedule resumes)'],
      ['disable', 'DisableJob', 'Disable a Job (its schedule pauses; Run Now still works)'],
      ['sync/reset', 'ResetSync', 'Forget the sync cursor: the next Run reads everything'],
      ['sync/reinitialize', 'ReinitializeSync', 'Forget the sync cursor and rebuild the target on the next Run (staged and swapped)'],
    ] as const) {
      app.post(
        route(`/:id/${action}`),
        {
          config: { auth: { scopes: ['jobs:write'] } },
          schema: { hide, tags, summary, params, response: { 200: jobSchema, ...errors } },
        },
        async (request) => {
          const ownerId = ownerOf(request);
          await change({ type, jobId: request.params.id, actorId: ownerId, at: services.clock() });
          return jobView(ownerId, request.params.id);
        },
      );
    }

    app.post(
      route('/:id/run'),
      {
        config: { auth: { scopes: ['jobs:run'] } },
        schema: {
          hide,
          tags,
          summary: 'Run Now: records a queued Run and answers at once; it runs behind a Run in progress',
          params,
          headers: idempotencyHeaders,
          response: { 201: runSchema, ...errors },
        },
      },
      async (request, reply) => {
        const ownerId = ownerOf(request);
        const jobId = request.params.id;
        await loadJob(services.pool, ownerId, jobId);
        const key = request.headers['idempotency-key'];
        let runId = services.newId('run');
        if (key) {
          const claim = await claimIdempotencyKey(services, ownerId, jobId, key, runId);
          runId = claim.runId;
          if (claim.replayed) {
            reply.header('idempotent-replayed', 'true');
            const existing = await services.pool.maybeOne(sql.type(runRow)`SELECT ${runColumns} FROM rm.runs WHERE id = ${runId}`);
            if (existing) return reply.code(201).send(representRun(existing));
            // The first request claimed the key but did not get its Run recorded: finish its work.
          }
        }
        await checkQueueRoom(services, jobId);
        const run = await requestRun({ runId, jobId, ownerId, trigger: 'manual', retryOf: null, scheduledFor: null }, request);
        return reply.code(201).send(run);
      },
    );

    app.get(
      route('/:id/runs'),
      {
        config: { auth: { scopes: ['jobs:read'] } },
        schema: { hide, tags, summary: "List a Job's Runs, newest first", params, querystring: runsQuery, response: { 200: pageOf(runSchema), ...errors } },
      },
      async (request) => {
        const ownerId = ownerOf(request);
        await loadJob(services.pool, ownerId, request.params.id);
        const status = request.query.status ? sql.fragment`AND status = ${request.query.status}` : sql.fragment``;
        const rows = await services.pool.any(sql.type(runRow)`SELECT ${runColumns} FROM rm.runs
        WHERE job_id = ${request.params.id} AND owner_id = ${ownerId} ${status} AND ${keysetWhere(request.query)}
        ORDER BY created_at DESC, id DESC LIMIT ${limitPlusOne(request.query)}`);
        return toPage([...rows], request.query, representRun);
      },
    );

    app.get(
      route('/:id/runs/:runId'),
      {
        config: { auth: { scopes: ['jobs:read'] } },
        schema: { hide, tags, summary: 'One Run', params: runParams, response: { 200: runSchema, ...errors } },
      },
      async (request) => {
        const ownerId = ownerOf(request);
        await loadJob(services.pool, ownerId, request.params.id);
        return representRun(await loadRun(services.pool, ownerId, request.params.id, request.params.runId));
      },
    );

    app.post(
      route('/:id/runs/:runId/retry'),
      {
        config: { auth: { scopes: ['jobs:run'] } },
        schema: {
          hide,
          tags,
          summary: 'Retry a failed Run: a new Run of the same Job snapshot, linked to it (409 for a Run that did not fail)',
          params: runParams,
          response: { 201: runSchema, ...errors },
        },
      },
      async (request, reply) => {
        const ownerId = ownerOf(request);
        const { id: jobId, runId } = request.params;
        await loadJob(services.pool, ownerId, jobId);
        await loadRun(services.pool, ownerId, jobId, runId);
        await checkRetryable(services, ownerId, runId);
        await checkQueueRoom(services, jobId);
        const run = await requestRun({ runId: services.newId('run'), jobId, ownerId, trigger: 'retry', retryOf: runId, scheduledFor: null }, request);
        return reply.code(201).send(run);
      },
    );
  };
}

/** The internal compatibility aliases: /api/v1/pipelines/... answers like /api/v1/jobs/... */
export const pipelineAliasRoutes = (services: Services) => jobRoutes(services, 'pipelines');
