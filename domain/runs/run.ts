import { DomainError, notFound } from '../errors.js';
import { unreachable, type Decider } from '../decider.js';
import type { JobDefinition, StepName } from '../jobs/definition.js';
import { usesDefaults, type ParameterValues } from '../jobs/parameters.js';
import type { NotificationRecord } from '../notifications/subscriptions.js';
import { emptyStats, type RunError, type RunStats, type RunWarning, type StepLog, type StepProgress } from './facts.js';
import type { ExistingRun, RetryDefinition, RunState, RunSync, StepState, TriggeredBy } from './state.js';
import { isFinished } from './statuses.js';
import type { RunTrigger } from './triggers.js';

export const runStream = (id: string) => `run-${id}`;

/*
 * A Run: one execution of a Job, queued → running → succeeded | failed | cancelled, with its
 * steps. The worker records every change through activities, and activities are retried, so
 * every command is idempotent: a repeat appends nothing (a retried activity never duplicates an
 * event), and nothing moves a finished Run.
 */

export type RunEvent =
  | {
      type: 'RunQueued';
      data: {
        run_id: string;
        job_id: string;
        owner_id: string;
        trigger: RunTrigger;
        attempt: number;
        retry_of: string | null;
        job_snapshot: JobDefinition;
        steps: StepName[];
        /** Scheduled Runs: the fire time the schedule meant. */
        scheduled_for: string | null;
        /** The parameter values it runs with (absent before parameters existed: none). */
        parameters?: ParameterValues;
        triggered_by?: TriggeredBy | null;
        retry_definition?: RetryDefinition | null;
        /** Webhook Runs: the caller's delivery id. */
        delivery_id?: string | null;
        at: string;
      };
    }
  | {
      type: 'RunStarted';
      /**
       * job_id: absent in events recorded before the notifications' reactor needed it. sync null:
       * the Run reads in full and moves no cursor (its parameter values are not the Job's defaults).
       */
      data: { run_id: string; job_id?: string; workflow_id: string; workflow_run_id: string; sync: RunSync | null; at: string };
    }
  | { type: 'RunStepStarted'; data: { run_id: string; step: StepName; at: string } }
  | {
      type: 'RunStepFinished';
      data: {
        run_id: string;
        step: StepName;
        status: 'succeeded' | 'skipped';
        duration_ms: number | null;
        stats: Partial<RunStats>;
        /** What the step read and wrote (absent in Runs recorded before the log was kept). */
        log?: StepLog;
        /** Absent in Runs recorded before warnings were kept. */
        warnings?: Omit<RunWarning, 'step'>[];
        at: string;
      };
    }
  | { type: 'RunStepAttemptFailed'; data: { run_id: string; step: StepName; attempt: number; error: RunError; at: string } }
  | { type: 'RunStepProgressed'; data: { run_id: string; step: StepName; progress: StepProgress; at: string } }
  | { type: 'RunSucceeded'; data: { run_id: string; skipped_reason: string | null; at: string } }
  | { type: 'RunFailed'; data: { run_id: string; error: RunError; at: string } }
  | { type: 'RunCancelled'; data: { run_id: string; reason: string; at: string } }
  | { type: 'RunRetried'; data: { run_id: string; retry_run_id: string; at: string } }
  | { type: 'RunNotificationRecorded'; data: { run_id: string; notification: NotificationRecord; at: string } };

export type RunCommand =
  | {
      type: 'QueueRun';
      runId: string;
      jobId: string;
      ownerId: string;
      trigger: RunTrigger;
      attempt: number;
      retryOf: string | null;
      snapshot: JobDefinition;
      steps: StepName[];
      scheduledFor: Date | null;
      parameters: ParameterValues;
      triggeredBy: TriggeredBy | null;
      retryDefinition: RetryDefinition | null;
      deliveryId: string | null;
      at: Date;
    }
  | { type: 'StartRun'; runId: string; workflowId: string; workflowRunId: string; sync: RunSync; at: Date }
  | { type: 'StartStep'; runId: string; step: StepName; at: Date }
  | {
      type: 'FinishStep';
      runId: string;
      step: StepName;
      status: 'succeeded' | 'skipped';
      stats?: Partial<RunStats>;
      warnings?: Omit<RunWarning, 'step'>[];
      log?: StepLog;
      at: Date;
    }
  /** An attempt of a running step failed (Temporal retries transient failures): noted for whoever watches the Run. */
  | { type: 'NoteFailedAttempt'; runId: string; step: StepName; attempt: number; error: RunError; at: Date }
  /** A long step says how far it is (features or bytes written), a few times a minute at most. */
  | { type: 'NoteStepProgress'; runId: string; step: StepName; progress: StepProgress; at: Date }
  | { type: 'SucceedRun'; runId: string; skippedReason: string | null; at: Date }
  | { type: 'FailRun'; runId: string; error: RunError; at: Date }
  | { type: 'CancelRun'; runId: string; reason: string; at: Date }
  | { type: 'MarkRetried'; runId: string; actorId: string; retryRunId: string; at: Date }
  /** A notification about the Run was delivered, or given up on: recorded once per event and channel, whenever it ends (the Run may be finished). */
  | { type: 'RecordNotification'; runId: string; notification: NotificationRecord; at: Date };

/** A Run of another user's Job, or of another Job, is answered like a missing one. */
export function ownedRun(state: RunState, actorId: string, jobId: string, runId: string): ExistingRun {
  if (state.status === 'absent' || state.ownerId !== actorId || state.jobId !== jobId) throw notFound('run_not_found', 'Run', runId);
  return state;
}

/**
 * The step a failure belongs to when the Run's record must say (one activity ran several steps):
 * the one still running, or else the first not reached (its start was never recorded).
 */
export function stepAtFault(run: ExistingRun): StepName | null {
  return (run.steps.find((s) => s.status === 'running') ?? run.steps.find((s) => s.status === 'pending'))?.name ?? null;
}

const ms = (from: string | null, to: string) => (from ? Math.max(0, Date.parse(to) - Date.parse(from)) : null);

function withStep(steps: StepState[], name: StepName, change: (s: StepState) => StepState): StepState[] {
  return steps.map((s) => (s.name === name ? change(s) : s));
}

/**
 * A finished Run's steps: the one that broke (or was interrupted) failed, those never reached
 * were skipped, the rest keep what they recorded.
 */
function closeSteps(steps: StepState[], at: string, broke: (s: StepState) => boolean): StepState[] {
  return steps.map((s) => {
    if (s.status === 'succeeded' || s.status === 'skipped') return s;
    if (broke(s)) return { ...s, status: 'failed', finished_at: at, duration_ms: ms(s.started_at, at) };
    return s.status === 'pending' ? { ...s, status: 'skipped' } : s;
  });
}

export const runDecider: Decider<RunCommand, RunState, RunEvent> = {
  initialState: () => ({ status: 'absent' }),

  decide(command, state) {
    const at = command.at.toISOString();
    const run_id = command.runId;
    if (command.type === 'QueueRun') {
      if (state.status !== 'absent') return []; // the same Run recorded again
      return [
        {
          type: 'RunQueued',
          data: {
            run_id,
            job_id: command.jobId,
            owner_id: command.ownerId,
            trigger: command.trigger,
            attempt: command.attempt,
            retry_of: command.retryOf,
            job_snapshot: command.snapshot,
            steps: command.steps,
            scheduled_for: command.scheduledFor?.toISOString() ?? null,
            parameters: command.parameters,
            triggered_by: command.triggeredBy,
            retry_definition: command.retryDefinition,
            delivery_id: command.deliveryId,
            at,
          },
        },
      ];
    }
    if (state.status === 'absent') throw notFound('run_not_found', 'Run', run_id);
    switch (command.type) {
      case 'StartRun':
        if (state.status !== 'queued') return [];
        return [
          {
            type: 'RunStarted',
            data: {
              run_id,
              job_id: state.jobId,
              workflow_id: command.workflowId,
              workflow_run_id: command.workflowRunId,
              sync: usesDefaults(state.snapshot.parameters ?? [], state.parameters) ? command.sync : null,
              at,
            },
          },
        ];
      case 'StartStep': {
        const step = state.steps.find((s) => s.name === command.step);
        if (state.status !== 'running' || !step || step.status !== 'pending') return [];
        return [{ type: 'RunStepStarted', data: { run_id, step: command.step, at } }];
      }
      case 'NoteFailedAttempt': {
        const step = state.steps.find((s) => s.name === command.step);
        // Only while the step runs, and once per attempt (a retried note is not a new failure).
        if (state.status !== 'running' || !step || step.status !== 'running' || (step.failed_attempts ?? 0) >= command.attempt) return [];
        return [{ type: 'RunStepAttemptFailed', data: { run_id, step: command.step, attempt: command.attempt, error: command.error, at } }];
      }
      case 'NoteStepProgress': {
        const step = state.steps.find((s) => s.name === command.step);
        if (state.status !== 'running' || !step || step.status !== 'running') return [];
        return [{ type: 'RunStepProgressed', data: { run_id, step: command.step, progress: command.progress, at } }];
      }
      case 'FinishStep': {
        const step = state.steps.find((s) => s.name === command.step);
        if (state.status !== 'running' || !step || step.status === 'succeeded' || step.status === 'skipped' || step.status === 'failed') return [];
        const duration = command.status === 'skipped' ? null : ms(step.started_at, at);
        const warnings = command.warnings?.length ? { warnings: command.warnings } : {};
        return [
          {
            type: 'RunStepFinished',
            data: {
              run_id,
              step: command.step,
              status: command.status,
              duration_ms: duration,
              stats: command.stats ?? {},
              ...warnings,
              ...(command.log ? { log: command.log } : {}),
              at,
            },
          },
        ];
      }
      case 'SucceedRun':
        if (state.status !== 'running') return [];
        return [{ type: 'RunSucceeded', data: { run_id, skipped_reason: command.skippedReason, at } }];
      case 'FailRun':
        if (isFinished(state.status)) return [];
        return [{ type: 'RunFailed', data: { run_id, error: command.error, at } }];
      case 'CancelRun':
        if (isFinished(state.status)) return [];
        return [{ type: 'RunCancelled', data: { run_id, reason: command.reason, at } }];
      case 'MarkRetried':
        if (state.ownerId !== command.actorId) throw notFound('run_not_found', 'Run', run_id);
        if (state.retriedBy === command.retryRunId) return [];
        if (state.status !== 'failed') {
          throw new DomainError('conflict', `Run ${run_id} is ${state.status}; only a failed Run can be retried`, { status: state.status });
        }
        if (state.retriedBy) throw new DomainError('conflict', `Run ${run_id} was already retried by ${state.retriedBy}`, { retry_run_id: state.retriedBy });
        return [{ type: 'RunRetried', data: { run_id, retry_run_id: command.retryRunId, at } }];
      case 'RecordNotification':
        if ((state.notifications ?? []).some((n) => n.id === command.notification.id)) return [];
        return [{ type: 'RunNotificationRecorded', data: { run_id, notification: command.notification, at } }];
      default:
        return unreachable(command);
    }
  },

  evolve(state, event) {
    if (event.type === 'RunQueued') {
      const d = event.data;
      return {
        status: 'queued',
        jobId: d.job_id,
        ownerId: d.owner_id,
        trigger: d.trigger,
        attempt: d.attempt,
        snapshot: d.job_snapshot,
        parameters: d.parameters ?? {},
        triggeredBy: d.triggered_by ?? null,
        retryDefinition: d.retry_definition ?? null,
        deliveryId: d.delivery_id ?? null,
        steps: d.steps.map((name) => ({ name, status: 'pending', started_at: null, finished_at: null, duration_ms: null })),
        stats: emptyStats,
        sync: null,
        retriedBy: null,
        queuedAt: d.at,
        scheduledFor: d.scheduled_for,
        createdAt: d.at,
        startedAt: null,
        finishedAt: null,
        error: null,
        skippedReason: null,
      };
    }
    if (state.status === 'absent') return state;
    const d = event.data;
    switch (event.type) {
      case 'RunStarted':
        return { ...state, status: 'running', sync: event.data.sync, startedAt: d.at };
      case 'RunStepStarted':
        return { ...state, steps: withStep(state.steps, event.data.step, (s) => ({ ...s, status: 'running', started_at: d.at })) };
      case 'RunStepFinished': {
        const { step, status, duration_ms, stats, log } = event.data;
        const merged = { ...state.stats, ...Object.fromEntries(Object.entries(stats).filter(([, v]) => v !== undefined && v !== null)) };
        const said = event.data.warnings?.length ? { warnings: [...(state.warnings ?? []), ...event.data.warnings.map((w) => ({ step, ...w }))] } : {};
        return {
          ...state,
          stats: merged,
          ...said,
          steps: withStep(state.steps, step, (s) => ({ ...s, status, finished_at: d.at, duration_ms, ...(log ? { log } : {}) })),
        };
      }
      case 'RunStepAttemptFailed':
        return {
          ...state,
          steps: withStep(state.steps, event.data.step, (s) => ({ ...s, failed_attempts: event.data.attempt, last_error: event.data.error })),
        };
      case 'RunStepProgressed':
        return { ...state, steps: withStep(state.steps, event.data.step, (s) => ({ ...s, progress: event.data.progress })) };
      case 'RunSucceeded':
        // Steps never reached (an unchanged source skips the rest) are shown as skipped.
        return {
          ...state,
          status: 'succeeded',
          steps: closeSteps(state.steps, d.at, () => false),
          finishedAt: d.at,
          skippedReason: event.data.skipped_reason,
        };
      case 'RunFailed': {
        const failedStep = event.data.error.step;
        return {
          ...state,
          status: 'failed',
          steps: closeSteps(state.steps, d.at, (s) => s.name === failedStep || s.status === 'running'),
          finishedAt: d.at,
          error: event.data.error,
        };
      }
      case 'RunCancelled':
        return {
          ...state,
          status: 'cancelled',
          steps: closeSteps(state.steps, d.at, (s) => s.status === 'running'),
          finishedAt: d.at,
          error: { code: 'cancelled', message: event.data.reason, step: null, retryable: false },
        };
      case 'RunRetried':
        return { ...state, retriedBy: event.data.retry_run_id };
      case 'RunNotificationRecorded':
        return { ...state, notifications: [...(state.notifications ?? []), event.data.notification] };
      default:
        return unreachable(event);
    }
  },
};
