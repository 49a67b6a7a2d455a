import type { Decider } from '../domain/decider.js';
import type { EventStore, ExpectedRevision, NewEvent } from '../eventstore/port.js';
import { runStream } from '../domain/runs/run.js';
import type { RunState } from '../domain/runs/state.js';
import { observeRunEvents } from './run-metrics.js';
import type { Services } from './services.js';

/*
 * The one way an aggregate is read and written: `load` reads its stream and folds it into state;
 * `execute` (the API) and `record` (activities) run a command through its pure decider and append
 * what it decided with the revision that was loaded.
 */

export interface Loaded<S> {
  state: S;
  /** Revision of the stream's last event, or 'no_stream' for a stream still empty. */
  revision: ExpectedRevision;
  /** Global position of the stream's last event (0 for a stream still empty). */
  position: bigint;
}

/** A decided event as the event store appends it. */
const toNewEvent = (e: { type: string; data: object }): NewEvent => ({
  type: e.type,
  data: e.data as Record<string, unknown>,
});

const RUN_STREAMS = runStream('');

/** Events folded past a stream's snapshot before the load saves a new one. */
export const SNAPSHOT_EVERY = 100;

/** An aggregate as its events leave it (from its snapshot, for a decider that keeps them). */
export async function load<C, S, E extends { type: string; data: object }>(
  services: Pick<Services, 'store'>,
  streamId: string,
  decider: Decider<C, S, E>,
): Promise<Loaded<S>> {
  const version = decider.snapshotVersion;
  // A decider with a snapshot version reads its latest snapshot and the events after it; one without reads the whole stream.
  const { snapshot, events } = version
    ? await services.store.readFromSnapshot(streamId, version)
    : { snapshot: null, events: await services.store.readStream(streamId) };
  const state = (events as unknown as E[]).reduce(decider.evolve, snapshot ? (snapshot.state as S) : decider.initialState());
  const last = events[events.length - 1];
  const revision = last ? last.revision : snapshot ? snapshot.revision : 'no_stream';
  const position = last?.position ?? snapshot?.position ?? 0n;
  if (version && last && events.length >= SNAPSHOT_EVERY) {
    // A cache, so a failure to save it is no failure of the load.
    await services.store.saveSnapshot(streamId, version, { revision: last.revision, position: last.position, state }).catch(() => undefined);
  }
  return { state, revision, position };
}

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
async function decideAndAppend<C, S, E extends { type: string; data: object }>(
  store: EventStore,
  streamId: string,
  decider: Decider<C, S, E>,
  command: C,
): Promise<CommandOutcome<S, E>> {
  const { state, revision, position } = await load({ store }, streamId, decider);
  const events = decider.decide(command, state);
  if (events.length === 0) return { events, state, position };
  const result = await store.appendToStream(streamId, events.map(toNewEvent), revision);
  // A Run's counters (started, finished, lateness) follow what was appended, once per change.
  if (streamId.startsWith(RUN_STREAMS)) observeRunEvents(state as RunState, events);
  return { events, state: events.reduce(decider.evolve, state), position: result.position };
}

/**
 * Runs a command and answers only once the read models have applied its events, so a GET right
 * after the write sees it (read-your-writes). For the API, whose process runs the projections.
 * Null when the decider appended nothing.
 */
export async function execute<C, S, E extends { type: string; data: object }>(
  services: Pick<Services, 'store' | 'projections'>,
  streamId: string,
  decider: Decider<C, S, E>,
  command: C,
): Promise<{ events: E[]; position: bigint } | null> {
  const outcome = await decideAndAppend(services.store, streamId, decider, command);
  if (outcome.events.length === 0) return null;
  await services.projections.waitFor(outcome.position);
  return { events: outcome.events, position: outcome.position };
}

/**
 * Runs a command without waiting for the read models: for activities, which run in the worker,
 * and for writes nobody waits on. The outcome's position travels back to whoever waits (the API)
 * as a string, since workflow payloads are JSON. A retried activity repeats its command; deciders
 * answer a repeat with no events, so recording is idempotent.
 */
export async function record<C, S, E extends { type: string; data: object }>(
  services: Pick<Services, 'store'>,
  streamId: string,
  decider: Decider<C, S, E>,
  command: C,
) {
  const outcome = await decideAndAppend(services.store, streamId, decider, command);
  return { ...outcome, position: outcome.position.toString() };
}
