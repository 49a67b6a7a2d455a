import { expect } from 'vitest';
import { fold, type Decider } from '../../domain/decider.js';
import { DomainError } from '../../domain/errors.js';

/**
 * Given / when / then for a decider's unit specs: given a history, when a command is decided,
 * then these events, nothing, or a refusal with this code. Pure: no store, no clock.
 *
 *   const { given } = deciderSpec(runDecider);
 *   given([queued, failed]).when(retry).then([{ type: 'RunRetried', data: … }]);
 *   given([queued]).when(retry).thenRefuses('conflict', /only a failed Run/);
 */
export function deciderSpec<C, S, E extends { type: string; data: object }>(decider: Decider<C, S, E>) {
  /** The state after a history. */
  const state = (history: readonly E[]) => fold(decider, history);
  /** What the decider answers to a command after a history. */
  const decide = (history: readonly E[], command: C) => decider.decide(command, state(history));
  /** Decides commands in order, each after what the ones before appended: the whole history. */
  const play = (commands: readonly C[], history: readonly E[] = []) => {
    const all = [...history];
    for (const command of commands) all.push(...decide(all, command));
    return all;
  };

  const given = (history: readonly E[]) => ({
    when: (command: C) => ({
      // biome-ignore lint/suspicious/noThenProperty: given/when/then is the kit's vocabulary; nothing awaits this object.
      then: (expected: E[]) => expect(decide(history, command)).toEqual(expected),
      /** A repeat (a retried activity, a second click): nothing is appended. */
      thenNothing: () => expect(decide(history, command)).toEqual([]),
      thenRefuses: (code: string, message?: RegExp) => {
        let refusal: unknown;
        try {
          decide(history, command);
        } catch (error) {
          refusal = error;
        }
        expect(refusal, 'the decider accepted the command').toBeInstanceOf(DomainError);
        expect((refusal as DomainError).code).toBe(code);
        if (message) expect((refusal as DomainError).message).toMatch(message);
      },
    }),
  });

  return { state, decide, play, given };
}
