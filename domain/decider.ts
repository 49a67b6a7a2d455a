/** An aggregate as a pure function pair: decide what happens, evolve the state from what happened. */
export interface Decider<Command, State, Event extends { type: string; data: object }> {
  initialState: () => State;
  decide: (command: Command, state: State) => Event[];
  evolve: (state: State, event: Event) => State;
  /**
   * Set for an aggregate whose stream grows for as long as it lives (a Job records every Run):
   * its state is then saved as a snapshot now and then and loaded from there. The state must
   * survive JSON as it is; change the version whenever `evolve` or the state's shape changes, so
   * that snapshots folded by the old code are ignored.
   */
  snapshotVersion?: string;
}

/** Exhaustiveness check at the end of a switch over a union. */
export function unreachable(value: never): never {
  throw new Error(`unhandled case ${JSON.stringify(value)}`);
}

/** The state a history leads to: every event evolved in order from the initial state. */
export function fold<C, S, E extends { type: string; data: object }>(decider: Decider<C, S, E>, events: readonly E[]): S {
  return events.reduce(decider.evolve, decider.initialState());
}
