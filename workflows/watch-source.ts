import { proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import type { ChangeCheckResult } from '../activities/automation.js';
import { timeouts } from '../temporal/timeouts.js';

const { checkSourceForChange } = proxyLocalActivities<Activities>(timeouts.changeCheck);

/**
 * What a Job's on-change Schedule starts every N minutes (`job-<jobId>-watch-<time>`): one check
 * of its Source, as a local activity (no activity task of its own: a check that finds nothing
 * costs one workflow task), which asks for a Run when the Source changed.
 */
export async function watchSourceWorkflow(input: { jobId: string; ownerId: string }): Promise<ChangeCheckResult> {
  return checkSourceForChange({ ...input, workflowId: workflowInfo().workflowId });
}
