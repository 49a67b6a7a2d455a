import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import * as jobs from '../../application/jobs.js';
import * as runs from '../../application/runs.js';
import type { Services } from '../../application/services.js';
import * as webhooks from '../../application/webhooks.js';
import { notificationEvents } from '../../domain/notifications/subscriptions.js';
import { runStatuses } from '../../domain/runs/statuses.js';
import { requirePrincipal } from '../auth/principal.js';
import { errorEnvelope } from '../errors.js';
import { pageOf, pageQuery, pageView } from '../pagination.js';
import { creationOptions, nonBlank, operationList } from '../schemas.js';
import { parametersBody, parameterValues, scheduleBody, triggersBody } from './automation-schemas.js';
import { jobSchema, representJob, representRun, runSchema, webhookUrl } from './representation.js';

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
    creation_options: creationOptions
      .nullable()
      .optional()
      .describe(
        "With output_format: the format's creation options, checked as a Workspace convert checks them (GET /api/v1/formats lists the engine formats' options)",
      ),
    destination_id: z
      .string()
      .min(1)
      .max(100)
      .nullable()
      .optional()
      .describe('A Destination you own; a Job saved without one fails its Runs at deliver until it has one'),
    destination_target: selector.describe("Per-run target (schema and table, write_mode, object key …), checked by the Destination's connector"),
    schedule: scheduleBody.nullable().optional(),
    triggers: triggersBody.nullable().optional(),
    parameters: parametersBody.nullable().optional(),
    pipeline: z
      .object({ transform: z.boolean().nullable().optional(), convert: z.boolean().nullable().optional(), python: z.boolean().nullable().optional() })
      .strict()
      .nullable()
      .optional()
      .describe('Stage flags: false removes a stage, true keeps it, null (or absent on create) infers it; an update keeps the flags it does not mention'),
    enabled: z.boolean().optional(),
    notifications: z
      .array(
        z.strictObject({
          channel_id: z.string().min(1).max(100).describe('A notification channel you own'),
          events: z
            .array(z.enum(notificationEvents))
            .min(1)
            .max(notificationEvents.length)
            .describe('failure, auto_disable, recovery (first success after a failure), success (every succeeded Run), slow'),
          slow_after_seconds: z.number().int().min(1).max(604_800).nullable().optional().describe('With slow: tell the channel once a Run has run this long'),
        }),
      )
      .max(20)
      .nullable()
      .optional()
      .describe('Who is told about the Runs of this Job, and of what (docs/jobs.md, Notifications); left out or null: nobody'),
  })
  .meta({ id: 'JobBody' });

// A POST without a body reaches the schema as null.
const runNowBody = z.object({ parameters: parameterValues.optional() }).strict().nullish();
const retryBody = z
  .object({
    definition: z
      .enum(['current', 'original'])
      .default('current')
      .describe("current (default): the Job as it is now, with the failed Run's parameter values; original: the failed Run's own snapshot and values"),
  })
  .strict()
  .nullish();
const webhookBody = z
  .object({ auth: z.enum(['hmac', 'bearer']).default('hmac').describe('hmac: callers sign each call; bearer: callers send the secret as a bearer token') })
  .strict()
  .nullish();
const issuedWebhook = z
  .object({
    url: z.string(),
    auth: z.enum(['hmac', 'bearer']),
    secret: z.string().describe('Shown once: store it where the caller keeps its secrets'),
    created_at: z.string(),
    rotated_at: z.string().nullable(),
  })
  .meta({ id: 'IssuedWebhook' });

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
  const log = (request: FastifyRequest) => request.log as runs.Log;
  const originOf = (request: FastifyRequest) => services.config.publicOrigin ?? `${request.protocol}://${request.host}`;
  const show = (request: FastifyRequest, job: jobs.JobView) => representJob(job, originOf(request));

  return async (app) => {
    app.get(
      route(''),
      {
        config: { auth: { scopes: ['jobs:read'] } },
        schema: { hide, tags, summary: 'List your Jobs', querystring: pageQuery, response: { 200: pageOf(jobSchema), ...errors } },
      },
      async (request) => {
        const page = await jobs.listJobs(services, ownerOf(request), request.query);
        return pageView(page, (r) => show(request, r));
      },
    );

    app.get(
      route('/:id'),
      {
        config: { auth: { scopes: ['jobs:read'] } },
        schema: { hide, tags, summary: 'Get a Job', params, response: { 200: jobSchema, ...errors } },
      },
      async (request) => show(request, await jobs.showJob(services, ownerOf(request), request.params.id)),
    );

    app.post(
      route(''),
      {
        config: { auth: { scopes: ['jobs:write'] } },
        schema: { hide, tags, summary: 'Create a Job', body: jobBody, response: { 201: jobSchema, ...errors } },
      },
      async (request, reply) => {
        const job = await jobs.createJob(services, ownerOf(request), request.body as jobs.JobBody);
        return reply.code(201).send(show(request, job));
      },
    );

    app.put(
      route('/:id'),
      {
        config: { auth: { scopes: ['jobs:write'] } },
        schema: { hide, tags, summary: 'Replace a Job (stage flags not mentioned are kept)', params, body: jobBody, response: { 200: jobSchema, ...errors } },
      },
      async (request) => show(request, await jobs.updateJob(services, ownerOf(request), request.params.id, request.body as jobs.JobBody)),
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
        await jobs.deleteJob(services, ownerOf(request), request.params.id);
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
        async (request) => show(request, await jobs.switchJob(services, ownerOf(request), request.params.id, type)),
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
          description: 'The body may give values for the Job\'s parameters: {"parameters": {"region": "north"}}; the rest take their defaults.',
          params,
          headers: idempotencyHeaders,
          body: runNowBody,
          response: { 201: runSchema, ...errors },
        },
      },
      async (request, reply) => {
        const { run, replayed } = await runs.runNow(
          services,
          ownerOf(request),
          request.params.id,
          request.headers['idempotency-key'],
          log(request),
          request.body?.parameters,
        );
        if (replayed) reply.header('idempotent-replayed', 'true');
        return reply.code(201).send(representRun(run));
      },
    );

    app.get(
      route('/:id/runs'),
      {
        config: { auth: { scopes: ['jobs:read'] } },
        schema: { hide, tags, summary: "List a Job's Runs, newest first", params, querystring: runsQuery, response: { 200: pageOf(runSchema), ...errors } },
      },
      async (request) => pageView(await runs.listRuns(services, ownerOf(request), request.params.id, request.query), representRun),
    );

    app.get(
      route('/:id/runs/:runId'),
      {
        config: { auth: { scopes: ['jobs:read'] } },
        schema: { hide, tags, summary: 'One Run', params: runParams, response: { 200: runSchema, ...errors } },
      },
      async (request) => representRun(await runs.showRun(services, ownerOf(request), request.params.id, request.params.runId)),
    );

    if (!hide) {
      app.get(
        '/runs',
        {
          config: { auth: { scopes: ['jobs:read'] } },
          schema: {
            tags,
            summary: "List your Runs of every Job, a deleted Job's too (until retention removes them), newest first",
            querystring: runsQuery.extend({ job_id: z.string().min(1).max(100).optional().describe('Only Runs of this Job') }),
            response: { 200: pageOf(runSchema), ...errors },
          },
        },
        async (request) => pageView(await runs.listAllRuns(services, ownerOf(request), request.query), representRun),
      );
    }

    app.post(
      route('/:id/runs/:runId/retry'),
      {
        config: { auth: { scopes: ['jobs:run'] } },
        schema: {
          hide,
          tags,
          summary: 'Retry a failed Run: a new Run of the Job as it is now (or, with definition original, as the failed Run ran it), linked to it',
          params: runParams,
          body: retryBody,
          response: { 201: runSchema, ...errors },
        },
      },
      async (request, reply) => {
        const run = await runs.retryRun(services, ownerOf(request), request.params.id, request.params.runId, log(request), request.body?.definition);
        return reply.code(201).send(representRun(run));
      },
    );

    app.post(
      route('/:id/webhook'),
      {
        config: { auth: { scopes: ['jobs:write'] } },
        schema: {
          hide,
          tags,
          summary: "Issue or rotate the Job's webhook trigger: answers its URL and a new secret, shown once (the old secret stops working)",
          params,
          body: webhookBody,
          response: { 201: issuedWebhook, ...errors },
        },
      },
      async (request, reply) => {
        const issued = await webhooks.issueWebhook(services, ownerOf(request), request.params.id, request.body?.auth ?? 'hmac');
        return reply.code(201).send({ url: webhookUrl(originOf(request), request.params.id), ...issued });
      },
    );

    app.delete(
      route('/:id/webhook'),
      {
        config: { auth: { scopes: ['jobs:write'] } },
        schema: { hide, tags, summary: "Revoke the Job's webhook trigger", params, response: { 204: z.null().describe('Revoked'), ...errors } },
      },
      async (request, reply) => {
        await webhooks.revokeWebhook(services, ownerOf(request), request.params.id);
        return reply.code(204).send(null);
      },
    );
  };
}

/** The internal compatibility aliases: /api/v1/pipelines/... answers like /api/v1/jobs/... */
export const pipelineAliasRoutes = (services: Services) => jobRoutes(services, 'pipelines');
