import type { EventStore } from '../eventstore/port.js';
import { toNewEvent, type Decider } from './decider.js';

export interface CommandOutcome<S, E> {
  /** What was appended (empty when the decision was to do nothing, e.g. a repeated command). */
  events: E[];
  /** The aggregate's state after the command. */
  state: S;
  /** Global position of the stream's last event after the command (0 for a stream still empty). */
  position: bigint;
}

/**
 * Load → decide → append with the revision that was loaded. A concurrent writer makes the
 * append fail with WrongExpectedRevisionError, which the API answers with 409 conflict.
 * Always says where the stream stands afterwards, so a repeated command (a retried activity that
 * the decider answers with no events) can still wait for the read models to reach it.
 */
export async function decideAndAppend<C, S, E extends { type: string; data: object }>(
  store: EventStore,
  streamId: string,
  decider: Decider<C, S, E>,
  command: C,
): Promise<CommandOutcome<S, E>> {
  const history = await store.readStream(streamId);
  const state = history.reduce((s, e) => decider.evolve(s, e as unknown as E), decider.initialState());
  const events = decider.decide(command, state);
  const last = history[history.length - 1];
  if (events.length === 0) return { events, state, position: last?.position ?? 0n };
  const expected = last ? last.revision : 'no_stream';
  const result = await store.appendToStream(streamId, events.map(toNewEvent), expected);
  return { events, state: events.reduce(decider.evolve, state), position: result.position };
}

/** decideAndAppend for callers that only care about what was appended: null when nothing was. */
export async function handleCommand<C, S, E extends { type: string; data: object }>(
  store: EventStore,
  streamId: string,
  decider: Decider<C, S, E>,
  command: C,
): Promise<{ events: E[]; position: bigint } | null> {
  const outcome = await decideAndAppend(store, streamId, decider, command);
  if (outcome.events.length === 0) return null;
  return { events: outcome.events, position: outcome.position };
}
