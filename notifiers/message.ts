import type { NotificationEvent } from '../domain/notifications/subscriptions.js';

/*
 * What a notification says, built once from the Run's facts and then written out for each kind
 * of receiver: a plain-text email, geoflow's own JSON, a Slack message, a Teams card. Only what
 * the Run record shows goes in (its error messages are secret-free by contract), never a
 * connection's settings.
 */

export interface RunFacts {
  id: string;
  status: string;
  trigger: string;
  attempt: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  duration_ms: number | null;
  error: { code: string; message: string; step: string | null } | null;
  skipped_reason: string | null;
  stats: Record<string, number | null>;
}

export interface NotificationFacts {
  /** The event, or `test` for a channel test. */
  event: NotificationEvent | 'test';
  /** Stable per Run, event and channel: the same on every retry, so a receiver can drop repeats. */
  delivery_id: string;
  job: { id: string; name: string };
  run: RunFacts | null;
  /** auto_disable: why the Job disabled itself. */
  disabled_reason?: string;
  /** slow: the threshold that was passed. */
  slow_after_seconds?: number;
  /** The Run's page in the browser app, when SVC_PUBLIC_ORIGIN says where it is. */
  url: string | null;
  sent_at: string;
}

const headlines: Record<NotificationFacts['event'], (name: string) => string> = {
  failure: (n) => `Job "${n}" failed`,
  auto_disable: (n) => `Job "${n}" disabled itself after repeated failures`,
  recovery: (n) => `Job "${n}" recovered: its Run succeeded again`,
  success: (n) => `Job "${n}" succeeded`,
  slow: (n) => `Job "${n}" is running slowly`,
  test: () => 'Test notification from geoflow',
};

/** One line for a subject or a chat message's first line. */
export function headlineOf(facts: NotificationFacts): string {
  return headlines[facts.event](facts.job.name);
}

export const subjectOf = (facts: NotificationFacts) => `[geoflow] ${headlineOf(facts)}`;

const seconds = (ms: number | null) => (ms === null ? null : ms < 60_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 60_000)} min`);

/** The details as label/value pairs, in reading order (what every format shows). */
export function detailsOf(facts: NotificationFacts): [string, string][] {
  const out: [string, string][] = [['Job', `${facts.job.name} (${facts.job.id})`]];
  const run = facts.run;
  if (run) {
    out.push(['Run', `${run.id} (${run.trigger}, attempt ${run.attempt})`], ['Status', run.status]);
    if (run.started_at) out.push(['Started', run.started_at]);
    if (run.finished_at) out.push(['Finished', run.finished_at]);
    const took = seconds(run.duration_ms);
    if (took) out.push(['Duration', took]);
    if (run.error) out.push(['Error', `${run.error.code}${run.error.step ? ` in ${run.error.step}` : ''}: ${run.error.message}`]);
    if (run.skipped_reason) out.push(['Skipped', run.skipped_reason === 'source_unchanged' ? 'the Source had not changed' : run.skipped_reason]);
    if (run.stats.features_written !== null && run.stats.features_written !== undefined) out.push(['Features written', String(run.stats.features_written)]);
  }
  if (facts.disabled_reason) out.push(['Why', facts.disabled_reason]);
  if (facts.slow_after_seconds) out.push(['Threshold', `${facts.slow_after_seconds} s`]);
  if (facts.url) out.push(['Link', facts.url]);
  return out;
}

/** The plain-text body of an email. */
export function textOf(facts: NotificationFacts): string {
  const lines = [headlineOf(facts), '', ...detailsOf(facts).map(([k, v]) => `${k}: ${v}`)];
  if (facts.event === 'test') lines.push('', 'This channel works: geoflow will send notifications about the Jobs subscribed to it here.');
  if (facts.event === 'auto_disable') lines.push('', 'Fix the cause, then enable the Job again (its schedule stays paused until then).');
  return `${lines.join('\n')}\n`;
}

/** geoflow's own JSON body: the facts as they are. */
export function geoflowPayload(facts: NotificationFacts): Record<string, unknown> {
  return { ...facts };
}

/** A Slack incoming-webhook message (also what Mattermost and Rocket.Chat take): a text fallback and blocks. */
export function slackPayload(facts: NotificationFacts): Record<string, unknown> {
  const details = detailsOf(facts);
  return {
    text: headlineOf(facts),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `*${escapeSlack(headlineOf(facts))}*` } },
      { type: 'section', fields: details.slice(0, 10).map(([k, v]) => ({ type: 'mrkdwn', text: `*${escapeSlack(k)}*\n${escapeSlack(v)}` })) },
    ],
  };
}

const escapeSlack = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/**
 * A Microsoft Teams message: an Adaptive Card in a message envelope, what a Teams channel's
 * Workflows ("Post to a channel when a webhook request is received") webhook takes.
 */
export function teamsPayload(facts: NotificationFacts): Record<string, unknown> {
  return {
    type: 'message',
    attachments: [
      {
        contentType: 'application/vnd.microsoft.card.adaptive',
        contentUrl: null,
        content: {
          $schema: 'http://adaptivecards.io/schemas/adaptive-card.json',
          type: 'AdaptiveCard',
          version: '1.4',
          body: [
            { type: 'TextBlock', text: headlineOf(facts), weight: 'Bolder', size: 'Medium', wrap: true },
            { type: 'FactSet', facts: detailsOf(facts).map(([title, value]) => ({ title, value })) },
          ],
          ...(facts.url ? { actions: [{ type: 'Action.OpenUrl', title: 'Open the Run', url: facts.url }] } : {}),
        },
      },
    ],
  };
}
