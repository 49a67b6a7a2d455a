import { afterMatches, MAX_CHAIN_DEPTH } from '../domain/jobs/triggers.js';
import { runDecider, runStream } from '../domain/runs/run.js';
import { followersOf } from '../projections/jobs.js';
import type { Projector } from '../projections/projector.js';
import { load } from './commands.js';
import { derivedRunId, requestAutomatedRun } from './runs.js';
import type { Services } from './services.js';

/*
 * After-triggers: when a Run ends, the Jobs that run after its Job (triggers.after names it, with
 * that end) are asked for a Run each, with trigger `after` and `triggered_by` naming the Run
 * that ended. A reactor like the Schedules' (application/job-schedules.ts): it follows the event
 * store with its own checkpoint, so an API that was down when a Run ended starts its followers
 * when it is back, and a Temporal outage only delays them. The follower's Run id is derived from
 * the upstream Run and the follower, so a replayed event asks for the same Run. A Run that ended
 * longer ago than the catch-up window (SVC_SCHEDULE_CATCHUP_MIN: an API down for longer, or the
 * reactor replaying history after a change of its version) starts nothing.
 */

const ends = new Set(['RunSucceeded', 'RunFailed']);

type ChainServices = Pick<Services, 'store' | 'clock' | 'pool' | 'temporal' | 'config' | 'log'>;

/** Asks the followers of a Run's Job for their Runs; returns the Runs asked for. */
export async function startFollowers(services: ChainServices, runId: string, skippedReason: string | null): Promise<string[]> {
  const { state: run } = await load(services, runStream(runId), runDecider);
  if (run.status === 'absent') return [];
  const depth = (run.triggeredBy?.depth ?? 0) + 1;
  const started: string[] = [];
  for (const follower of await followersOf(services.pool, run.ownerId, run.jobId)) {
    if (!follower.enabled || !afterMatches(follower.when, run.status, skippedReason)) continue;
    if (depth > MAX_CHAIN_DEPTH) {
      services.log.warn({ jobId: follower.id, runId }, `after-trigger not followed: the chain is longer than ${MAX_CHAIN_DEPTH} Runs`);
      continue;
    }
    const requested = await requestAutomatedRun(services, {
      runId: derivedRunId(`after\n${runId}\n${follower.id}`),
      jobId: follower.id,
      ownerId: run.ownerId,
      trigger: 'after',
      retryOf: null,
      scheduledFor: null,
      triggeredBy: { job_id: run.jobId, run_id: runId, depth },
    });
    if (requested.runId) started.push(requested.runId);
  }
  return started;
}

export function jobChainReactor(services: ChainServices): Projector {
  return {
    name: 'job-chains',
    version: 1,
    tables: [],
    // The followers and the queues it reads are those of the events it handles.
    follows: ['jobs', 'runs'],
    async createTables() {
      /* state lives in the event store and Temporal */
    },
    async apply(_tx, _schema, event) {
      if (!ends.has(event.type)) return;
      if (services.clock().getTime() - Date.parse(String(event.data.at)) > services.config.scheduleCatchupMs) return;
      const skipped = event.type === 'RunSucceeded' ? ((event.data.skipped_reason as string | null) ?? null) : null;
      await startFollowers(services, String(event.data.run_id), skipped);
    },
  };
}
