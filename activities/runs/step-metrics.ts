import { describeConnection } from '../../application/connections.js';
import type { StepName } from '../../domain/jobs/definition.js';
import type { ExistingRun } from '../../domain/runs/state.js';
import { metrics } from '../../platform/metrics.js';
import type { StepServices } from './step-services.js';

export type StepOutcome = 'succeeded' | 'skipped' | 'failed' | 'cancelled';

/** Connection id → type: a connection's type never changes, so each is looked up once per process. */
const types = new Map<string, Promise<string>>();
const KEPT = 2000;

/** The connector a step talks to: the Source's type for extract, the Destination's for deliver, `none` for the rest. */
function connectorOf(services: StepServices, name: StepName, run: ExistingRun | null): Promise<string> {
  const kind = name === 'extract' ? 'source' : name === 'deliver' ? 'destination' : null;
  if (!kind) return Promise.resolve('none');
  const id = kind === 'source' ? run?.snapshot.source_id : run?.snapshot.destination_id;
  if (!run || !id) return Promise.resolve('unknown');
  let type = types.get(id);
  if (!type) {
    if (types.size >= KEPT) types.clear();
    type = describeConnection(services, kind, id, run.ownerId).then(
      (c) => c.type,
      () => {
        // Deleted meanwhile, or unreadable right now: asked again next time.
        types.delete(id);
        return 'unknown';
      },
    );
    types.set(id, type);
  }
  return type;
}

/**
 * One attempt of a step in geoflow_run_step_duration_seconds. The connector's type is looked up
 * after the step, off its path (the first step of a connection reads its stream; later ones hit
 * the cache).
 */
export function observeStep(services: StepServices, name: StepName, run: ExistingRun | null, outcome: StepOutcome, seconds: number): void {
  void connectorOf(services, name, run).then((connector) => metrics.stepDuration.observe({ step: name, connector, outcome }, seconds));
}
