import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { proxyActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { timeouts } from '../temporal/timeouts.js';

const { requestScheduledRun } = proxyActivities<Activities>(timeouts.record);

/** Set by Temporal on workflows a Schedule starts: the fire time it meant. */
const scheduledStartTime = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

/**
 * What a Job's Temporal Schedule starts at each fire time: it asks for a Run exactly like Run Now
 * does (a ticket to the Job's coordinator, recorded as a queued Run with trigger `schedule`),
 * with a Run id derived from this workflow's id so a retried request asks for the same Run.
 */
export async function scheduledRunWorkflow(input: { jobId: string; ownerId: string }): Promise<{ runId: string | null }> {
  const info = workflowInfo();
  const at = info.typedSearchAttributes.get(scheduledStartTime);
  return requestScheduledRun({ ...input, workflowId: info.workflowId, scheduledFor: at ? new Date(at).toISOString() : null });
}
