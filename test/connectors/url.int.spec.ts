import { readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { url as sut } from '../../connectors/url/index.js';
import { fixtureDir, pointsGeoJson } from '../support/fixtures.js';
import { startHttpFixtureServer, type HttpFixtureServer } from '../servers/http/server.js';
import { until } from '../support/until.js';
import { closedPort, connectorContext, expectConnectorError, filesIn } from './support.js';

describe('url connector against a local HTTP server', () => {
  const dir = fixtureDir();
  let server: HttpFixtureServer;
  const extract = (url: string, ctx = connectorContext(), sync: unknown = null) =>
    sut.source!.extract({ url }, {}, ctx, { sync: sync === null ? null : { cursor: sync } });
  const test = (url: string, ctx = connectorContext()) => sut.test!({ url }, ctx);

  beforeAll(async () => {
    pointsGeoJson(dir, 25);
    server = await startHttpFixtureServer({ dir, basic: { username: 'reader', password: 'open sesame' } });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('tests: ok, not found, authentication, server error, closed port, no answer in time', async () => {
    expect(await test(`${server.url}/files/places.geojson`)).toMatchObject({ ok: true, status: 'ok', tried: { url: `${server.url}/files/places.geojson` } });
    expect(await test(`${server.url}/files/nothing.geojson`)).toMatchObject({ ok: false, status: 'not_found' });
    expect(await test(`${server.url}/basic/files/places.geojson`)).toMatchObject({ ok: false, status: 'authentication_failed' });
    expect(await test(`${server.url}/status/403`)).toMatchObject({ ok: false, status: 'permission_denied' });
    expect(await test(`${server.url}/status/503`)).toMatchObject({ ok: false, status: 'server_error' });
    expect(await test(`http://127.0.0.1:${await closedPort()}/x.geojson`)).toMatchObject({ ok: false, status: 'unreachable' });
    const controller = new AbortController();
    const pending = test(`${server.url}/hang`, connectorContext({ signal: controller.signal }));
    // the deadline passes while the server holds the request
    await until('the request to reach /hang', () => server.requests.some((r) => r.path === '/hang'));
    controller.abort();
    expect(await pending).toMatchObject({ ok: false, status: 'timeout' });
  });

  it('the query string (it may hold a key) never appears in what the test reports', async () => {
    const result = await test(`${server.url}/files/places.geojson?key=do-not-show-me`);
    expect(result.ok).toBe(true);
    expect(JSON.stringify(result)).not.toContain('do-not-show-me');
  });

  it('downloads a file to the work folder, whole and under its own name', async () => {
    const ctx = connectorContext();
    const got = await extract(`${server.url}/files/places.geojson`, ctx);
    expect(got.filename).toBe('places.geojson');
    expect(path.dirname(got.file)).toBe(ctx.workDir);
    expect(readFileSync(got.file, 'utf8')).toBe(readFileSync(path.join(dir, 'places.geojson'), 'utf8'));
    expect(got.bytes).toBe(readFileSync(path.join(dir, 'places.geojson')).length);
    expect(got.unchanged).toBeFalsy();
  });

  it('follows redirects and names the file after the final URL or Content-Disposition', async () => {
    const hops = await extract(`${server.url}/redirect/3/files/places.geojson`);
    expect(hops.filename).toBe('places.geojson');
    expect(JSON.parse(readFileSync(hops.file, 'utf8')).features).toHaveLength(25);
    const named = await extract(`${server.url}/files/places.geojson?disposition=${encodeURIComponent('Zürich places.geojson')}`);
    expect(named.filename).toBe('Zürich places.geojson');
    // The same name as raw UTF-8 bytes (Latin-1 bytes above): both read as the server meant them.
    const utf8 = await extract(`${server.url}/files/places.geojson?disposition_utf8=${encodeURIComponent('Zürich places.geojson')}`);
    expect(utf8.filename).toBe('Zürich places.geojson');
    const endless = await expectConnectorError(extract(`${server.url}/redirect/11/files/places.geojson`), 'invalid_response');
    expect(endless.message).toContain('redirected more than 10 times');
  });

  it('inflates a file the server sent compressed (Content-Encoding: gzip)', async () => {
    const got = await extract(`${server.url}/files/places.geojson?gzip=1`);
    expect(readFileSync(got.file, 'utf8')).toBe(readFileSync(path.join(dir, 'places.geojson'), 'utf8'));
    expect(got.bytes).toBe(readFileSync(path.join(dir, 'places.geojson')).length);
  });

  it('enforces the size limit while streaming: the transfer stops early and leaves no file', async () => {
    const ctx = connectorContext({ maxBytes: 256 * 1024 });
    const total = 64 * 1024 * 1024;
    const before = server.requests.length;
    const error = await expectConnectorError(extract(`${server.url}/stream?bytes=${total}`, ctx), 'too_large');
    expect(error.retryable).toBe(false);
    expect(error.details.max_bytes).toBe(256 * 1024);
    expect(filesIn(ctx.workDir)).toEqual([]);
    // the server was cut off long before it could send the whole body (no Content-Length here)
    const streamed = server.requests.slice(before).find((r) => r.path.startsWith('/stream'))!;
    await until('the server to see the stream end', () => streamed.over);
    expect(streamed.sent!).toBeLessThan(total / 4);

    // a declared Content-Length over the limit is refused before any byte is written
    const declared = connectorContext({ maxBytes: 256 * 1024 });
    await expectConnectorError(extract(`${server.url}/stream?bytes=${1024 * 1024}&declare=1`, declared), 'too_large');
    expect(filesIn(declared.workDir)).toEqual([]);

    // and a stream under the limit arrives whole
    const small = await extract(`${server.url}/stream?bytes=${100 * 1024}`, connectorContext({ maxBytes: 256 * 1024 }));
    expect(JSON.parse(readFileSync(small.file, 'utf8')).type).toBe('FeatureCollection');
  });

  it('reads incrementally with ETag: unchanged until the file changes', async () => {
    writeFileSync(path.join(dir, 'etag.geojson'), readFileSync(path.join(dir, 'places.geojson')));
    const first = await extract(`${server.url}/files/etag.geojson`);
    const cursor = first.sync!.cursor as { etag: string; last_modified: string };
    expect(cursor.etag).toMatch(/^"[0-9a-f]{40}"$/);
    const ctx = connectorContext();
    const second = await extract(`${server.url}/files/etag.geojson`, ctx, cursor);
    expect(second).toMatchObject({ unchanged: true, bytes: 0 });
    expect(second.sync!.cursor).toEqual(cursor);
    expect(filesIn(ctx.workDir)).toEqual([]);
    expect(server.requests.at(-1)!.headers['if-none-match']).toBe(cursor.etag);

    writeFileSync(path.join(dir, 'etag.geojson'), JSON.stringify({ type: 'FeatureCollection', features: [] }));
    const third = await extract(`${server.url}/files/etag.geojson`, connectorContext(), cursor);
    expect(third.unchanged).toBeFalsy();
    expect((third.sync!.cursor as { etag: string }).etag).not.toBe(cursor.etag);
    expect(JSON.parse(readFileSync(third.file, 'utf8')).features).toEqual([]);
  });

  it('reads incrementally with Last-Modified when the server sends no ETag', async () => {
    const file = path.join(dir, 'dated.geojson');
    writeFileSync(file, readFileSync(path.join(dir, 'places.geojson')));
    utimesSync(file, new Date('2024-05-01T10:00:00Z'), new Date('2024-05-01T10:00:00Z'));
    const first = await extract(`${server.url}/files/dated.geojson?noetag=1`);
    expect(first.sync!.cursor).toEqual({ etag: null, last_modified: 'Wed, 01 May 2024 10:00:00 GMT' });
    const second = await extract(`${server.url}/files/dated.geojson?noetag=1`, connectorContext(), first.sync!.cursor);
    expect(second.unchanged).toBe(true);
    expect(server.requests.at(-1)!.headers['if-modified-since']).toBe('Wed, 01 May 2024 10:00:00 GMT');
    utimesSync(file, new Date('2024-06-01T10:00:00Z'), new Date('2024-06-01T10:00:00Z'));
    const third = await extract(`${server.url}/files/dated.geojson?noetag=1`, connectorContext(), first.sync!.cursor);
    expect(third.unchanged).toBeFalsy();
    expect(third.sync!.cursor).toEqual({ etag: null, last_modified: 'Sat, 01 Jun 2024 10:00:00 GMT' });
  });

  it('classifies failures: 404 and 401 are final, 5xx and refused connections are retried', async () => {
    const missing = await expectConnectorError(extract(`${server.url}/files/nothing.geojson`), 'not_found');
    expect(missing.retryable).toBe(false);
    expect(missing.details).toMatchObject({ http_status: 404 });
    expect((await expectConnectorError(extract(`${server.url}/basic/files/places.geojson`), 'authentication_failed')).retryable).toBe(false);
    expect((await expectConnectorError(extract(`${server.url}/status/502`), 'server_error')).retryable).toBe(true);
    expect((await expectConnectorError(extract(`${server.url}/status/429`), 'server_error')).retryable).toBe(true);
    expect((await expectConnectorError(extract(`http://127.0.0.1:${await closedPort()}/x.geojson`), 'unreachable')).retryable).toBe(true);
    await expectConnectorError(extract(`${server.url}/status/204`), 'invalid_data');
  });
});
