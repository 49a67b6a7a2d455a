import type { NewEvent } from '../eventstore/port.js';

/** An aggregate as a pure function pair: decide what happens, evolve the state from what happened. */
export interface Decider<Command, State, Event extends { type: string; data: object }> {
  initialState: () => State;
  decide: (command: Command, state: State) => Event[];
  evolve: (state: State, event: Event) => State;
}

export const toNewEvent = (e: { type: string; data: object }): NewEvent => ({
  type: e.type,
  data: e.data as Record<string, unknown>,
});

/** Exhaustiveness check at the end of a switch over a union. */
export function unreachable(value: never): never {
  throw new Error(`unhandled case ${JSON.stringify(value)}`);
}
