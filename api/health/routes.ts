import type { FastifyInstance } from 'fastify';
import { readiness } from '../../application/health.js';
import type { Services } from '../../application/services.js';

/** Liveness and readiness for process managers and load balancers; outside /api/v1. */
export function registerHealth(app: FastifyInstance, services: Services): void {
  app.get('/healthz', { config: { auth: { public: true } }, schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: { auth: { public: true } }, schema: { hide: true } }, async (_request, reply) => {
    const { ready, checks } = await readiness(services);
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
  });
}
