import type { Decider } from '../domain/decider.js';
import { handleCommand } from '../domain/handler.js';
import type { Services } from './services.js';

/**
 * Runs a command and answers only once the read models have applied its events, so a GET right
 * after the write sees it (read-your-writes).
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
