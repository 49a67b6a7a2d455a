import { Client, Connection } from '@temporalio/client';
import { createEventStore } from '../eventstore/index.js';
import type { Config } from '../platform/config.js';
import { createDatabasePool } from '../platform/db.js';
import { newId, systemClock } from '../platform/ids.js';
import { createLogger } from '../platform/logger.js';
import { projectors } from '../projections/index.js';
import { ProjectionRunner } from '../projections/runner.js';
import { ensureAdmin } from './auth/accounts.js';
import { createSessionTable } from './auth/sessions.js';
import { scheduleWorkspaceCleanup } from './workspaces/cleanup.js';
import type { Services } from './services.js';

/**
 * The composition root: connects the event store, the read-model pool and Temporal, prepares
 * the schemas, starts the projection runner and creates the first user.
 */
export async function createServices(config: Config, options: { temporal?: boolean } = {}): Promise<Services & { close(): Promise<void> }> {
  const log = createLogger(config.logLevel, 'api');
  const store = createEventStore(config);
  await store.init();
  const pool = await createDatabasePool(config.databaseUrl);
  await createSessionTable(pool);
  const projections = new ProjectionRunner(store, pool, projectors, undefined, (error) =>
    log.error({ err: error }, 'projection failed; retrying'),
  );
  await projections.init();
  projections.start();

  let connection: Connection | undefined;
  let temporal: Client | undefined;
  if (options.temporal !== false) {
    connection = await Connection.connect({ address: config.temporalAddress });
    temporal = new Client({ connection, namespace: config.temporalNamespace });
  }

  const services: Services = { config, store, pool, projections, log, clock: systemClock, newId, ...(temporal ? { temporal } : {}) };
  await projections.waitFor(0n);
  await ensureAdmin(services);
  const stopCleanup = scheduleWorkspaceCleanup(services);

  return {
    ...services,
    async close() {
      stopCleanup();
      await projections.stop();
      await connection?.close();
      await store.close();
      await pool.end();
    },
  };
}
