import { readFileSync, statSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { webhook as sut } from '../../connectors/webhook/index.js';
import type { DeliverInput } from '../../connectors/types.js';
import { fixtureDir, twoLayerGpkg } from '../support/fixtures.js';
import { startHttpFixtureServer, type HttpFixtureServer } from '../servers/http/server.js';
import { startWebhookReceiver, type WebhookReceiver } from '../servers/http/webhook-receiver.js';
import { closedPort, connectorContext, expectConnectorError } from './support.js';

const SECRET = 'whsec-5b0e9d2a';
const TOKEN = 'whtok-1f7c33';

describe('webhook connector against a local receiver', () => {
  const dir = fixtureDir();
  const gpkg = twoLayerGpkg(dir);
  const receivers: WebhookReceiver[] = [];
  let files: HttpFixtureServer;
  const receiver = async (options: Parameters<typeof startWebhookReceiver>[0] = {}) => {
    const r = await startWebhookReceiver(options);
    receivers.push(r);
    return r;
  };
  const config = (c: Record<string, unknown>) => sut.configuration.parse(c);
  const input = (overrides: Partial<DeliverInput> = {}): DeliverInput => ({
    file: gpkg,
    filename: 'city.gpkg',
    format: 'GPKG',
    mediaType: 'application/geopackage+sqlite3',
    layers: ['places', 'owners'],
    deliveryId: `dl_${Math.random().toString(16).slice(2)}`,
    ...overrides,
  });
  const deliver = (c: Record<string, unknown>, i = input()) => sut.destination!.deliver(config(c), {}, i, connectorContext());

  beforeAll(async () => {
    files = await startHttpFixtureServer({ dir });
  });
  afterAll(async () => {
    for (const r of receivers) await r.stop();
    await files?.stop();
  });

  it('tests with a signed ping, and classifies what the receiver answers', async () => {
    const hook = await receiver({ secret: SECRET, bearer: TOKEN });
    const ok = await sut.test!(config({ url: hook.url, signing_secret: SECRET, bearer_token: TOKEN }), connectorContext());
    expect(ok).toMatchObject({ ok: true, status: 'ok', tried: { url: hook.url, signed: true } });
    expect(hook.received[0]).toMatchObject({ signatureValid: true, headers: { 'x-geoflow-event': 'ping', 'content-type': 'application/json' } });
    expect(JSON.parse(hook.received[0]!.body.toString())).toEqual({ event: 'ping' });

    const wrongSecret = await sut.test!(config({ url: hook.url, signing_secret: 'not the secret', bearer_token: TOKEN }), connectorContext());
    expect(wrongSecret).toMatchObject({ ok: false, status: 'authentication_failed' });
    expect(await sut.test!(config({ url: hook.url, signing_secret: SECRET }), connectorContext())).toMatchObject({
      ok: false,
      status: 'authentication_failed',
    });
    expect(await sut.test!(config({ url: `${files.url}/status/404` }), connectorContext())).toMatchObject({ ok: false, status: 'not_found' });
    expect(await sut.test!(config({ url: `${files.url}/status/503` }), connectorContext())).toMatchObject({ ok: false, status: 'server_error' });
    expect(await sut.test!(config({ url: `http://127.0.0.1:${await closedPort()}/hook` }), connectorContext())).toMatchObject({
      ok: false,
      status: 'unreachable',
    });
    const redirected = await sut.test!(config({ url: `${files.url}/redirect-to?url=${encodeURIComponent(hook.url)}&code=307` }), connectorContext());
    expect(redirected).toMatchObject({ ok: false, status: 'invalid_response' });
    expect(redirected.message).toContain('save the final URL');
  });

  it('POSTs the file as the body, described and signed by headers', async () => {
    const hook = await receiver({ secret: SECRET, bearer: TOKEN });
    const i = input();
    const result = await deliver({ url: hook.url, signing_secret: SECRET, bearer_token: TOKEN, headers: { 'X-Team': 'gis' } }, i);
    expect(result).toEqual({ target: { url: hook.url, http_status: 200 }, bytes_written: statSync(gpkg).size });
    expect(hook.received).toHaveLength(1);
    const got = hook.received[0]!;
    expect(got.signatureValid).toBe(true);
    expect(got.body.equals(readFileSync(gpkg))).toBe(true);
    expect(got.headers).toMatchObject({
      'content-type': 'application/geopackage+sqlite3',
      'content-length': String(statSync(gpkg).size),
      'content-disposition': `attachment; filename="city.gpkg"; filename*=UTF-8''city.gpkg`,
      'x-geoflow-event': 'delivery',
      'x-geoflow-delivery': i.deliveryId,
      'idempotency-key': i.deliveryId,
      'x-geoflow-format': 'GPKG',
      'x-geoflow-filename': 'city.gpkg',
      'x-geoflow-layers': 'places,owners',
      'x-team': 'gis',
      authorization: `Bearer ${TOKEN}`,
    });
    expect(Number(got.headers['x-geoflow-timestamp'])).toBeGreaterThan(1_700_000_000);
  });

  it('percent-encodes names in any script, commas in layer names included', async () => {
    const hook = await receiver();
    await deliver({ url: hook.url }, input({ filename: 'Straßen Zürich.gpkg', layers: ['Straßen', 'a,b'] }));
    const h = hook.received[0]!.headers;
    expect(decodeURIComponent(String(h['x-geoflow-filename']))).toBe('Straßen Zürich.gpkg');
    expect(String(h['x-geoflow-layers']).split(',').map(decodeURIComponent)).toEqual(['Straßen', 'a,b']);
    expect(h['content-disposition']).toBe(`attachment; filename="Stra_en Z_rich.gpkg"; filename*=UTF-8''Stra%C3%9Fen%20Z%C3%BCrich.gpkg`);
    expect(hook.received[0]!.signatureValid).toBeNull();
  });

  it('a 5xx is retryable, and the retry carries the same delivery id so the receiver acts once', async () => {
    const hook = await receiver({ secret: SECRET, answers: [503] });
    const i = input();
    const failed = await expectConnectorError(deliver({ url: hook.url, signing_secret: SECRET }, i), 'server_error');
    expect(failed.retryable).toBe(true);
    await deliver({ url: hook.url, signing_secret: SECRET }, i);
    // a retry after a lost answer: the receiver sees the id again and does nothing twice
    await deliver({ url: hook.url, signing_secret: SECRET }, i);
    expect(hook.received.map((r) => [r.status, r.headers['x-geoflow-delivery'], r.duplicate])).toEqual([
      [503, i.deliveryId, false],
      [200, i.deliveryId, false],
      [200, i.deliveryId, true],
    ]);
    expect(hook.accepted()).toHaveLength(1);
    expect(hook.received.every((r) => r.signatureValid)).toBe(true);
  });

  it('4xx answers are final; secrets and the receiver’s echo never appear in errors', async () => {
    for (const [status, reason] of [
      [400, 'invalid_response'],
      [403, 'permission_denied'],
      [413, 'too_large'],
      [422, 'invalid_response'],
    ] as const) {
      const hook = await receiver({ answers: [status] });
      const error = await expectConnectorError(deliver({ url: hook.url, signing_secret: SECRET, bearer_token: TOKEN }), reason);
      expect(error.retryable, `${status}`).toBe(false);
      expect(error.details.http_status).toBe(status);
      const shown = JSON.stringify({ message: error.message, details: error.details });
      expect(shown).not.toContain(SECRET);
      expect(shown).not.toContain(TOKEN);
      expect(shown).not.toContain('echo');
    }
    const hook = await receiver({ answers: [429] });
    expect((await expectConnectorError(deliver({ url: hook.url }), 'server_error')).retryable).toBe(true);
    expect((await expectConnectorError(deliver({ url: `http://127.0.0.1:${await closedPort()}/hook` }), 'unreachable')).retryable).toBe(true);
  });
});
