import type { Services } from '../../application/services.js';
import { bookkeepingActivities } from './bookkeeping.js';
import { convertActivities } from './convert.js';
import { deliverActivities } from './deliver.js';
import { extractAndDeliverActivities } from './extract-and-deliver.js';
import { extractActivities } from './extract.js';
import { pipelineActivities } from './pipeline.js';

/**
 * The activities of a Run (workflows/run-job.ts), one file a step: the Run's bookkeeping
 * (bookkeeping.ts), extract, transform and python (pipeline.ts), convert, deliver, and extract
 * with deliver in one activity; steps.ts is what every step shares (its folder, heartbeats,
 * progress, the recording of its start and finish). Sources and Destinations are opened, and
 * their secrets decrypted, here on the worker: payloads carry ids and relative paths only.
 */
export function runActivities(services: Services) {
  return {
    ...bookkeepingActivities(services),
    ...extractActivities(services),
    ...pipelineActivities(services),
    ...convertActivities(services),
    ...deliverActivities(services),
    ...extractAndDeliverActivities(services),
  };
}
