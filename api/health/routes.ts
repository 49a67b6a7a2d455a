import type { FastifyInstance } from 'fastify';
import { readiness } from '../../application/health.js';
import type { Services } from '../../application/services.js';
import type { DatabaseWatch } from '../../platform/database-watch.js';

/** Liveness and readiness for process managers and load balancers; outside /api/v1. */
export function registerHealth(app: FastifyInstance, services: Services, database?: DatabaseWatch): void {
  app.get('/healthz', { config: { auth: { public: true } }, schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: { auth: { public: true } }, schema: { hide: true } }, async (_request, reply) => {
    // The database watch already knows when the database does not answer: no need to wait for it.
    const { ready, checks } = await readiness(services, { databaseUnreachable: database ? !database.reachable() : false });
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
  });
}
