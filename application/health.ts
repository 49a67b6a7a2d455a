import { sql } from 'slonik';
import type { Services } from './services.js';

/** Whether this process can serve: its database, its event store and (when it uses one) Temporal, each ok or unreachable. */
export async function readiness(services: Services): Promise<{ ready: boolean; checks: Record<string, string> }> {
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
  return { ready: Object.values(checks).every((v) => v === 'ok'), checks };
}
