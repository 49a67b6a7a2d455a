import { instrumented } from './instrumented.js';
import { KurrentEventStore } from './kurrentdb.js';
import type { EventStore } from './port.js';
import { PostgresEventStore } from './postgres.js';

/** PostgreSQL unless SVC_EVENTSTORE_URL names a KurrentDB/EventStoreDB server; appends timed (./instrumented.ts). */
export function createEventStore(options: { databaseUrl: string; eventStoreUrl?: string | undefined }): EventStore {
  if (options.eventStoreUrl && /^(esdb|esdb\+discover|kurrentdb|kurrentdb\+discover|kurrent):\/\//.test(options.eventStoreUrl)) {
    return instrumented(new KurrentEventStore(options.eventStoreUrl));
  }
  return instrumented(new PostgresEventStore(options.databaseUrl));
}
export * from './port.js';
