import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import * as channels from '../../application/notification-channels.js';
import type { Services } from '../../application/services.js';
import { notifiers } from '../../notifiers/registry.js';
import { nonBlank } from '../../platform/text.js';
import { requirePrincipal } from '../auth/principal.js';
import { errorEnvelope } from '../errors.js';
import { pageOf, pageQuery, pageView } from '../pagination.js';
import { idParam } from '../schemas.js';
import { channelSchema, channelTestSchema, channelTypeCatalog, channelTypeSchema, representChannel } from './representation.js';
import { publicCatalog } from '../public-route.js';

/*
 * /notification-channels: a user's webhooks and email lists, which Jobs subscribe to (the Job
 * body's `notifications`); one use case of application/notification-channels.ts per route.
 */

const errors = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 404: errorEnvelope, 409: errorEnvelope, 422: errorEnvelope };
const tags = ['Notification channels'];

/**
 * A channel's body by type. Secrets are write-only: on replace one left out is kept and null
 * clears it; on create a secret the type needs (a webhook's url) is required, so the document
 * says what the server checks.
 */
const channelBody = (mode: 'create' | 'replace') =>
  z
    .discriminatedUnion(
      'type',
      notifiers.map((n) =>
        z.strictObject({
          name: nonBlank(200),
          type: z.literal(n.type),
          configuration: n.configuration
            .extend(
              Object.fromEntries(
                n.secrets.map((f) => {
                  const field = n.configuration.shape[f]!;
                  // A secret the type needs: required on create; on replace it may be left out
                  // (kept) but not cleared.
                  if (!n.requiredSecrets.includes(f)) return [f, field.nullable()];
                  return [f, mode === 'create' && field instanceof z.ZodOptional ? (field.unwrap() as z.ZodType) : field];
                }),
              ),
            )
            .describe(
              mode === 'create'
                ? `${n.label}: secrets (${n.secrets.join(', ')}) are write-only`
                : `${n.label}: secrets (${n.secrets.join(', ')}) are write-only; omit one to keep it, null clears one the type does not need`,
            ),
        }),
      ) as unknown as [z.ZodObject, ...z.ZodObject[]],
    )
    .meta({ id: mode === 'create' ? 'NotificationChannelBody' : 'NotificationChannelReplaceBody' });
const createBody = channelBody('create');
const replaceBody = channelBody('replace');

export function notificationChannelRoutes(services: Services): FastifyPluginAsyncZod {
  const ownerOf = (request: FastifyRequest) => requirePrincipal(request).userId;
  return async (app) => {
    app.get(
      '/notification-channels',
      {
        config: { auth: { scopes: ['notifications:read'] } },
        schema: { tags, summary: 'List your notification channels', querystring: pageQuery, response: { 200: pageOf(channelSchema), ...errors } },
      },
      async (request) => pageView(await channels.listChannels(services, ownerOf(request), request.query), representChannel),
    );

    app.get(
      '/notification-channels/:id',
      {
        config: { auth: { scopes: ['notifications:read'] } },
        schema: { tags, summary: 'Get a notification channel', params: idParam, response: { 200: channelSchema, ...errors } },
      },
      async (request) => representChannel(await channels.showChannel(services, ownerOf(request), request.params.id)),
    );

    app.post(
      '/notification-channels',
      {
        config: { auth: { scopes: ['notifications:write'] } },
        schema: { tags, summary: 'Create a notification channel', body: createBody, response: { 201: channelSchema, ...errors } },
      },
      async (request, reply) =>
        reply.code(201).send(representChannel(await channels.createChannel(services, ownerOf(request), request.body as channels.ChannelBody))),
    );

    app.put(
      '/notification-channels/:id',
      {
        config: { auth: { scopes: ['notifications:write'] } },
        schema: {
          tags,
          summary: 'Replace a notification channel (secrets left out are kept; null clears one)',
          params: idParam,
          body: replaceBody,
          response: { 200: channelSchema, ...errors },
        },
      },
      async (request) => representChannel(await channels.updateChannel(services, ownerOf(request), request.params.id, request.body as channels.ChannelBody)),
    );

    app.delete(
      '/notification-channels/:id',
      {
        config: { auth: { scopes: ['notifications:write'] } },
        schema: {
          tags,
          summary: 'Delete a notification channel (409 while a Job is subscribed to it)',
          params: idParam,
          response: { 204: z.null().describe('Deleted'), ...errors },
        },
      },
      async (request, reply) => {
        await channels.deleteChannel(services, ownerOf(request), request.params.id);
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/notification-channels/:id/test',
      {
        config: { auth: { scopes: ['notifications:write'] } },
        schema: { tags, summary: 'Send a test notification through a channel now', params: idParam, response: { 200: channelTestSchema, ...errors } },
      },
      async (request) => channels.testChannel(services, ownerOf(request), request.params.id),
    );
  };
}

/** GET /api/v1/notification-channel-types: the channel types and their configuration (JSON Schema), public like /connectors. */
export function channelTypeRoutes(): FastifyPluginAsyncZod {
  return publicCatalog(
    '/notification-channel-types',
    'Notification channel types: their configuration (JSON Schema) and secrets',
    channelTypeSchema,
    channelTypeCatalog(),
  );
}
