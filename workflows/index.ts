import { proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { timeouts } from '../temporal/timeouts.js';

export { convertWorkspaceWorkflow } from './workspace-convert.js';
export { deliverWorkspaceWorkflow } from './workspace-deliver.js';
export { jobRunsWorkflow } from './job-runs.js';
export { notifyRunWorkflow } from './notify-run.js';
export { runJobWorkflow } from './run-job.js';
export { scheduledRunWorkflow } from './scheduled-run.js';
export { watchSourceWorkflow } from './watch-source.js';

const { describeWorker } = proxyActivities<Activities>(timeouts.quick);

/**
 * Proves the worker is wired end to end: the API (or a test) starts it, the worker runs an
 * activity that touches GDAL, and the result comes back through Temporal.
 */
export async function pingWorkflow(message: string): Promise<{ echo: string; gdal: string; worker: string }> {
  const info = await describeWorker();
  return { echo: message, ...info };
}
