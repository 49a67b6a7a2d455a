/*
 * The ids of workflows and Schedules, spelled once: the API starts and signals workflows by them,
 * the coordinator starts its children by them, tests and the Run record show them. Workflow-safe.
 */

/** The coordinator of one Job's Runs (workflows/job-runs.ts). */
export const jobWorkflowId = (jobId: string) => `job-${jobId}`;
/** One Run of a Job (workflows/run-job.ts), a child of the Job's coordinator. */
export const runWorkflowId = (runId: string) => `run-${runId}`;
/** A Job's Temporal Schedule, kept equal to the Job by application/job-schedules.ts. */
export const scheduleIdOf = (jobId: string) => `schedule-job-${jobId}`;
/** What the Job's Schedule starts at each fire time (workflows/scheduled-run.ts); Temporal appends the fire time. */
export const scheduledRunWorkflowId = (jobId: string) => `job-${jobId}-scheduled`;
/** A Job's on-change check (application/job-schedules.ts), every N minutes. */
export const watchScheduleIdOf = (jobId: string) => `schedule-job-${jobId}-watch`;
/** What the on-change Schedule starts (workflows/watch-source.ts); Temporal appends the fire time. */
export const watchWorkflowId = (jobId: string) => `job-${jobId}-watch`;
/** One conversion of a Workspace (workflows/workspace-convert.ts). */
export const workspaceConvertWorkflowId = (workspaceId: string, conversionId: string) => `workspace-convert-${workspaceId}-${conversionId}`;
/** One delivery of a Workspace's output (workflows/workspace-deliver.ts). */
export const workspaceDeliverWorkflowId = (workspaceId: string, deliveryId: string) => `workspace-deliver-${workspaceId}-${deliveryId}`;
/** The notifications about one Run (workflows/notify-run.ts): its end (`outcome`), its Job disabling itself, a slow watch. */
export const notifyWorkflowId = (runId: string, about: 'outcome' | 'auto_disable' | 'slow') => `notify-${runId}-${about}`;
