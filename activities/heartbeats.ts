import { Context } from '@temporalio/activity';

import type { StepProgress } from '../domain/runs/facts.js';

export interface Heartbeats {
  /** The latest progress; sent with the next heartbeat. */
  progress(update: StepProgress): void;
  /** What was last reported. */
  latest(): StepProgress | null;
  stop(): void;
}

/**
 * Heartbeats an activity at a quarter of its heartbeat timeout (at most every 5 s), carrying the
 * latest progress. GDAL work runs in child processes (geo/gdal/translate.ts), so this timer
 * keeps firing however long a write or an index build takes. `mirror` also gets every update
 * (application/operation-progress.ts, for a request whose caller follows its progress).
 */
export function startHeartbeats(heartbeatTimeoutMs: number, mirror?: (update: StepProgress) => void): Heartbeats {
  const context = Context.current();
  let latest: StepProgress | null = null;
  const beat = () => context.heartbeat(latest ?? undefined);
  const timer = setInterval(beat, Math.max(200, Math.min(5_000, Math.floor(heartbeatTimeoutMs / 4))));
  return {
    progress(update) {
      latest = { ...(latest ?? {}), ...update };
      beat();
      // Where the caller of a synchronous request follows it (GET /api/v1/progress/{id}).
      mirror?.(update);
    },
    latest: () => latest,
    stop: () => clearInterval(timer),
  };
}
