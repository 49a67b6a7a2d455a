/* Where a Run is (queued → running → succeeded | failed | cancelled) and where each of its steps is. */

export const runStatuses = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof runStatuses)[number];
export const finishedStatuses: readonly RunStatus[] = ['succeeded', 'failed', 'cancelled'];
export type StepStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'skipped';
export const isFinished = (status: RunStatus | 'absent') => (finishedStatuses as string[]).includes(status);
