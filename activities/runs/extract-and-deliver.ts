import type { Services } from '../../application/services.js';
import { deliverWork } from './deliver.js';
import { extractWork, type ExtractOutcome } from './extract.js';
import type { StepServices } from './step-services.js';
import { runStep } from './steps.js';

export function extractAndDeliverActivities(services: StepServices & Pick<Services, 'cipher'>) {
  const { files } = services;
  return {
    /**
     * Extract and deliver in one activity, for a Job with no step between them: the extracted
     * file goes straight from this worker's disk to the Destination, with one activity fewer to
     * schedule and, with object storage, no upload of the file for a next step elsewhere. Each
     * step is still recorded as its own. A retried attempt extracts again (the Run's sync cursor
     * is the one it started with) and delivers under the same delivery id, so rows land once.
     * Having succeeded, it removes the Run's files itself (the workflow then skips cleanupRun),
     * without waiting: the Run is done with them, and the removal is then off the Run's path (the
     * API's cleanup sweep removes whatever a crash leaves behind).
     */
    async extractAndDeliverStep(input: { runId: string }): Promise<Omit<ExtractOutcome, 'artifact'>> {
      const extracted = await runStep(services, input.runId, 'extract', extractWork(services, input.runId), false);
      if (!extracted.unchanged) await runStep(services, input.runId, 'deliver', deliverWork(services, input.runId, extracted.artifact));
      files
        .remove(input.runId)
        .catch((error: unknown) => services.log.warn({ runId: input.runId, err: error }, 'could not remove the files of a finished Run'));
      return { unchanged: extracted.unchanged, sync: extracted.sync };
    },
  };
}
