import type { FastifyInstance } from 'fastify';
import { sql } from 'slonik';
import type { Services } from '../../application/services.js';
import type { DatabaseWatch } from '../../platform/database-watch.js';

/** A check that does not answer within this long counts as unreachable (a partition drops packets silently). */
const CHECK_TIMEOUT_MS = 3_000;
const within = <T>(work: Promise<T>) =>
  Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer')), CHECK_TIMEOUT_MS).unref())]);

/** Liveness and readiness for process managers and load balancers; outside /api/v1. */
export function registerHealth(app: FastifyInstance, services: Services, database?: DatabaseWatch): void {
  app.get('/healthz', { config: { auth: { public: true } }, schema: { hide: true } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { config: { auth: { public: true } }, schema: { hide: true } }, async (_request, reply) => {
    const checks: Record<string, string> = {};
    const check = (name: string, work: () => Promise<unknown>) =>
      within(work()).then(
        () => (checks[name] = 'ok'),
        () => (checks[name] = 'unreachable'),
      );
    // The database watch already knows when the database does not answer: no need to wait for it.
    const watched = database && !database.reachable();
    if (watched) checks.database = 'unreachable';
    await Promise.all([
      watched ? undefined : check('database', () => services.pool.query(sql.unsafe`SELECT 1`)),
      check('event_store', () => services.store.readAll(0n, 1)),
      services.temporal ? check('temporal', () => services.temporal!.workflowService.getSystemInfo({})) : undefined,
    ]);
    const ready = Object.values(checks).every((v) => v === 'ok');
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', checks });
  });
}
