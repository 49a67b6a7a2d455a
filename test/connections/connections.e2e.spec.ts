import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'slonik';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { registerUser } from '../../application/accounts.js';
import { createToken, login } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest } from '../support/e2e.js';

const SECRET = 'pw-0f1e2d3c-plain-secret';
const it = e2eTest({ scopes: ['sources:read', 'sources:write', 'destinations:read', 'destinations:write'] });

describe.skipIf(skipWithoutDatabase)('Sources and Destinations through /api/v1', () => {
  let files: Server;
  let filesUrl: string;

  beforeAll(async () => {
    files = createServer((req, res) => {
      if (req.url === '/data.geojson') return res.writeHead(200, { 'content-type': 'application/geo+json' }).end('{"type":"FeatureCollection","features":[]}');
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    files?.close();
  });

  const postgis = { host: '127.0.0.1', database: 'gis', username: 'loader', password: SECRET };

  it('creates, lists, gets, updates and deletes; secrets are write-only flags', async ({ send: call }) => {
    const created = await call('POST', '/api/v1/sources', { name: 'Warehouse', type: 'postgis', configuration: postgis });
    expect(created.statusCode).toBe(201);
    const source = created.json();
    expect(source).toMatchObject({
      name: 'Warehouse',
      type: 'postgis',
      configuration: { host: '127.0.0.1', port: 5432, ssl_mode: 'prefer', has_password: true },
    });
    expect(source.id).toMatch(/^src_/);
    expect(created.body).not.toContain(SECRET);
    expect(source.configuration).not.toHaveProperty('password');

    expect((await call('GET', `/api/v1/sources/${source.id}`)).json()).toEqual(source);
    const list = (await call('GET', '/api/v1/sources?limit=1')).json();
    expect(list.items.map((s: { id: string }) => s.id)).toEqual([source.id]);

    // omitted secret is kept, null clears it
    const kept = await call('PUT', `/api/v1/sources/${source.id}`, {
      name: 'Warehouse 2',
      type: 'postgis',
      configuration: { ...postgis, password: undefined },
    });
    expect(kept.statusCode).toBe(200);
    expect(kept.json()).toMatchObject({ name: 'Warehouse 2', configuration: { has_password: true } });
    const cleared = await call('PUT', `/api/v1/sources/${source.id}`, { name: 'Warehouse 2', type: 'postgis', configuration: { ...postgis, password: null } });
    expect(cleared.json().configuration.has_password).toBe(false);

    // a Source is not a Destination
    expect((await call('GET', `/api/v1/destinations/${source.id}`)).json().error.code).toBe('destination_not_found');
    expect((await call('DELETE', `/api/v1/sources/${source.id}`)).statusCode).toBe(204);
    expect((await call('GET', `/api/v1/sources/${source.id}`)).json().error.code).toBe('source_not_found');
  });

  it('keeps plain secrets out of events and read models (sealed with AES-256-GCM)', async ({ sut, send: call }) => {
    const created = (await call('POST', '/api/v1/destinations', { name: 'Out', type: 'postgis', configuration: postgis })).json();
    const events = await sut.services.pool.anyFirst(sql.unsafe`SELECT data::text FROM events WHERE stream_id = ${`destination-${created.id}`}`);
    expect(events.length).toBe(1);
    expect(String(events[0])).not.toContain(SECRET);
    expect(String(events[0])).toMatch(/"password": ?"v1\./);
    const row = (await sut.services.pool.one(sql.unsafe`SELECT row_to_json(c)::text AS j FROM rm.connections c WHERE id = ${created.id}`)) as { j: string };
    expect(String(row.j)).not.toContain(SECRET);
    expect(String(row.j)).not.toContain('v1.');
  });

  it('refuses unknown types, unknown fields and Source-only types as Destinations with a 422 naming the field', async ({ send: call }) => {
    const unknown = await call('POST', '/api/v1/sources', { name: 'x', type: 'duckdb', configuration: {} });
    expect(unknown.statusCode).toBe(422);
    expect(unknown.json().error.details.issues[0].path).toBe('body.type');
    const sourceOnly = await call('POST', '/api/v1/destinations', {
      name: 'x',
      type: 'featureserver',
      configuration: { url: 'https://example.org/FeatureServer' },
    });
    expect(sourceOnly.statusCode).toBe(422);
    expect(sourceOnly.json().error.details.issues[0].path).toBe('body.type');
    const extra = await call('POST', '/api/v1/sources', { name: 'x', type: 'postgis', configuration: { ...postgis, colour: 'red' } });
    expect(extra.statusCode).toBe(422);
    expect(extra.json().error.message).toContain('colour');
    expect(extra.body).not.toContain(SECRET);
    const missing = await call('POST', '/api/v1/sources', { name: 'x', type: 'postgis', configuration: { host: 'h' } });
    expect(missing.statusCode).toBe(422);
    expect(missing.json().error.details.issues.map((i: { path: string }) => i.path)).toContain('body.configuration.database');
  });

  it("another user's connections are missing to them; scopes are enforced", async ({ sut, send: call }) => {
    const mine = (await call('POST', '/api/v1/sources', { name: 'Mine', type: 'url', configuration: { url: `${filesUrl}/data.geojson` } })).json();
    await registerUser(sut.services, { email: 'other@example.com', password: 'another long password' });
    const otherCookie = await login(sut.app, { email: 'other@example.com', password: 'another long password' });
    const other = await createToken(sut.app, otherCookie, ['sources:read', 'sources:write']);
    for (const [method, url] of [
      ['GET', `/api/v1/sources/${mine.id}`],
      ['DELETE', `/api/v1/sources/${mine.id}`],
      ['POST', `/api/v1/sources/${mine.id}/test`],
      ['GET', `/api/v1/sources/${mine.id}/discover`],
    ] as const) {
      const res = await call(method, url, undefined, other);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().error.code).toBe('source_not_found');
    }
    expect((await call('GET', '/api/v1/sources', undefined, other)).json().items).toEqual([]);
    const readOnly = await createToken(sut.app, otherCookie, ['sources:read']);
    const refused = await call('POST', '/api/v1/sources', { name: 'x', type: 'url', configuration: { url: 'https://example.org/a.geojson' } }, readOnly);
    expect(refused.statusCode).toBe(403);
  });

  it('tests drafts and saved connections with a classified, secret-free result', async ({ send: call }) => {
    const ok = await call('POST', '/api/v1/sources/test', { type: 'url', configuration: { url: `${filesUrl}/data.geojson` } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toMatchObject({ ok: true, status: 'ok' });
    const missing = await call('POST', '/api/v1/sources/test', { type: 'url', configuration: { url: `${filesUrl}/nothing.geojson` } });
    expect(missing.json()).toMatchObject({ ok: false, status: 'not_found' });
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(p));
      });
    });
    const closed = await call('POST', '/api/v1/sources/test', { type: 'url', configuration: { url: `http://127.0.0.1:${port}/x.geojson` } });
    expect(closed.json()).toMatchObject({ ok: false, status: 'unreachable' });
    const saved = (await call('POST', '/api/v1/sources', { name: 'File', type: 'url', configuration: { url: `${filesUrl}/data.geojson` } })).json();
    expect((await call('POST', `/api/v1/sources/${saved.id}/test`)).json()).toMatchObject({ ok: true });
    // Every type is implemented now: a draft test of one of the last to land (geonode) against a
    // closed port is a classified failure, never not_implemented, and says nothing secret.
    const later = await call('POST', '/api/v1/destinations/test', {
      type: 'geonode',
      configuration: { url: `http://127.0.0.1:${port}`, username: 'u', password: SECRET },
    });
    expect(later.statusCode).toBe(200);
    expect(later.json()).toMatchObject({ ok: false, status: 'unreachable' });
    expect(later.body).not.toContain(SECRET);
  });

  it('discovery is for types that can list their tables (not url)', async ({ send: call }) => {
    const saved = (await call('POST', '/api/v1/sources', { name: 'File', type: 'url', configuration: { url: `${filesUrl}/data.geojson` } })).json();
    const res = await call('GET', `/api/v1/sources/${saved.id}/discover`);
    expect(res.statusCode).toBe(400);
    expect(res.json().error.code).toBe('invalid_source');
  });

  it('serves the connector catalogue without a token', async ({ sut }) => {
    const res = await sut.app.inject({ method: 'GET', url: '/api/v1/connectors' });
    expect(res.statusCode).toBe(200);
    const items = res.json().items as { type: string; kinds: string[]; secrets: string[] }[];
    const typesOf = (kind: string) =>
      items
        .filter((c) => c.kinds.includes(kind))
        .map((c) => c.type)
        .sort();
    expect(typesOf('source')).toEqual(
      [
        'url',
        'http',
        's3',
        'azureblob',
        'gdrive',
        'featureserver',
        'postgis',
        'sqlserver',
        'mysql',
        'oracle',
        'bigquery',
        'snowflake',
        'geoserver',
        'geonode',
        'ogcfeatures',
        'stac',
        'ckan',
        'hub',
        'qfieldcloud',
        'merginmaps',
      ].sort(),
    );
    expect(typesOf('destination')).toEqual(
      [
        'postgis',
        'sqlserver',
        'mysql',
        'oracle',
        'bigquery',
        'snowflake',
        's3',
        'azureblob',
        'gdrive',
        'sftp',
        'hub',
        'geoserver',
        'geonode',
        'webhook',
      ].sort(),
    );
    expect(items.find((c) => c.type === 'postgis')!.secrets).toEqual(['password']);
  });
});
