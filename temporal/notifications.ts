import type { NotificationEvent } from '../domain/notifications/subscriptions.js';

/*
 * The notification workflow as its starter sees it (application/run-notifications.ts starts it
 * by name with this input; workflows/notify-run.ts implements it). Types only, workflow-safe.
 */

export interface NotificationDelivery {
  channelId: string;
  event: NotificationEvent;
  /** slow: sent only once the Run has run this long (and only if it is still running, or ran longer). */
  afterSeconds?: number;
}

export interface NotifyRunInput {
  runId: string;
  ownerId: string;
  /** slow: when the Run started (ISO): the watch's clock starts there. */
  startedAt?: string;
  deliveries: NotificationDelivery[];
}

/** What a failed send attempt carries in its failure's details, for the Run's record. */
export interface NotificationFailureDetails {
  attempt: number;
}

export const NOTIFICATION_FAILURE = 'NotificationFailed';
