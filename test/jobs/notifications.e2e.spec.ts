import { sql } from 'slonik';
import { z } from 'zod';
import { afterAll, describe, expect } from 'vitest';
import { metrics } from '../../platform/metrics.js';
import { scheduleIdOf } from '../../temporal/ids.js';
import type { TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { fixtureDir, pointsGeoJson } from '../support/fixtures.js';
import { e2eTest, JOB_SCOPES } from '../support/e2e.js';
import { fileBody, finished, type FileServer, type jobsClient, placesSources, type RunJson } from '../support/jobs.js';
import { untilRead } from '../support/until.js';
import { temporalAddress } from '../support/worker.js';
import { startWebhookReceiver, type WebhookReceiver } from '../servers/http/webhook-receiver.js';
import { smtpServerUnavailable, startSmtpServer, type SmtpServer } from '../servers/smtp/server.js';

/*
 * Notifications end to end: channels saved through the API, Jobs subscribed to them, Runs on the
 * real worker and Temporal, and what arrives at a real SMTP server (aiosmtpd, STARTTLS and AUTH,
 * its certificate checked) and at a webhook receiver that verifies the HMAC signature.
 */

const skip =
  skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal') || smtpServerUnavailable();

interface Notification {
  id: string;
  event: string;
  channel_id: string;
  channel_type: string;
  channel_name: string;
  status: string;
  attempts: number;
  error: string | null;
}
type RunWithNotifications = RunJson & { notifications: Notification[] };

const SECRET = 'hook-signing-secret-1234';
const it = e2eTest({
  worker: true,
  scopes: [...JOB_SCOPES, 'notifications:read', 'notifications:write'],
  env: { SVC_JOB_MAX_FAILURES: '2', SVC_PUBLIC_ORIGIN: 'https://geoflow.example.org' },
});

describe.skipIf(skip)('notifications', () => {
  let sut: TestApp;
  let files: FileServer;
  let smtp: SmtpServer;
  let hook: WebhookReceiver;
  let api: ReturnType<typeof jobsClient>;
  let sourceId: string;
  let missingId: string;
  let destinationId: string;
  let emailId: string;
  let webhookId: string;
  const dir = fixtureDir();

  it.beforeAll(async ({ sut: theSut, files: theFiles, jobs: theJobs }) => {
    sut = theSut;
    files = theFiles;
    api = theJobs;
    ({ sourceId, missingId } = await placesSources(api, files));
    smtp = await startSmtpServer();
    hook = await startWebhookReceiver({ secret: SECRET, answers: [] });
    destinationId = (await api.call('POST', '/api/v1/destinations', { name: 'sink', type: 'webhook', configuration: { url: `${files.url}/sink` } })).json().id;
  });
  afterAll(async () => {
    await smtp?.stop();
    await hook?.stop();
  });

  const emailChannel = (extra: Record<string, unknown> = {}) => ({
    name: 'GIS team',
    type: 'email',
    configuration: {
      host: smtp.host,
      port: smtp.port,
      security: 'starttls',
      username: smtp.username,
      password: smtp.password,
      from: 'geoflow@example.org',
      to: ['gis-team@example.org', 'oncall@example.org'],
      ca_certificate: smtp.ca,
      ...extra,
    },
  });

  const createJob = async (extra: Record<string, unknown>) => {
    const res = await api.call('POST', '/api/v1/jobs', { name: 'Parcels', source_id: sourceId, destination_id: destinationId, ...extra });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; notifications: unknown[] };
  };

  /** Waits until a Run has recorded `count` notifications (each delivered or given up on). */
  const notified = async (jobId: string, runId: string, count: number): Promise<RunWithNotifications> =>
    (await api.waitForRun(
      jobId,
      runId,
      (r) => finished(r.status) && (r as RunWithNotifications).notifications.length >= count,
      120_000,
    )) as RunWithNotifications;

  it('saves channels with write-only secrets, shows where they send, and tests them', async () => {
    const email = await api.call('POST', '/api/v1/notification-channels', emailChannel());
    expect(email.statusCode, email.body).toBe(201);
    emailId = email.json().id;
    expect(emailId).toMatch(/^nch_/);
    expect(email.json()).toMatchObject({
      type: 'email',
      configuration: { host: 'localhost', port: smtp.port, security: 'starttls', username: smtp.username, has_password: true },
      endpoint: `SMTP localhost:${smtp.port} → gis-team@example.org, oncall@example.org`,
    });
    expect(email.body).not.toContain(smtp.password);

    const webhook = await api.call('POST', '/api/v1/notification-channels', {
      name: 'ops hook',
      type: 'webhook',
      configuration: { url: `${hook.url}?token=in-the-url`, format: 'geoflow', signing_secret: SECRET },
    });
    expect(webhook.statusCode, webhook.body).toBe(201);
    webhookId = webhook.json().id;
    // The URL itself is a secret (a Slack or Teams webhook URL is the credential): only its origin shows.
    expect(webhook.json().configuration).toEqual({ format: 'geoflow', headers: {}, has_url: true, has_signing_secret: true });
    expect(webhook.json().endpoint).toBe(`${new URL(hook.url).origin} (geoflow)`);
    expect(webhook.body).not.toContain('in-the-url');
    expect(webhook.body).not.toContain(SECRET);

    // A webhook channel without a URL, an unknown type, an unknown field: 422 naming the field.
    expect((await api.call('POST', '/api/v1/notification-channels', { name: 'x', type: 'webhook', configuration: {} })).json().error).toMatchObject({
      code: 'validation_error',
      details: { issues: [{ path: 'body.configuration.url' }] },
    });
    expect((await api.call('POST', '/api/v1/notification-channels', { name: 'x', type: 'pager', configuration: {} })).statusCode).toBe(422);

    // An update that leaves the secrets out keeps them.
    const renamed = await api.call('PUT', `/api/v1/notification-channels/${webhookId}`, { name: 'ops', type: 'webhook', configuration: { format: 'geoflow' } });
    expect(renamed.json()).toMatchObject({ name: 'ops', configuration: { has_url: true, has_signing_secret: true } });

    const tested = await api.call('POST', `/api/v1/notification-channels/${emailId}/test`);
    expect(tested.json()).toMatchObject({ ok: true, status: 'ok' });
    const test = smtp.messages().at(-1)!;
    expect(test).toMatchObject({ tls: true, auth_user: smtp.username, rcpt_tos: ['gis-team@example.org', 'oncall@example.org'] });
    expect(test.subject).toBe('[geoflow] Test notification from geoflow');
    const hookTest = await api.call('POST', `/api/v1/notification-channels/${webhookId}/test`);
    expect(hookTest.json()).toMatchObject({ ok: true });
    expect(hook.received.at(-1)).toMatchObject({ signatureValid: true });

    // A wrong password is a classified result, never the password.
    const wrong = await api.call('POST', '/api/v1/notification-channels', emailChannel({ password: 'not-the-password' }));
    const failed = await api.call('POST', `/api/v1/notification-channels/${wrong.json().id}/test`);
    expect(failed.json()).toMatchObject({ ok: false, status: 'authentication_failed' });
    expect(failed.body).not.toContain('not-the-password');
    await api.call('DELETE', `/api/v1/notification-channels/${wrong.json().id}`);
    // Without the CA, the self-signed certificate is refused: TLS is checked, not just used.
    const untrusted = await api.call('POST', '/api/v1/notification-channels', emailChannel({ ca_certificate: undefined }));
    expect((await api.call('POST', `/api/v1/notification-channels/${untrusted.json().id}/test`)).json()).toMatchObject({ ok: false, status: 'tls_error' });
    await api.call('DELETE', `/api/v1/notification-channels/${untrusted.json().id}`);

    const list = await api.call('GET', '/api/v1/notification-channels');
    expect(list.json().items.map((c: { id: string }) => c.id)).toEqual([webhookId, emailId]);
  });

  it('refuses subscriptions to channels that are not yours, and deleting a channel a Job uses', async () => {
    const bad = await api.call('POST', '/api/v1/jobs', {
      name: 'x',
      source_id: sourceId,
      destination_id: destinationId,
      notifications: [{ channel_id: 'nch_nobody', events: ['failure'] }],
    });
    expect(bad.statusCode).toBe(404);
    expect(bad.json().error.code).toBe('notification_channel_not_found');
    const slowWithout = await api.call('POST', '/api/v1/jobs', {
      name: 'x',
      source_id: sourceId,
      destination_id: destinationId,
      notifications: [{ channel_id: emailId, events: ['slow'] }],
    });
    expect(slowWithout.statusCode).toBe(422);
    expect(slowWithout.json().error.message).toMatch(/slow_after_seconds/);
    const job = await createJob({ notifications: [{ channel_id: emailId, events: ['failure'] }] });
    expect(job.notifications).toEqual([{ channel_id: emailId, events: ['failure'], slow_after_seconds: null }]);
    const refused = await api.call('DELETE', `/api/v1/notification-channels/${emailId}`);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.details.jobs).toEqual([{ id: job.id, name: 'Parcels' }]);
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  });

  it('tells of a failure by email and signed webhook, then of the recovery, each delivery recorded on the Run', async () => {
    const job = await createJob({
      source_id: missingId,
      notifications: [
        { channel_id: emailId, events: ['failure'] },
        { channel_id: webhookId, events: ['failure', 'recovery'] },
      ],
    });
    const mailsBefore = smtp.messages().length;
    const hooksBefore = hook.received.length;
    const failedId = (await api.call('POST', `/api/v1/jobs/${job.id}/run`)).json().id;
    const failed = await notified(job.id, failedId, 2);
    expect(failed.status).toBe('failed');
    expect(failed.notifications.map((n) => [n.event, n.channel_type, n.status, n.attempts]).sort()).toEqual([
      ['failure', 'email', 'delivered', 1],
      ['failure', 'webhook', 'delivered', 1],
    ]);

    const mail = smtp.messages().slice(mailsBefore);
    expect(mail).toHaveLength(1);
    expect(mail[0]).toMatchObject({ tls: true, auth_user: smtp.username, mail_from: 'geoflow@example.org' });
    expect(mail[0]!.subject).toBe('[geoflow] Job "Parcels" failed');
    expect(mail[0]!.headers['x-geoflow-event']).toBe('failure');
    expect(mail[0]!.text).toContain(failedId);
    expect(mail[0]!.text).toContain(`Link: https://geoflow.example.org/#/jobs/${job.id}/runs/${failedId}`);
    expect(mail[0]!.text).toMatch(/Error: source_failed in extract: /);

    const posted = hook.received.slice(hooksBefore);
    expect(posted).toHaveLength(1);
    expect(posted[0]).toMatchObject({ signatureValid: true, status: 200 });
    expect(posted[0]!.headers['x-geoflow-event']).toBe('failure');
    const body = JSON.parse(posted[0]!.body.toString());
    expect(body).toMatchObject({
      event: 'failure',
      job: { id: job.id, name: 'Parcels' },
      run: { id: failedId, status: 'failed', error: { code: 'source_failed' } },
    });
    expect(posted[0]!.headers['x-geoflow-delivery']).toBe(`${failedId}:failure:${webhookId}`);

    // The Source comes back: the next Run succeeds, which the webhook hears of as a recovery, the email (failure only) not at all.
    await api.call('PUT', `/api/v1/jobs/${job.id}`, {
      name: 'Parcels',
      source_id: sourceId,
      destination_id: destinationId,
      notifications: [
        { channel_id: emailId, events: ['failure'] },
        { channel_id: webhookId, events: ['failure', 'recovery'] },
      ],
    });
    const okId = (await api.call('POST', `/api/v1/jobs/${job.id}/run`)).json().id;
    const ok = await notified(job.id, okId, 1);
    expect(ok.status).toBe('succeeded');
    expect(ok.notifications).toMatchObject([{ event: 'recovery', channel_id: webhookId, status: 'delivered' }]);
    expect(JSON.parse(hook.received.at(-1)!.body.toString())).toMatchObject({ event: 'recovery', run: { id: okId, status: 'succeeded' } });
    expect(smtp.messages().length).toBe(mailsBefore + 1);

    // A second success is no recovery, and no one subscribed to success: nothing is sent.
    const againId = (await api.call('POST', `/api/v1/jobs/${job.id}/run`)).json().id;
    const again = await api.waitForRun(job.id, againId);
    expect(again.status).toBe('succeeded');
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  }, 240_000);

  it('retries a webhook that is briefly down, records a channel that refuses for good as failed, and never stores a secret', async () => {
    // The worker runs in this process: its delivery counter (what /metrics shows) is read here.
    const deliveries = async (outcome: 'sent' | 'failed') =>
      (await metrics.notificationDeliveries.get()).values.find((v) => v.labels.channel === 'webhook' && v.labels.outcome === outcome)?.value ?? 0;
    const [sentBefore, failedBefore] = [await deliveries('sent'), await deliveries('failed')];
    const flaky = await startWebhookReceiver({ secret: 'flaky-secret', answers: [503] });
    const broken = await startWebhookReceiver({ secret: 'other-secret', answers: [] });
    try {
      const flakyId = (
        await api.call('POST', '/api/v1/notification-channels', {
          name: 'flaky',
          type: 'webhook',
          configuration: { url: flaky.url, format: 'slack', signing_secret: 'flaky-secret' },
        })
      ).json().id;
      // Signed with a secret the receiver does not share: 401, which no retry can change.
      const brokenId = (
        await api.call('POST', '/api/v1/notification-channels', {
          name: 'wrong secret',
          type: 'webhook',
          configuration: { url: broken.url, signing_secret: 'not-what-it-expects' },
        })
      ).json().id;
      const job = await createJob({
        notifications: [
          { channel_id: flakyId, events: ['success'] },
          { channel_id: brokenId, events: ['success'] },
        ],
      });
      const runId = (await api.call('POST', `/api/v1/jobs/${job.id}/run`)).json().id;
      const run = await notified(job.id, runId, 2);
      const by = Object.fromEntries(run.notifications.map((n) => [n.channel_id, n]));
      expect(by[flakyId]).toMatchObject({ event: 'success', status: 'delivered', attempts: 2, error: null });
      expect(by[brokenId]).toMatchObject({ event: 'success', status: 'failed', attempts: 1 });
      expect(by[brokenId]!.error).toMatch(/answered HTTP 401/);
      // Each attempt counted: the flaky channel's 503 and the refusal failed, the retry was sent.
      expect(await deliveries('sent')).toBe(sentBefore + 1);
      expect(await deliveries('failed')).toBe(failedBefore + 2);
      // The Slack payload: a text line and blocks, signed all the same.
      expect(flaky.accepted()).toHaveLength(1);
      const slack = JSON.parse(flaky.accepted()[0]!.body.toString());
      expect(slack.text).toBe('Job "Parcels" succeeded');
      expect(slack.blocks[1].fields.map((f: { text: string }) => f.text)).toEqual(expect.arrayContaining([expect.stringContaining(runId)]));
      await api.call('DELETE', `/api/v1/jobs/${job.id}`);

      // No secret in any event, read model or Run record.
      const events = await sut.services.pool.anyFirst(sql.type(z.object({ t: z.string() }))`SELECT data::text AS t FROM events`);
      const everything = `${events.join('\n')}\n${JSON.stringify(run)}`;
      for (const secret of [smtp.password, SECRET, 'flaky-secret', 'not-what-it-expects', flaky.url, 'in-the-url']) expect(everything).not.toContain(secret);
    } finally {
      await flaky.stop();
      await broken.stop();
    }
  }, 240_000);

  it('tells of a slow Run while it still runs', async () => {
    files.put('/slow.geojson', fileBody(pointsGeoJson(dir, 3)));
    const slowSource = (await api.call('POST', '/api/v1/sources', { name: 'slow', type: 'url', configuration: { url: `${files.url}/slow.geojson` } })).json()
      .id;
    const held = files.hold('/slow.geojson');
    const job = await createJob({ source_id: slowSource, notifications: [{ channel_id: webhookId, events: ['slow'], slow_after_seconds: 1 }] });
    const before = hook.received.length;
    const runId = (await api.call('POST', `/api/v1/jobs/${job.id}/run`)).json().id;
    const watched = await api.waitForRun(job.id, runId, (r) => (r as RunWithNotifications).notifications.length >= 1, 60_000);
    expect(watched.status).toBe('running');
    expect((watched as RunWithNotifications).notifications).toMatchObject([{ event: 'slow', status: 'delivered' }]);
    const body = JSON.parse(hook.received.slice(before)[0]!.body.toString());
    expect(body).toMatchObject({ event: 'slow', slow_after_seconds: 1, run: { id: runId, status: 'running', finished_at: null } });
    held.release();
    expect((await api.waitForRun(job.id, runId)).status).toBe('succeeded');
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  }, 120_000);

  it('tells of a Job that disabled itself after repeated failed scheduled Runs', async () => {
    const job = await createJob({
      source_id: missingId,
      schedule: { kind: 'daily', timezone: 'UTC', hour: 3, minute: 0 },
      notifications: [{ channel_id: emailId, events: ['auto_disable'] }],
    });
    const handle = sut.services.temporal!.schedule.getHandle(scheduleIdOf(job.id));
    const runs = async () => (await api.call('GET', `/api/v1/jobs/${job.id}/runs`)).json().items as RunWithNotifications[];
    let triggeredAt = 0;
    for (let n = 1; n <= 2; n++) {
      // Temporal names a scheduled workflow by its fire time to the second: keep the triggers apart
      // (a later second is the condition, so this sleeps on purpose).
      await new Promise((r) => setTimeout(r, Math.max(0, triggeredAt + 1_500 - Date.now())));
      triggeredAt = Date.now();
      await handle.trigger();
      await untilRead(`failed Run ${n}`, runs, (all) => all.filter((r) => finished(r.status)).length >= n, 60_000);
    }
    const last = (await runs())[0]!;
    const told = await notified(job.id, last.id, 1);
    expect(told.notifications).toMatchObject([{ event: 'auto_disable', channel_id: emailId, status: 'delivered' }]);
    const mail = smtp.messages().at(-1)!;
    expect(mail.subject).toBe('[geoflow] Job "Parcels" disabled itself after repeated failures');
    expect(mail.text).toMatch(/Why: Disabled after 2 consecutive failed automated Runs/);
    await api.call('DELETE', `/api/v1/jobs/${job.id}`);
  }, 240_000);
});
