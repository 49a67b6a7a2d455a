import { z } from 'zod';
import { ConnectorError } from '../domain/transfers.js';
import { classify, reasonOfStatus } from '../connectors/shared/policy/classify.js';
import { egressFetch } from '../connectors/shared/policy/egress.js';
import { httpUrl, secret } from '../connectors/shared/fields.js';
import { plainHeaders } from '../connectors/shared/http/http-fields.js';
import { signature } from '../connectors/webhook/request.js';
import { geoflowPayload, slackPayload, teamsPayload, type NotificationFacts } from './message.js';
import { defineNotifier } from './types.js';

const configuration = z.strictObject({
  url: httpUrl
    .optional()
    .describe(
      'Where the POST goes (secret: write-only, since a Slack or Teams webhook URL is itself the credential; the channel shows its origin as endpoint). Required on create',
    ),
  format: z
    .enum(['geoflow', 'slack', 'teams'])
    .default('geoflow')
    .describe("geoflow: the notification's facts as JSON; slack: a Slack incoming-webhook message; teams: an Adaptive Card for a Teams Workflows webhook"),
  headers: plainHeaders.describe('Extra request headers, stored in plain text'),
  signing_secret: secret('Shared secret: each request then carries X-Geoflow-Signature, an HMAC-SHA256 of the timestamp and the body'),
});

type WebhookChannel = z.output<typeof configuration>;

const originOf = (url: string | undefined) => {
  if (!url || !URL.canParse(url)) return '(no URL)';
  return new URL(url).origin;
};

function bodyOf(format: WebhookChannel['format'], facts: NotificationFacts): string {
  const payload = format === 'slack' ? slackPayload(facts) : format === 'teams' ? teamsPayload(facts) : geoflowPayload(facts);
  return JSON.stringify(payload);
}

export const webhookNotifier = defineNotifier({
  type: 'webhook',
  label: 'Webhook',
  description: 'POSTs each notification as JSON to a URL: geoflow’s own payload (HMAC-signed), a Slack message or a Teams card.',
  configuration,
  secrets: ['url', 'signing_secret'],
  requiredSecrets: ['url'],
  example: { url: 'https://hooks.example.org/geoflow', format: 'geoflow', signing_secret: '…' },
  notes: [
    'One `POST` per notification with a JSON body (`content-type: application/json`) and these headers:',
    '',
    '| header | value |',
    '|---|---|',
    '| `X-Geoflow-Event` | `failure`, `auto_disable`, `recovery`, `success`, `slow` (or `test`) |',
    '| `X-Geoflow-Delivery`, `Idempotency-Key` | the notification id: the same on every retry, so a receiver can ignore repeats |',
    '| `X-Geoflow-Timestamp` | Unix time in seconds when this attempt was signed |',
    '| `X-Geoflow-Signature` | with a `signing_secret`: `sha256=` + hex HMAC-SHA256 of `<X-Geoflow-Timestamp>.<body>` (verify it as for the webhook Destination, docs/connectors.md) |',
    '',
    'With `format: "geoflow"` the body is `{event, delivery_id, job: {id, name}, run: {id, status, trigger, attempt, created_at, started_at, finished_at, duration_ms, error, skipped_reason, stats}, disabled_reason?, slow_after_seconds?, url, sent_at}`; `url` is the Run page when `SVC_PUBLIC_ORIGIN` is set. `slack` sends `{text, blocks}` (Slack incoming webhooks, Mattermost, Rocket.Chat); `teams` sends a `message` with an Adaptive Card 1.4 (a Teams channel’s Workflows webhook, "Post to a channel when a webhook request is received").',
    '',
    '**Answers**: any 2xx is delivered. Redirects are not followed. 5xx, 429, 408, timeouts and refused connections are retried with backoff (2 s, tripling, up to 10 minutes apart, 8 attempts in about 20 minutes); 401, 403, 404 and other 4xx are not (the channel is wrong, not busy). The answer body is never read.',
  ].join('\n'),
  endpoint: (c) => `${originOf(c.url)} (${c.format})`,
  async send(c, facts, ctx) {
    if (!c.url) throw new ConnectorError('invalid_response', 'The webhook channel has no URL: set one', {}, false);
    const label = originOf(c.url);
    const body = bodyOf(c.format, facts);
    const timestamp = Math.floor(Date.parse(facts.sent_at) / 1000);
    const headers: Record<string, string> = {
      ...c.headers,
      'user-agent': 'geoflow',
      'content-type': 'application/json',
      'x-geoflow-event': facts.event,
      'x-geoflow-delivery': facts.delivery_id,
      'idempotency-key': facts.delivery_id,
      'x-geoflow-timestamp': String(timestamp),
    };
    if (c.signing_secret) headers['x-geoflow-signature'] = await signature(c.signing_secret, timestamp, [body]);
    let response: Response;
    try {
      response = await egressFetch(c.url, {
        method: 'POST',
        headers,
        body,
        redirect: 'manual',
        signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(30_000)]),
      });
    } catch (error) {
      throw classify(error, label, { endpoint: label });
    }
    await response.body?.cancel();
    const status = response.status;
    if (status >= 200 && status < 300) return;
    const details = { endpoint: label, http_status: status };
    if (status >= 300 && status < 400)
      throw new ConnectorError('invalid_response', `${label} answered a redirect (HTTP ${status}); save the final URL`, details, false);
    throw new ConnectorError(reasonOfStatus(status), `${label} answered HTTP ${status}`, details);
  },
});
