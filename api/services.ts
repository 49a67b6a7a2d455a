import type { Logger } from 'pino';
import type { DatabasePool } from 'slonik';
import type { EventStore } from '../eventstore/port.js';
import type { Config } from '../platform/config.js';
import type { Clock, IdGenerator } from '../platform/ids.js';
import type { ProjectionRunner } from '../projections/runner.js';
import type { Client as TemporalClient } from '@temporalio/client';

/** What route handlers need, built once by the composition root (api/server.ts) or by tests. */
export interface Services {
  config: Config;
  store: EventStore;
  pool: DatabasePool;
  projections: ProjectionRunner;
  log: Logger;
  clock: Clock;
  newId: IdGenerator;
  /** Absent only in tests that do not exercise Runs. */
  temporal?: TemporalClient;
}
