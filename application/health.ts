import { sql } from 'slonik';
import type { Services } from './services.js';

/** A check that does not answer within this long counts as unreachable (a partition drops packets silently). */
const CHECK_TIMEOUT_MS = 3_000;
const within = <T>(work: Promise<T>) =>
  Promise.race([work, new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no answer')), CHECK_TIMEOUT_MS).unref())]);

/**
 * Whether this process can serve: its database, its event store and (when it uses one) Temporal,
 * each ok or unreachable, checked side by side and each within 3 s. `databaseUnreachable`: the
 * caller knows already (the API's database watch), so that check is not waited for.
 */
export async function readiness(
  services: Services,
  options: { databaseUnreachable?: boolean } = {},
): Promise<{ ready: boolean; checks: Record<string, string> }> {
  const checks: Record<string, string> = {};
  const check = (name: string, work: () => Promise<unknown>) =>
    within(work()).then(
      () => (checks[name] = 'ok'),
      () => (checks[name] = 'unreachable'),
    );
  if (options.databaseUnreachable) checks.database = 'unreachable';
  await Promise.all([
    options.databaseUnreachable ? undefined : check('database', () => services.pool.query(sql.unsafe`SELECT 1`)),
    check('event_store', () => services.store.readAll(0n, 1)),
    services.temporal ? check('temporal', () => services.temporal!.workflowService.getSystemInfo({})) : undefined,
  ]);
  return { ready: Object.values(checks).every((v) => v === 'ok'), checks };
}
