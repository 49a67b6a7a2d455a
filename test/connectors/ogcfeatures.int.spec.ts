import gdal from 'gdal-async';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ogcfeatures as sut } from '../../connectors/ogcfeatures/index.js';
import { fixtureDir } from '../support/fixtures.js';
import { startHttpFixtureServer, type HttpFixtureServer } from '../servers/http/server.js';
import { placesCollection, skipWithoutPygeoapi, startPygeoapi, type Collection, type Pygeoapi } from '../servers/pygeoapi/server.js';
import { closedPort, connectorContext, expectConnectorError, filesIn } from './support.js';

const KEY = 'ogc-key-4d2e91';

/**
 * An API-key gateway in front of pygeoapi, as deployments put one: it refuses requests without
 * the key and rewrites pygeoapi's own address in answers (next links) to its own.
 */
async function keyGateway(upstream: string): Promise<{ url: string; seen: (string | undefined)[]; server: Server }> {
  const seen: (string | undefined)[] = [];
  let self = '';
  const server = createServer((req, res) => {
    seen.push(req.headers['x-api-key'] as string | undefined);
    if (req.headers['x-api-key'] !== KEY) return void res.writeHead(401).end('{"error":"api key"}');
    void fetch(`${upstream}${req.url}`, { headers: { accept: String(req.headers.accept ?? '') } }).then(async (r) => {
      res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' }).end((await r.text()).replaceAll(upstream, self));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  self = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url: self, seen, server };
}

describe.skipIf(skipWithoutPygeoapi)('ogcfeatures connector against pygeoapi', () => {
  let api: Pygeoapi;
  let gateway: Awaited<ReturnType<typeof keyGateway>>;
  let files: HttpFixtureServer;
  const places = placesCollection();
  const roads: Collection = {
    id: 'roads',
    features: [
      {
        id: 1,
        properties: { name: 'Aarstrasse' },
        geometry: {
          type: 'LineString',
          coordinates: [
            [7.43, 46.94],
            [7.45, 46.95],
          ],
        },
      },
      {
        id: 2,
        properties: { name: 'Bundesgasse' },
        geometry: {
          type: 'LineString',
          coordinates: [
            [7.44, 46.946],
            [7.445, 46.947],
          ],
        },
      },
    ],
  };
  const config = (c: Record<string, unknown>) => sut.configuration.parse(c);
  const resource = (r: Record<string, unknown>) => sut.source!.resource.parse(r);
  const extract = (c: Record<string, unknown>, r: Record<string, unknown>, ctx = connectorContext(), cursor?: unknown) =>
    sut.source!.extract(config(c), resource(r), ctx, { sync: cursor === undefined ? null : { cursor } });
  const featuresOf = (file: string) => {
    const ds = gdal.open(file);
    try {
      const layer = ds.layers.get(0);
      return { layer: layer.name, count: layer.features.count(), names: layer.features.map((f) => f.fields.get('name') as string) };
    } finally {
      ds.close();
    }
  };

  beforeAll(async () => {
    api = await startPygeoapi([places, roads]);
    gateway = await keyGateway(api.url);
    const dir = fixtureDir();
    mkdirSync(path.join(dir, 'not-ogc'));
    writeFileSync(path.join(dir, 'not-ogc', 'collections'), '{"service":"something else"}');
    files = await startHttpFixtureServer({ dir });
  });
  afterAll(async () => {
    gateway?.server.close();
    await files?.stop();
    await api?.stop();
  });

  it('tests the landing page: collections listed, missing key, not an OGC API, nobody listening', async () => {
    const ok = await sut.test!(config({ url: api.url }), connectorContext());
    expect(ok).toMatchObject({ ok: true, status: 'ok', tried: { url: `${api.url}/`, api_key: false } });
    expect(ok.message).toContain('2 collection(s)');
    expect(await sut.test!(config({ url: gateway.url, api_key: KEY }), connectorContext())).toMatchObject({ ok: true });
    expect(await sut.test!(config({ url: gateway.url, api_key: 'wrong' }), connectorContext())).toMatchObject({ ok: false, status: 'authentication_failed' });
    expect(await sut.test!(config({ url: gateway.url }), connectorContext())).toMatchObject({ ok: false, status: 'authentication_failed' });
    expect(await sut.test!(config({ url: `${files.url}/files/not-ogc` }), connectorContext())).toMatchObject({ ok: false, status: 'invalid_response' });
    expect(await sut.test!(config({ url: `${files.url}/files/nowhere` }), connectorContext())).toMatchObject({ ok: false, status: 'not_found' });
    expect(await sut.test!(config({ url: `http://127.0.0.1:${await closedPort()}` }), connectorContext())).toMatchObject({ ok: false, status: 'unreachable' });
  });

  it('reads a whole collection through its pages into one GeoJSON layer named after it', async () => {
    const ctx = connectorContext();
    const got = await extract({ url: api.url }, { collection: 'places' }, ctx);
    expect(got).toMatchObject({ filename: 'places.geojson', features: 120 });
    expect(got.sync).toBeUndefined();
    const read = featuresOf(got.file);
    expect(read.layer).toBe('places');
    expect(read.count).toBe(120);
    expect(new Set(read.names).size).toBe(120);
    expect(filesIn(ctx.workDir)).toEqual(['places.geojson']);
  });

  it('sends the key on every page, filters by bbox, and answers not_found for an unknown collection', async () => {
    const before = gateway.seen.length;
    const got = await extract({ url: gateway.url, api_key: KEY }, { collection: 'places', page_size: 40 });
    expect(got.features).toBe(120);
    // 40 + 40 + 40, and pygeoapi links a next page after a full one: every request carried the key
    const pages = gateway.seen.slice(before);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(new Set(pages)).toEqual(new Set([KEY]));

    const box = await extract({ url: api.url }, { collection: 'places', bbox: [6.99, 46.89, 7.035, 46.915] });
    // columns 0..3 of rows 0..1
    expect(box.features).toBe(8);

    const unknown = await expectConnectorError(extract({ url: api.url }, { collection: 'nope' }), 'not_found');
    expect(unknown.retryable).toBe(false);
    await expectConnectorError(extract({ url: gateway.url, api_key: 'wrong' }, { collection: 'places' }), 'authentication_failed');
  });

  it('reads incrementally on datetime_property: only what is new, and unchanged when nothing is', async () => {
    const c = { url: api.url };
    const r = { collection: 'places', datetime_property: 'updated' };
    const first = await extract(c, r);
    expect(first.features).toBe(120);
    expect(first.sync!.cursor).toEqual({ property: 'updated', datetime: '2024-03-01T09:59:00Z', ids_at_datetime: ['p120'] });

    const ctx = connectorContext();
    const second = await extract(c, r, ctx, first.sync!.cursor);
    expect(second).toMatchObject({ unchanged: true, features: 0 });
    expect(second.sync!.cursor).toEqual(first.sync!.cursor);
    expect(filesIn(ctx.workDir)).toEqual([]);

    // two new features: one later, one stamped exactly like the newest already read
    const grown = placesCollection();
    grown.features.push(
      { id: 'p121', properties: { name: 'Late', rank: 0, updated: '2024-03-01T10:30:00Z' }, geometry: { type: 'Point', coordinates: [7.1, 47] } },
      { id: 'p122', properties: { name: 'Same minute', rank: 0, updated: '2024-03-01T09:59:00Z' }, geometry: { type: 'Point', coordinates: [7.2, 47] } },
    );
    api.write(grown);
    try {
      const third = await extract(c, r, connectorContext(), second.sync!.cursor);
      expect(third.unchanged).toBeFalsy();
      expect(featuresOf(third.file).names.sort()).toEqual(['Late', 'Same minute']);
      expect(third.sync!.cursor).toEqual({ property: 'updated', datetime: '2024-03-01T10:30:00Z', ids_at_datetime: ['p121'] });
    } finally {
      api.write(places);
    }
  });

  it('stops at the size limit while reading pages, leaving no file', async () => {
    const ctx = connectorContext({ maxBytes: 12 * 1024 });
    const error = await expectConnectorError(extract({ url: api.url }, { collection: 'places' }, ctx), 'too_large');
    expect(error.details.max_bytes).toBe(12 * 1024);
    expect(filesIn(ctx.workDir)).toEqual([]);
  });
});
