import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import * as schedules from '../../application/schedules.js';
import type { Services } from '../../application/services.js';
import { errorEnvelope } from '../errors.js';
import { scheduleBody, scheduleSchema } from '../jobs/automation-schemas.js';
import { timestamp } from '../schemas.js';

const previewBody = z
  .object({
    schedule: scheduleBody,
    count: z.number().int().min(1).max(100).default(5).describe('How many fire times (default 5)'),
    after: z.iso.datetime({ offset: true }).optional().describe('List the fire times after this instant (default: now)'),
  })
  .strict();
const preview = z
  .object({
    schedule: scheduleSchema.describe('The schedule as a Job would store it (timezone canonical, days sorted)'),
    description: z.string().describe('The schedule in words'),
    next_run_times: z.array(timestamp),
  })
  .meta({ id: 'SchedulePreview' });
const errors = { 400: errorEnvelope, 401: errorEnvelope, 403: errorEnvelope, 422: errorEnvelope };

/** /schedules/preview: when a schedule would fire, before a Job is saved with it (application/schedules.ts). */
export function scheduleRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/schedules/preview',
      {
        config: { auth: { scopes: ['jobs:read'] } },
        schema: {
          tags: ['Jobs'],
          summary: 'Preview a schedule: checked as a Job save checks it, with its next fire times',
          body: previewBody,
          response: { 200: preview, ...errors },
        },
      },
      async (request) => schedules.previewSchedule(services, request.body),
    );
  };
}
