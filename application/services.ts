import type { Client as TemporalClient } from '@temporalio/client';
import type { Logger } from 'pino';
import type { DatabasePool } from 'slonik';
import type { EventStore } from '../eventstore/port.js';
import type { Cipher } from '../platform/cipher.js';
import type { Config } from '../platform/config.js';
import type { FileStore } from '../platform/file-store.js';
import type { Clock, IdGenerator } from '../platform/ids.js';
import type { ReadPool } from '../platform/read-pool.js';
import type { ProjectionRunner } from '../projections/runner.js';

/**
 * The application services: built once per process by createServices (application/bootstrap.ts)
 * and shared by the API's routes, the worker's activities and the command-line scripts.
 */
export interface Services {
  config: Config;
  store: EventStore;
  /** The read-model pool (slonik). */
  pool: DatabasePool;
  /** Hot single-row reads of the read models on plain `pg` (platform/read-pool.ts says when). */
  reads: ReadPool;
  projections: ProjectionRunner;
  log: Logger;
  clock: Clock;
  newId: IdGenerator;
  /** The files of Workspaces and Runs (folders under the data folder). */
  files: FileStore;
  /** Seals and opens connection secrets (AES-256-GCM with the service key). */
  cipher: Cipher;
  /** Absent where Temporal is not needed (scripts, tests that do not exercise Runs). */
  temporal?: TemporalClient;
  /** The API's reactors (the Jobs' Temporal Schedules), when it runs them. */
  reactors?: ProjectionRunner;
}
