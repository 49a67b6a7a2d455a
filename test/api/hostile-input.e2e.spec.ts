import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { startHubStandIn, type HubStandIn } from '../servers/hub/server.js';
import { bearer } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest } from '../support/e2e.js';
import { ALL_SCOPES } from '../support/service-processes.js';

/*
 * Issue 32, finding 7, what the API answers to input it cannot keep or a remote it cannot trust:
 * a lone UTF-16 surrogate in any text of any JSON body is a 422 (it reached the event store and
 * answered 500); an Oracle connect_string with user/password@ is refused (it was stored and shown
 * in plain text); a portal item without an owner is listed (the hub browse answered 500).
 */

/** The harness's request, but with the body written by JSON.stringify (see below). */
const it = e2eTest({ scopes: ALL_SCOPES }).extend<{
  $file: { call: (method: 'GET' | 'POST' | 'PUT', url: string, payload?: unknown) => Promise<LightMyRequestResponse> };
}>({
  call: [
    async ({ sut, token }, use) =>
      use((method, url, payload) =>
        sut.app.inject({
          method,
          url,
          headers: { ...bearer(token), 'content-type': 'application/json' },
          // JSON.stringify writes a lone surrogate as the escape \ud800: valid JSON, which parses back to it.
          ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
        }),
      ),
    { scope: 'file' },
  ],
});

describe.skipIf(skipWithoutDatabase)('input the service cannot keep, answers it cannot trust', () => {
  let portal: HubStandIn;

  beforeAll(async () => {
    portal = await startHubStandIn();
  });
  afterAll(async () => {
    await portal?.stop();
  });

  it('a lone surrogate anywhere in a JSON body is a 422 validation_error naming where, on every route, and nothing is stored', async ({ call }) => {
    const lone = 'Parcels \ud800';
    const url = { type: 'url', configuration: { url: 'https://example.org/data.geojson' } };
    const attempts: [string, unknown, string][] = [
      ['/api/v1/sources', { name: lone, ...url }, 'body.name'],
      ['/api/v1/sources', { name: 'ok', type: 'url', configuration: { url: 'https://example.org/\udfff' } }, 'body.configuration.url'],
      ['/api/v1/destinations', { name: lone, type: 'webhook', configuration: { url: 'https://hooks.example.org/x' } }, 'body.name'],
      ['/api/v1/recipes', { name: lone, operations: [] }, 'body.name'],
      ['/api/v1/auth/login', { email: 'admin@example.com', password: lone }, 'body.password'],
      ['/api/v1/sources', { name: 'ok', ...url, '\udc00key': 1 }, 'body.\udc00key'],
    ];
    for (const [route, body, path] of attempts) {
      const res = await call('POST', route, body);
      expect(res.statusCode, `${route}: ${res.body}`).toBe(422);
      expect(res.json().error).toMatchObject({ code: 'validation_error', details: { issues: [{ path }] } });
      expect(res.json().error.message).toContain('unpaired surrogates');
    }
    // A well-formed pair (an emoji) is text like any other.
    const fine = await call('POST', '/api/v1/sources', { name: 'Parcels \ud83d\uddfa', ...url });
    expect(fine.statusCode, fine.body).toBe(201);
    const listed = (await call('GET', '/api/v1/sources')).json().items as { name: string }[];
    expect(listed.map((s) => s.name)).toEqual(['Parcels 🗺']);
  });

  it('an Oracle connect_string carrying user/password@ is refused, and the password is not repeated', async ({ call }) => {
    const res = await call('POST', '/api/v1/sources', {
      name: 'ora',
      type: 'oracle',
      configuration: { connect_string: 'loader/Tiger-s3cret@db.example.org:1521/GISPDB', username: 'loader' },
    });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.body).toContain('not in connect_string');
    expect(res.body).not.toContain('Tiger-s3cret');
    expect((await call('GET', '/api/v1/sources')).json().items.some((s: { type: string }) => s.type === 'oracle')).toBe(false);
  });

  it('a portal item without an owner (or title, or tags) is listed, not a 500', async ({ call }) => {
    const item = portal.addServiceItem(portal.users[0]!.username, 'Odd item', 'https://services.example.org/arcgis/rest/services/X/FeatureServer');
    Object.assign(portal.items.get(item.id)!, { owner: undefined, tags: undefined });
    const source = await call('POST', '/api/v1/sources', { name: 'hub', type: 'hub', configuration: { url: portal.url, api_key: portal.apiKey } });
    expect(source.statusCode, source.body).toBe(201);
    const page = await call('GET', `/api/v1/sources/${source.json().id}/hub/items?q=${encodeURIComponent('title:"Odd item"')}`);
    expect(page.statusCode, page.body).toBe(200);
    expect(page.json().items).toEqual([expect.objectContaining({ id: item.id, title: 'Odd item', owner: null, tags: [] })]);
  });
});
