import type { AppendResult, EventStore } from '../eventstore/port.js';
import { toNewEvent, type Decider } from './decider.js';

/**
 * Load → decide → append with the revision that was loaded. A concurrent writer makes the
 * append fail with WrongExpectedRevisionError, which the API answers with 409 conflict.
 * Returns null when the decision was to do nothing.
 */
export async function handleCommand<C, S, E extends { type: string; data: object }>(
  store: EventStore,
  streamId: string,
  decider: Decider<C, S, E>,
  command: C,
): Promise<(AppendResult & { events: E[] }) | null> {
  const history = await store.readStream(streamId);
  const state = history.reduce((s, e) => decider.evolve(s, e as unknown as E), decider.initialState());
  const events = decider.decide(command, state);
  if (events.length === 0) return null;
  const expected = history.length === 0 ? 'no_stream' : history[history.length - 1]!.revision;
  const result = await store.appendToStream(streamId, events.map(toNewEvent), expected);
  return { ...result, events };
}
