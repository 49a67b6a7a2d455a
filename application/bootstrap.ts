import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { closeIdleConnections } from '../connectors/registry.js';
import { closeIsolation } from '../geo/isolation/index.js';
import { setSandboxStaging } from '../geo/sandbox/sandbox.js';
import { configureEgress } from '../connectors/shared/policy/egress.js';
import { createEventStore } from '../eventstore/index.js';
import { createCipher } from '../platform/cipher.js';
import type { Config } from '../platform/config.js';
import { LocalFileStore, type FileStore } from '../platform/file-store.js';
import { S3FileStore, cacheFolderFor, parseStorageUrl } from '../platform/s3-file-store.js';
import { createDatabasePool } from '../platform/db.js';
import { createReadPool } from '../platform/read-pool.js';
import { newId, systemClock } from '../platform/ids.js';
import { createLogger } from '../platform/logger.js';
import { tracingOn } from '../platform/tracing.js';
import { projectors } from '../projections/index.js';
import { ProjectionRunner } from '../projections/runner.js';
import { ensureAdmin } from './accounts.js';
import { internalEndpoints } from './internal-endpoints.js';
import { jobChainReactor } from './job-chains.js';
import { jobScheduleReactor } from './job-schedules.js';
import { runNotificationReactor } from './run-notifications.js';
import { scheduleRunRetention } from './run-retention.js';
import type { Services } from './services.js';
import { scheduleWorkspaceCleanup } from './workspace-cleanup.js';

/** The data folder (one machine), or the S3 bucket of SVC_STORAGE_URL with this process's own cache. */
export async function fileStoreFor(config: Config): Promise<FileStore> {
  if (!config.storage) return new LocalFileStore(config.dataDir);
  const { endpoint, region, forcePathStyle, cacheBytes, credentials } = config.storage;
  return new S3FileStore({
    ...parseStorageUrl(config.storage.url),
    endpoint,
    region,
    forcePathStyle,
    cacheBytes,
    credentials,
    cacheDir: await cacheFolderFor(config.dataDir),
  });
}

export interface ServiceOptions {
  /** Connect a Temporal client (the API starts workflows; scripts and some tests do not). */
  temporal?: boolean;
  /**
   * Keep the read models up to date in this process. The API does (its writes wait for their
   * events to be projected); the worker only appends events and reads streams.
   */
  projections?: boolean;
  /** Create the first user and run the Workspace cleanup (the API's duties). */
  housekeeping?: boolean;
  /** Name in the logs: api, worker, script. */
  name?: string;
}

/**
 * The composition root every process shares: connects the event store, the read-model pool and
 * (optionally) Temporal, prepares the read-model schemas and, for the API, runs the projections,
 * creates the first user and schedules the Workspace cleanup.
 */
export async function createServices(config: Config, options: ServiceOptions = {}): Promise<Services & { close(): Promise<void> }> {
  const { temporal: withTemporal = true, projections: runProjections = true, housekeeping = runProjections } = options;
  const log = createLogger(config.logLevel, options.name ?? 'api');
  // Before anything can call a connector: the operator's lists, and the service's own ports refused.
  await configureEgress({ ...config.outbound, internal: internalEndpoints(config) });
  // Sandboxed programs see their mounts' host paths: give them names that say nothing (geo/sandbox/sandbox.ts).
  setSandboxStaging(path.join(config.dataDir, 'sandbox'));
  const store = createEventStore(config);
  await store.init();
  const pool = await createDatabasePool(config.databaseUrl);
  const reads = createReadPool(config.databaseUrl);
  const projections = new ProjectionRunner(store, pool, projectors, undefined, (error) => log.error({ err: error }, 'projection failed; retrying'));
  await projections.init();
  if (runProjections) projections.start();

  let connection: Connection | undefined;
  let temporal: Client | undefined;
  if (withTemporal) {
    connection = await Connection.connect({ address: config.temporalAddress });
    // Connecting entered the connection's AsyncLocalStorage (for its deadline), which on Node 20
    // makes every promise of the process pay an init hook from then on (see platform/db.ts,
    // inTransaction). The service never calls withDeadline/withMetadata, so the storage is unused.
    connection.callContextStorage.disable();
    // With traces on, a workflow started or signalled here carries the caller's trace (platform/tracing.ts).
    const interceptors = tracingOn()
      ? { workflow: [new (await import('@temporalio/interceptors-opentelemetry')).OpenTelemetryWorkflowClientInterceptor()] }
      : undefined;
    temporal = new Client({ connection, namespace: config.temporalNamespace, ...(interceptors ? { interceptors } : {}) });
  }

  const services: Services = {
    config,
    store,
    pool,
    reads,
    projections,
    log,
    clock: systemClock,
    newId,
    files: await fileStoreFor(config),
    cipher: createCipher(config.secretKey),
    ...(temporal ? { temporal } : {}),
  };
  let stopCleanup = (): void => undefined;
  let stopRetention = (): void => undefined;
  if (runProjections) await projections.waitFor(0n);
  // Reactors follow the events like projections but act on Temporal (the Jobs' Schedules, the
  // Runs of Jobs that run after others); they run with their own runner so that a Temporal
  // outage never holds up read-your-writes.
  let reactors: ProjectionRunner | undefined;
  if (runProjections && temporal) {
    let lastLogged = 0;
    reactors = new ProjectionRunner(
      store,
      pool,
      [jobScheduleReactor(services), jobChainReactor(services), runNotificationReactor(services)],
      undefined,
      (error) => {
        if (Date.now() - lastLogged < 30_000) return;
        lastLogged = Date.now();
        log.warn({ err: error }, 'could not bring the Job schedules or chained Runs in line with Temporal, or start the notifications of a Run; retrying');
      },
    );
    await reactors.init();
    reactors.start();
    services.reactors = reactors;
  }
  if (housekeeping) {
    await ensureAdmin(services);
    stopCleanup = scheduleWorkspaceCleanup(services);
    stopRetention = scheduleRunRetention(services);
  }

  return {
    ...services,
    async close() {
      stopCleanup();
      stopRetention();
      await reactors?.stop();
      await projections.stop();
      await connection?.close();
      // Idle connections a connector keeps to users' databases between transfers.
      await closeIdleConnections();
      // Sandboxed GDAL hosts this process started (geo/isolation/).
      closeIsolation();
      // Slonik's end waits for each connection's query in flight and fails with it: a request's
      // query on a connection the database dropped (a partition, the database's idle-in-transaction
      // limit) would fail the shutdown and leave the pools after it open. That query has failed
      // its own caller already; ending the pools goes on.
      const end = (what: string, ending: () => Promise<void>) =>
        ending().catch((error: unknown) => log.debug({ error: (error as Error).message }, `${what}: a query in flight failed as it ended`));
      await end('the event store', () => store.close());
      await end('the pool', () => pool.end());
      await end('the read pool', () => reads.end());
    },
  };
}
