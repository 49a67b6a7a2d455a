import type { FastifyInstance } from 'fastify';
import { sql } from 'slonik';
import type { Services } from '../../application/services.js';

/** Liveness and readiness for process managers and load balancers; outside /api/v1. */
export function registerHealth(app: FastifyInstance, services: Services): void {
  app.get('/healthz', { config: { auth: { public: true } }, schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: { auth: { public: true } }, schema: { hide: true } }, async (_request, reply) => {
    const checks: Record<string, string> = {};
    await services.pool.query(sql.unsafe`SELECT 1`).then(
      () => (checks.database = 'ok'),
      () => (checks.database = 'unreachable'),
    );
    await services.store.readAll(0n, 1).then(
      () => (checks.event_store = 'ok'),
      () => (checks.event_store = 'unreachable'),
    );
    if (services.temporal) {
      await services.temporal.workflowService.getSystemInfo({}).then(
        () => (checks.temporal = 'ok'),
        () => (checks.temporal = 'unreachable'),
      );
    }
    const ready = Object.values(checks).every((v) => v === 'ok');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
  });
}
