import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { http as sut } from '../../connectors/http/index.js';
import { fixtureDir, pointsGeoJson } from '../support/fixtures.js';
import { startHttpFixtureServer, type HttpFixtureServer } from '../servers/http/server.js';
import { closedPort, connectorContext, expectConnectorError } from './support.js';

const PASSWORD = 'pw-http-7c1d';
const TOKEN = 'tok-http-93ab';
const KEY = 'key-http-51fe';

describe('http connector against a local HTTP server', () => {
  const dir = fixtureDir();
  let server: HttpFixtureServer;
  let elsewhere: HttpFixtureServer;
  const config = (c: Record<string, unknown>) => sut.configuration.parse(c);
  const extract = (c: Record<string, unknown>, ctx = connectorContext(), cursor?: unknown) =>
    sut.source!.extract(config(c), {}, ctx, { sync: cursor === undefined ? null : { cursor } });
  const test = (c: Record<string, unknown>) => sut.test!(config(c), connectorContext());
  const basic = { auth: 'basic', username: 'reader', password: PASSWORD };
  const bearer = { auth: 'bearer', bearer_token: TOKEN };
  const header = { auth: 'header', api_key_header: 'X-API-Key', api_key: KEY };

  beforeAll(async () => {
    pointsGeoJson(dir, 25);
    const credentials = { basic: { username: 'reader', password: PASSWORD }, bearer: TOKEN, apiKey: { header: 'X-API-Key', value: KEY } };
    server = await startHttpFixtureServer({ dir, ...credentials });
    elsewhere = await startHttpFixtureServer({ dir, ...credentials });
  });
  afterAll(async () => {
    await server?.stop();
    await elsewhere?.stop();
  });

  it('tests each authentication scheme, and says which credential is wrong or missing', async () => {
    const file = `${server.url}/files/places.geojson`;
    expect(await test({ url: `${server.url}/basic/files/places.geojson`, ...basic })).toMatchObject({ ok: true, tried: { method: 'GET', auth: 'basic' } });
    expect(await test({ url: `${server.url}/bearer/files/places.geojson`, ...bearer })).toMatchObject({ ok: true });
    expect(await test({ url: `${server.url}/key/files/places.geojson`, ...header })).toMatchObject({ ok: true });
    expect(await test({ url: `${server.url}/basic/files/places.geojson`, ...basic, password: 'wrong' })).toMatchObject({
      ok: false,
      status: 'authentication_failed',
    });
    expect(await test({ url: `${server.url}/bearer/files/places.geojson`, ...bearer, bearer_token: 'wrong' })).toMatchObject({
      ok: false,
      status: 'authentication_failed',
    });
    const unsaved = await test({ url: file, auth: 'basic', username: 'reader' });
    expect(unsaved).toMatchObject({ ok: false, status: 'authentication_failed', tried: { url: file } });
    expect(unsaved.message).toContain('no password is saved');
    expect(await test({ url: `http://127.0.0.1:${await closedPort()}/x`, ...bearer })).toMatchObject({ ok: false, status: 'unreachable' });
    expect(await test({ url: `${server.url}/status/500`, ...bearer })).toMatchObject({ ok: false, status: 'server_error' });
  });

  it('tests a POST endpoint with its real request', async () => {
    const ok = await test({ url: `${server.url}/bearer/export`, method: 'POST', body: '{"count": 2}', ...bearer });
    expect(ok).toMatchObject({ ok: true, tried: { method: 'POST' } });
    expect(server.requests.at(-1)).toMatchObject({ method: 'POST', body: '{"count": 2}' });
    // the export endpoint refuses GET: a test with the wrong method says the answer was unexpected
    expect(await test({ url: `${server.url}/export` })).toMatchObject({ ok: false, status: 'invalid_response' });
  });

  it('sends basic, bearer and API-key credentials and custom headers', async () => {
    const viaBasic = await extract({ url: `${server.url}/basic/files/places.geojson`, ...basic, headers: { 'X-Tenant': 'north' } });
    expect(JSON.parse(readFileSync(viaBasic.file, 'utf8')).features).toHaveLength(25);
    expect(server.requests.at(-1)!.headers).toMatchObject({ 'x-tenant': 'north', 'user-agent': 'geoflow' });
    expect((await extract({ url: `${server.url}/bearer/files/places.geojson`, ...bearer })).bytes).toBeGreaterThan(0);
    expect((await extract({ url: `${server.url}/key/files/places.geojson`, ...header })).bytes).toBeGreaterThan(0);
    expect(server.requests.at(-1)!.headers['x-api-key']).toBe(KEY);
    const refused = await expectConnectorError(extract({ url: `${server.url}/key/files/places.geojson`, ...header, api_key: 'nope' }), 'authentication_failed');
    expect(refused.retryable).toBe(false);
    expect(JSON.stringify(refused)).not.toContain('nope');
  });

  it('POSTs a body (JSON by default) and names the file from Content-Disposition', async () => {
    const got = await extract({ url: `${server.url}/bearer/export`, method: 'POST', body: '{"count": 7}', ...bearer });
    expect(got.filename).toBe('export.geojson');
    expect(JSON.parse(readFileSync(got.file, 'utf8')).features).toHaveLength(7);
    expect(server.requests.at(-1)!.headers['content-type']).toBe('application/json');
    // a Content-Type of the user's own wins
    await expectConnectorError(
      extract({ url: `${server.url}/export`, method: 'POST', body: '{"count": 1}', headers: { 'Content-Type': 'text/csv' } }),
      'invalid_response',
    );
    expect(server.requests.at(-1)!.headers['content-type']).toBe('text/csv');
    // GET sends no body even when one is saved
    await extract({ url: `${server.url}/files/places.geojson`, body: 'ignored' });
    expect(server.requests.at(-1)).toMatchObject({ method: 'GET', body: '' });
  });

  it('keeps credentials on a same-origin redirect and drops them on a redirect to another origin', async () => {
    const same = await extract({ url: `${server.url}/redirect/2/key/files/places.geojson`, ...header });
    expect(same.bytes).toBeGreaterThan(0);

    const away = `${server.url}/redirect-to?url=${encodeURIComponent(`${elsewhere.url}/files/places.geojson`)}`;
    for (const auth of [basic, bearer, header]) {
      const before = elsewhere.requests.length;
      await extract({ url: away, ...auth, headers: { 'X-Tenant': 'north' } });
      const arrived = elsewhere.requests.slice(before);
      expect(arrived).toHaveLength(1);
      expect(arrived[0]!.headers.authorization).toBeUndefined();
      expect(arrived[0]!.headers['x-api-key']).toBeUndefined();
      expect(arrived[0]!.headers['x-tenant']).toBe('north');
    }
    // so a file that needs the credentials is refused there rather than handed them
    const protectedAway = `${server.url}/redirect-to?url=${encodeURIComponent(`${elsewhere.url}/bearer/files/places.geojson`)}`;
    await expectConnectorError(extract({ url: protectedAway, ...bearer }), 'authentication_failed');
  });

  it('reads incrementally with ETag, credentials and all', async () => {
    const c = { url: `${server.url}/bearer/files/places.geojson`, ...bearer };
    const first = await extract(c);
    const again = await extract(c, connectorContext(), first.sync!.cursor);
    expect(again.unchanged).toBe(true);
    expect(server.requests.at(-1)!.headers).toMatchObject({ authorization: `Bearer ${TOKEN}`, 'if-none-match': (first.sync!.cursor as { etag: string }).etag });
  });

  it('refuses credentials in plain headers, and header values that would split a request', () => {
    const auth = sut.configuration.safeParse({ url: 'https://example.org/x', headers: { Authorization: 'Bearer abc' } });
    expect(auth.success).toBe(false);
    expect(auth.error!.issues[0]).toMatchObject({ path: ['headers', 'Authorization'] });
    expect(auth.error!.issues[0]!.message).toContain('auth fields');
    expect(sut.configuration.safeParse({ url: 'https://example.org/x', headers: { 'X-A': 'a\r\nHost: evil' } }).success).toBe(false);
    expect(sut.configuration.safeParse({ url: 'https://user:pw@example.org/x' }).success).toBe(false);
  });
});
