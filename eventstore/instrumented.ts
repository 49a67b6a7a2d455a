import { metrics } from '../platform/metrics.js';
import { internalWork } from '../platform/tracing.js';
import { WrongExpectedRevisionError, type EventStore } from './port.js';

/**
 * The event store as the processes use it: each append timed (geoflow_eventstore_append_seconds,
 * by outcome: ok, conflict for a lost optimistic race, error), and every call marked as the
 * service's own database work, so that a step's progress note during a delivery is not counted
 * among the Destination's statements (platform/tracing.ts). The adapters stay as they are.
 */
export function instrumented(store: EventStore): EventStore {
  const { appendToStream, readStream, readFromSnapshot, saveSnapshot, readAll } = store;
  const own =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A) =>
      internalWork(() => call.apply(store, args));
  store.readStream = own(readStream);
  store.readFromSnapshot = own(readFromSnapshot);
  store.saveSnapshot = own(saveSnapshot);
  store.readAll = own(readAll);
  store.appendToStream = async (...args) => {
    const began = performance.now();
    let outcome = 'error';
    try {
      const result = await internalWork(() => appendToStream.apply(store, args));
      outcome = 'ok';
      return result;
    } catch (error) {
      if (error instanceof WrongExpectedRevisionError) outcome = 'conflict';
      throw error;
    } finally {
      metrics.appendDuration.observe({ store: store.kind, outcome }, (performance.now() - began) / 1000);
    }
  };
  return store;
}
