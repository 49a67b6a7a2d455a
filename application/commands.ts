import type { Decider } from '../domain/decider.js';
import { decideAndAppend, handleCommand } from '../domain/handler.js';
import type { Services } from './services.js';

/**
 * Runs a command and answers only once the read models have applied its events, so a GET right
 * after the write sees it (read-your-writes). For the API, whose process runs the projections.
 */
export async function execute<C, S, E extends { type: string; data: object }>(
  services: Services,
  streamId: string,
  decider: Decider<C, S, E>,
  command: C,
) {
  const result = await handleCommand(services.store, streamId, decider, command);
  if (result) await services.projections.waitFor(result.position);
  return result;
}

/**
 * Runs a command without waiting for the read models: for activities, which run in the worker.
 * The outcome's position travels back to whoever waits (the API) as a string, since workflow
 * payloads are JSON. A retried activity repeats its command; deciders answer a repeat with no
 * events, so recording is idempotent.
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
