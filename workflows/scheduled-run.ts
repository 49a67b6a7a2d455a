import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { patched, proxyActivities, proxyLocalActivities, workflowInfo } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';
import { timeouts } from '../temporal/timeouts.js';

// The request as a local activity: it runs inside the workflow's first task, so a fire costs one
// workflow task instead of two plus an activity task (500 Jobs firing on the same second queue
// 500 fewer tasks behind each other). Histories recorded before the change scheduled it as an
// activity; `patched` keeps those replaying with the same commands.
const LOCAL_REQUEST = 'local-scheduled-request';
const remote = proxyActivities<Activities>(timeouts.record);
const local = proxyLocalActivities<Activities>(timeouts.localRecord);

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
  const { requestScheduledRun } = patched(LOCAL_REQUEST) ? local : remote;
  return requestScheduledRun({ ...input, workflowId: info.workflowId, scheduledFor: at ? new Date(at).toISOString() : null });
}
