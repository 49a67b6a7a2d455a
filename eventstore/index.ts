import { KurrentEventStore } from './kurrentdb.js';
import type { EventStore } from './port.js';
import { PostgresEventStore } from './postgres.js';

/** PostgreSQL unless SVC_EVENTSTORE_URL names a KurrentDB/EventStoreDB server. */
export function createEventStore(options: { databaseUrl: string; eventStoreUrl?: string | undefined }): EventStore {
  if (options.eventStoreUrl && /^(esdb|esdb\+discover|kurrentdb|kurrentdb\+discover|kurrent):\/\//.test(options.eventStoreUrl)) {
    return new KurrentEventStore(options.eventStoreUrl);
  }
  return new PostgresEventStore(options.databaseUrl);
}
export * from './port.js';
