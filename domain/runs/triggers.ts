/* What starts a Run, and how a finished Run ended (the Job's bookkeeping of its Runs). */

export const runTriggers = ['manual', 'schedule', 'retry', 'on_change', 'webhook', 'after'] as const;
export type RunTrigger = (typeof runTriggers)[number];
/** Triggers without a person behind them: their failures count towards disabling the Job, and a disabled Job ignores them. */
export const automatedTriggers: readonly RunTrigger[] = ['schedule', 'on_change', 'webhook', 'after'];
export const isAutomated = (trigger: RunTrigger) => automatedTriggers.includes(trigger);
export type RunOutcome = 'succeeded' | 'failed' | 'cancelled';
