import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Services } from '../../application/services.js';
import * as webhooks from '../../application/webhooks.js';
import { runTriggers } from '../../domain/runs/triggers.js';
import { runStatuses } from '../../domain/runs/statuses.js';
import { errorEnvelope } from '../errors.js';

const params = z.object({ id: z.string().min(1).max(100) });
const headers = z.looseObject({
  'x-geoflow-delivery': z
    .string()
    .min(1)
    .max(255)
    .regex(/^[\x21-\x7e]+$/, 'printable ASCII without spaces')
    .optional()
    .describe('Your delivery id: the same id within 24 hours answers the Run the first call started'),
  'x-geoflow-timestamp': z.string().max(20).optional().describe('hmac: Unix seconds, within 5 minutes of the server clock'),
  'x-geoflow-signature': z.string().max(200).optional().describe('hmac: sha256=<hex HMAC-SHA256 of "<timestamp>.<delivery id>.<body>" with the secret>'),
});
const started = z
  .object({
    id: z.string(),
    job_id: z.string(),
    status: z.enum(runStatuses),
    trigger: z.enum(runTriggers),
    parameters: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
    delivery_id: z.string().nullable(),
    created_at: z.string(),
  })
  .meta({ id: 'WebhookRun' });
const errors = { 401: errorEnvelope, 404: errorEnvelope, 409: errorEnvelope, 422: errorEnvelope };

/** The raw bytes of each call's body: the signature is over them, not over a re-serialization. */
const rawBodies = new WeakMap<object, Buffer>();

/**
 * /hooks/jobs/{id}: a Job's inbound webhook (application/webhooks.ts), authenticated by the Job's
 * own secret, not by a user's token. Public to the authenticator; its own plugin reads bodies
 * of any type as bytes.
 */
export function hookRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (request, body, done) => {
      rawBodies.set(request, body as Buffer);
      done(null, undefined);
    });
    app.post(
      '/hooks/jobs/:id',
      {
        config: { auth: { public: true } },
        schema: {
          tags: ['Jobs'],
          summary: "Start a Run through the Job's webhook trigger (its own secret: signed with HMAC, or as a bearer token)",
          description:
            'The body is empty or {"parameters": {…}}. Authentication: see the Job\'s webhook (docs/jobs.md, "Webhook trigger"). A wrong or missing signature or token is 401 and starts nothing; a disabled Job is 409.',
          security: [],
          params,
          headers,
          response: { 201: started, ...errors },
        },
      },
      async (request, reply) => {
        const { run, replayed } = await webhooks.triggerByWebhook(
          services,
          {
            jobId: request.params.id,
            authorization: request.headers.authorization,
            signature: request.headers['x-geoflow-signature'],
            timestamp: request.headers['x-geoflow-timestamp'],
            deliveryId: request.headers['x-geoflow-delivery'],
            rawBody: rawBodies.get(request) ?? Buffer.alloc(0),
          },
          request.log,
        );
        if (replayed) reply.header('idempotent-replayed', 'true');
        return reply.code(201).send({
          id: run.id,
          job_id: run.job_id,
          status: run.status,
          trigger: run.trigger,
          parameters: run.parameters,
          delivery_id: run.delivery_id,
          created_at: run.created_at,
        });
      },
    );
  };
}
