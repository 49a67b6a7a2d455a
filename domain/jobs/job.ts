import { DomainError, notFound } from '../errors.js';
import { unreachable, type Decider } from '../decider.js';
import { isAutomated, type RunOutcome, type RunTrigger } from '../runs/triggers.js';
import { withDefaults, type JobDefinition } from './definition.js';

export const jobStream = (id: string) => `job-${id}`;

/** A Job's inbound webhook: how callers authenticate, and its secret sealed with the service key (never shown again). */
export interface WebhookState {
  auth: 'hmac' | 'bearer';
  sealed_secret: string;
  created_at: string;
  rotated_at: string | null;
}

/** Why a Job is disabled: the owner said so, or its automated Runs kept failing. */
export type DisabledReason = { kind: 'manual' } | { kind: 'consecutive_failures'; failures: number; message: string; run_id?: string };

/**
 * Incremental reading. `seq` counts reset/reinitialize requests; a Run takes the sync state when
 * it starts and hands `seq` back with its outcome, so a request made while it ran is never lost
 * (the Run's cursor is then dropped and the next Run honours the request): a reset cannot race
 * a Run, whatever the timing.
 */
export interface SyncState {
  cursor: unknown;
  updated_at: string | null;
  seq: number;
  reset_pending: boolean;
  reinitialize_pending: boolean;
}
export const emptySync: SyncState = { cursor: null, updated_at: null, seq: 0, reset_pending: false, reinitialize_pending: false };

/** What a starting Run reads with: the cursor unless a reset is pending, and whether to rebuild the target. */
export function syncForRun(sync: SyncState): { cursor: unknown; reinitialize: boolean; seq: number } {
  const fresh = sync.reset_pending || sync.reinitialize_pending;
  return { cursor: fresh ? null : sync.cursor, reinitialize: sync.reinitialize_pending, seq: sync.seq };
}

export type JobEvent =
  | { type: 'JobCreated'; data: { job_id: string; owner_id: string; definition: JobDefinition; enabled: boolean; at: string } }
  | { type: 'JobUpdated'; data: { job_id: string; definition: JobDefinition; at: string } }
  | { type: 'JobEnabled'; data: { job_id: string; at: string } }
  | { type: 'JobDisabled'; data: { job_id: string; reason: DisabledReason; at: string } }
  | { type: 'JobDeleted'; data: { job_id: string; at: string } }
  | { type: 'JobSyncReset'; data: { job_id: string; seq: number; at: string } }
  | { type: 'JobSyncReinitializeRequested'; data: { job_id: string; seq: number; at: string } }
  | {
      type: 'JobRunRecorded';
      data: {
        job_id: string;
        run_id: string;
        trigger: RunTrigger;
        status: RunOutcome;
        consecutive_failures: number;
        /** How the Job's previous finished Run ended (null for its first; absent in events recorded before it was kept). */
        previous_status?: 'succeeded' | 'failed' | null;
        at: string;
      };
    }
  | { type: 'JobSyncAdvanced'; data: { job_id: string; run_id: string; cursor: unknown; at: string } }
  | { type: 'JobWebhookIssued'; data: { job_id: string; auth: WebhookState['auth']; sealed_secret: string; rotated: boolean; at: string } }
  | { type: 'JobWebhookRevoked'; data: { job_id: string; at: string } };

export type JobCommand =
  | { type: 'CreateJob'; jobId: string; actorId: string; definition: JobDefinition; enabled: boolean; at: Date }
  | { type: 'UpdateJob'; jobId: string; actorId: string; definition: JobDefinition; enabled?: boolean; at: Date }
  | { type: 'EnableJob'; jobId: string; actorId: string; at: Date }
  | { type: 'DisableJob'; jobId: string; actorId: string; at: Date }
  | { type: 'DeleteJob'; jobId: string; actorId: string; at: Date }
  | { type: 'ResetSync'; jobId: string; actorId: string; at: Date }
  | { type: 'ReinitializeSync'; jobId: string; actorId: string; at: Date }
  /** Creates or rotates the webhook: the secret arrives sealed (the decider never sees it in clear). */
  | { type: 'IssueWebhook'; jobId: string; actorId: string; auth: WebhookState['auth']; sealedSecret: string; at: Date }
  | { type: 'RevokeWebhook'; jobId: string; actorId: string; at: Date }
  | {
      type: 'RecordRunOutcome';
      jobId: string;
      runId: string;
      trigger: RunTrigger;
      status: RunOutcome;
      /** A succeeded Run's new cursor and the sync `seq` it started with. */
      sync?: { cursor: unknown; seq: number };
      maxConsecutiveFailures: number;
      at: Date;
    };

export interface ActiveJob {
  status: 'active' | 'deleted';
  ownerId: string;
  definition: JobDefinition;
  enabled: boolean;
  disabledReason: DisabledReason | null;
  consecutiveFailures: number;
  sync: SyncState;
  webhook: WebhookState | null;
  /** Recent Runs whose outcome is recorded: a retried activity records one once. */
  recordedRuns: string[];
  /** How the latest succeeded or failed Run ended (a cancelled one leaves it): what makes a success a recovery. */
  lastOutcome?: 'succeeded' | 'failed' | null;
}
export type JobState = { status: 'absent' } | ActiveJob;

const RECENT_RUNS = 50;

/** Another user's Job is answered exactly like a missing one. */
export function ownedJob(state: JobState, actorId: string, id: string): ActiveJob {
  if (state.status !== 'active' || state.ownerId !== actorId) throw notFound('job_not_found', 'Job', id);
  return state;
}

export const jobDecider: Decider<JobCommand, JobState, JobEvent> = {
  initialState: () => ({ status: 'absent' }),
  // Every Run adds to a Job's stream: a Job run each minute has half a million events in a year.
  snapshotVersion: 'job-2',

  decide(command, state) {
    const at = command.at.toISOString();
    const job_id = command.jobId;
    switch (command.type) {
      case 'CreateJob':
        if (state.status !== 'absent') throw new DomainError('conflict', `Job ${job_id} already exists`);
        return [{ type: 'JobCreated', data: { job_id, owner_id: command.actorId, definition: command.definition, enabled: command.enabled, at } }];
      case 'UpdateJob': {
        const job = ownedJob(state, command.actorId, job_id);
        const events: JobEvent[] = [{ type: 'JobUpdated', data: { job_id, definition: command.definition, at } }];
        if (command.enabled === true && !job.enabled) events.push({ type: 'JobEnabled', data: { job_id, at } });
        if (command.enabled === false && job.enabled) events.push({ type: 'JobDisabled', data: { job_id, reason: { kind: 'manual' }, at } });
        return events;
      }
      case 'EnableJob':
        return ownedJob(state, command.actorId, job_id).enabled ? [] : [{ type: 'JobEnabled', data: { job_id, at } }];
      case 'DisableJob':
        return ownedJob(state, command.actorId, job_id).enabled ? [{ type: 'JobDisabled', data: { job_id, reason: { kind: 'manual' }, at } }] : [];
      case 'DeleteJob':
        ownedJob(state, command.actorId, job_id);
        return [{ type: 'JobDeleted', data: { job_id, at } }];
      case 'ResetSync':
        return [{ type: 'JobSyncReset', data: { job_id, seq: ownedJob(state, command.actorId, job_id).sync.seq + 1, at } }];
      case 'ReinitializeSync':
        return [{ type: 'JobSyncReinitializeRequested', data: { job_id, seq: ownedJob(state, command.actorId, job_id).sync.seq + 1, at } }];
      case 'IssueWebhook': {
        const job = ownedJob(state, command.actorId, job_id);
        return [{ type: 'JobWebhookIssued', data: { job_id, auth: command.auth, sealed_secret: command.sealedSecret, rotated: job.webhook !== null, at } }];
      }
      case 'RevokeWebhook':
        return ownedJob(state, command.actorId, job_id).webhook ? [{ type: 'JobWebhookRevoked', data: { job_id, at } }] : [];
      case 'RecordRunOutcome': {
        // Outcomes arrive from the worker; a Job deleted meanwhile has nothing left to update.
        if (state.status !== 'active' || state.recordedRuns.includes(command.runId)) return [];
        const failures =
          command.status === 'succeeded'
            ? 0
            : command.status === 'failed' && isAutomated(command.trigger)
              ? state.consecutiveFailures + 1
              : state.consecutiveFailures;
        const events: JobEvent[] = [
          {
            type: 'JobRunRecorded',
            data: {
              job_id,
              run_id: command.runId,
              trigger: command.trigger,
              status: command.status,
              consecutive_failures: failures,
              previous_status: state.lastOutcome ?? null,
              at,
            },
          },
        ];
        const sync = state.sync;
        const moved =
          command.sync &&
          (JSON.stringify(command.sync.cursor ?? null) !== JSON.stringify(sync.cursor ?? null) || sync.reset_pending || sync.reinitialize_pending);
        if (command.status === 'succeeded' && command.sync && command.sync.seq === sync.seq && moved) {
          events.push({ type: 'JobSyncAdvanced', data: { job_id, run_id: command.runId, cursor: command.sync.cursor ?? null, at } });
        }
        if (state.enabled && isAutomated(command.trigger) && failures >= command.maxConsecutiveFailures && command.status === 'failed') {
          const message = `Disabled after ${failures} consecutive failed automated Runs (scheduled or triggered; the last: ${command.runId}); fix the cause, then enable the Job again`;
          events.push({ type: 'JobDisabled', data: { job_id, reason: { kind: 'consecutive_failures', failures, message, run_id: command.runId }, at } });
        }
        return events;
      }
      default:
        return unreachable(command);
    }
  },

  evolve(state, event) {
    if (event.type === 'JobCreated') {
      return {
        status: 'active',
        ownerId: event.data.owner_id,
        definition: withDefaults(event.data.definition),
        enabled: event.data.enabled,
        disabledReason: event.data.enabled ? null : { kind: 'manual' },
        consecutiveFailures: 0,
        sync: emptySync,
        webhook: null,
        recordedRuns: [],
      };
    }
    if (state.status === 'absent') return state;
    switch (event.type) {
      case 'JobUpdated':
        return { ...state, definition: withDefaults(event.data.definition) };
      case 'JobEnabled':
        // A fresh start: the failures that disabled it are forgiven.
        return { ...state, enabled: true, disabledReason: null, consecutiveFailures: 0 };
      case 'JobDisabled':
        return { ...state, enabled: false, disabledReason: event.data.reason };
      case 'JobDeleted':
        return { ...state, status: 'deleted' };
      case 'JobSyncReset':
        return { ...state, sync: { ...state.sync, seq: event.data.seq, reset_pending: true, updated_at: event.data.at } };
      case 'JobSyncReinitializeRequested':
        return { ...state, sync: { ...state.sync, seq: event.data.seq, reset_pending: true, reinitialize_pending: true, updated_at: event.data.at } };
      case 'JobRunRecorded':
        return {
          ...state,
          consecutiveFailures: event.data.consecutive_failures,
          recordedRuns: [...state.recordedRuns, event.data.run_id].slice(-RECENT_RUNS),
          lastOutcome: event.data.status === 'cancelled' ? (state.lastOutcome ?? null) : event.data.status,
        };
      case 'JobSyncAdvanced':
        return { ...state, sync: { ...state.sync, cursor: event.data.cursor, updated_at: event.data.at, reset_pending: false, reinitialize_pending: false } };
      case 'JobWebhookIssued': {
        const { auth, sealed_secret, at, rotated } = event.data;
        return {
          ...state,
          webhook: { auth, sealed_secret, created_at: rotated && state.webhook ? state.webhook.created_at : at, rotated_at: rotated ? at : null },
        };
      }
      case 'JobWebhookRevoked':
        return { ...state, webhook: null };
      default:
        return unreachable(event);
    }
  },
};
