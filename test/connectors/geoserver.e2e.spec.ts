import { existsSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { basicAuth } from '../servers/standin.js';
import { boroughsGpkg, countriesGpkg, fixtureDir } from '../support/fixtures.js';
import { skipWithoutMapserver, startGeoserver, type GeoserverStandIn } from '../servers/geoserver/server.js';
import { checkWithClient, mapClientMissing } from '../servers/geoserver/map-clients.js';
import { AS_READ, connectorTest, skipWithoutWorker, startAppBeforeAll } from './e2e.js';
import { closedPort, pollUntilStopped } from './support.js';

const it = connectorTest();

/**
 * GeoServer Sources and Destinations through /api/v1 with the real worker and Temporal, against
 * the GeoServer stand-in (REST, test/servers/geoserver) whose layers MapServer serves over WFS.
 */
describe.skipIf(skipWithoutWorker || skipWithoutMapserver)('GeoServer: read layers over WFS, publish through REST, browse', () => {
  startAppBeforeAll(it);
  let gs: GeoserverStandIn;
  let configuration: Record<string, unknown>;
  const dir = fixtureDir();

  const rest = (method: string, p: string, body?: Buffer<ArrayBuffer> | string, type?: string) =>
    fetch(`${gs.url}/rest/${p}`, {
      method,
      headers: { authorization: basicAuth(gs.username, gs.password), ...(type ? { 'content-type': type } : {}) },
      ...(body ? { body } : {}),
    });
  /** What the WFS (MapServer) serves for a layer: the server-side check of a publication. */
  const wfs = async (typeName: string, extra = '') => {
    const [ws, layer] = typeName.split(':');
    const res = await fetch(
      `${gs.url}/${ws}/${layer}/ows?service=WFS&version=2.0.0&request=GetFeature&typeNames=${typeName}&outputFormat=application/json${extra}`,
    );
    if (!res.ok) throw new Error(`WFS ${res.status}: ${await res.text()}`);
    return (await res.json()) as {
      crs?: { properties: { name: string } };
      features: { properties: Record<string, unknown>; geometry: { coordinates: unknown } }[];
    };
  };

  beforeAll(async () => {
    gs = await startGeoserver();
    configuration = { url: gs.url, username: gs.username, password: gs.password, workspace: 'nyc' };
    for (const ws of ['nyc', 'world'])
      expect((await rest('POST', 'workspaces', JSON.stringify({ workspace: { name: ws } }), 'application/json')).status).toBe(201);
    expect(
      (
        await rest(
          'PUT',
          'workspaces/nyc/datastores/nybb_src/file.gpkg?configure=all',
          readFileSync(boroughsGpkg(dir, ['Manhattan', 'Brooklyn', 'Queens'])),
          'application/x-sqlite3',
        )
      ).status,
    ).toBe(201);
    expect(
      (await rest('PUT', 'workspaces/world/datastores/ne/file.gpkg?configure=all', readFileSync(countriesGpkg(dir)), 'application/x-sqlite3')).status,
    ).toBe(201);
  });
  afterAll(async () => {
    await gs?.stop();
  });

  it.skipIf(mapClientMissing('geoserver-rest'))(
    'the stand-in answers the geoserver-rest client library as GeoServer does',
    async () => {
      const out = await checkWithClient('geoserver', [gs.url, gs.username, gs.password, boroughsGpkg(dir)]);
      expect(out.version.about.resource[0]).toMatchObject({ '@name': 'GeoServer' });
      expect(out.workspaces.workspaces.workspace.map((w: { name: string }) => w.name)).toContain('clientcheck');
      expect(out.workspace.workspace.name).toBe('clientcheck');
      expect(out.datastores.dataStores.dataStore).toEqual([expect.objectContaining({ name: 'boroughs' })]);
      expect(out.datastore).toMatchObject({ name: 'boroughs', type: 'GeoPackage' });
      expect(out.featuretypes).toEqual(['nybb']);
      expect(out.attributes).toEqual(expect.arrayContaining(['BoroCode', 'BoroName']));
      expect(out.layers.layers.layer).toEqual([expect.objectContaining({ name: 'nybb' })]);
      expect(out.layer.layer).toMatchObject({ name: 'nybb', type: 'VECTOR', resource: { name: 'clientcheck:nybb' } });
      expect(out.publish_style).toBe(200);
      expect(out.layer_after_style.layer.defaultStyle.name).toBe('polygon');
      expect(out.edit_featuretype).toBe(200);
      expect(out.wrong_password).toBe(401);
      expect(out.missing_layer).toBe(404);
      expect(out.datastores_after_delete).toEqual({ dataStores: '' });
    },
    180_000,
  );

  it('tests drafts and saved Sources with a classified result; browses workspaces, stores and layers; refuses others', async ({ send, api }) => {
    const port = await closedPort();
    const closed = await send('POST', '/api/v1/sources/test', {
      type: 'geoserver',
      configuration: { ...configuration, url: `http://127.0.0.1:${port}/geoserver` },
    });
    expect(closed.json()).toMatchObject({ ok: false, status: 'unreachable' });
    const wrong = await send('POST', '/api/v1/sources/test', { type: 'geoserver', configuration: { ...configuration, password: 'not-it' } });
    expect(wrong.json()).toMatchObject({ ok: false, status: 'authentication_failed' });
    expect(wrong.body).not.toContain('not-it');
    const anonymous = await send('POST', '/api/v1/sources/test', { type: 'geoserver', configuration: { url: gs.url } });
    expect(anonymous.json()).toMatchObject({ ok: true, status: 'ok', message: expect.stringMatching(/WFS .* capabilities \(2 layer/) });

    const src = (await send('POST', '/api/v1/sources', { name: 'GeoServer', type: 'geoserver', configuration })).json();
    expect(src.configuration).toEqual({ url: gs.url, username: gs.username, workspace: 'nyc', has_password: true });
    expect((await send('POST', `/api/v1/sources/${src.id}/test`)).json()).toMatchObject({
      ok: true,
      status: 'ok',
      message: expect.stringContaining('GeoServer 2.24'),
    });
    const listed = (await send('GET', `/api/v1/sources/${src.id}/geoserver/workspaces`)).json();
    expect(listed.items.filter((w: { name: string }) => w.name !== 'clientcheck')).toEqual([{ name: 'nyc' }, { name: 'world' }]);
    expect((await send('GET', `/api/v1/sources/${src.id}/geoserver/workspaces/nyc/stores`)).json()).toEqual({
      workspace: 'nyc',
      items: [{ name: 'nybb_src' }],
    });
    expect((await send('GET', `/api/v1/sources/${src.id}/geoserver/workspaces/world/layers`)).json()).toEqual({
      workspace: 'world',
      items: [{ name: 'countries', qualified_name: 'world:countries' }],
    });
    const missing = await send('GET', `/api/v1/sources/${src.id}/geoserver/workspaces/atlantis/layers`);
    expect(missing.statusCode).toBe(422);
    expect(missing.json().error).toMatchObject({ code: 'source_failed', details: { reason: 'not_found' } });

    const other = await api.tokenFor(['sources:read'], 'gs-other@example.com');
    const hidden = await send('GET', `/api/v1/sources/${src.id}/geoserver/workspaces`, undefined, other);
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json().error.code).toBe('source_not_found');
    const noScope = await api.tokenFor(['jobs:read']);
    expect((await send('GET', `/api/v1/sources/${src.id}/geoserver/workspaces`, undefined, noScope)).statusCode).toBe(403);
    const dst = (await send('POST', '/api/v1/destinations', { name: 'GS out', type: 'geoserver', configuration })).json();
    expect((await send('GET', `/api/v1/destinations/${dst.id}/geoserver/workspaces/nyc/layers`)).json().items).toEqual([
      { name: 'nybb', qualified_name: 'nyc:nybb' },
    ]);
    const notGs = (await send('POST', '/api/v1/sources', { name: 'u', type: 'url', configuration: { url: 'http://127.0.0.1:9/a.geojson' } })).json();
    expect((await send('GET', `/api/v1/sources/${notGs.id}/geoserver/workspaces`)).json().error.code).toBe('invalid_source');
    expect(JSON.stringify(gs.requests)).not.toContain(gs.password);
  }, 180_000);

  it('imports a layer over WFS 2.0 with paging, keeping its CRS; filters by bbox and CQL', async ({ send }) => {
    const src = (await send('POST', '/api/v1/sources', { name: 'GeoServer read', type: 'geoserver', configuration })).json();
    const imported = await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: { layer: 'nybb', page_size: 2 } });
    expect(imported.statusCode, imported.body).toBe(201);
    expect(imported.json().layers[0]).toMatchObject({ name: 'nybb', feature_count: 3, geometry_type: 'MULTIPOLYGON', crs: 'EPSG:2263' });
    expect(gs.requests.filter((r) => r === 'GET /geoserver/nyc/nybb/ows').length).toBeGreaterThanOrEqual(3); // capabilities + 2 pages

    const countries = (await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: 'world:countries' })).json();
    expect(countries.layers[0]).toMatchObject({ name: 'countries', feature_count: 3, crs: 'EPSG:4326' });
    const preview = (await send('GET', `/api/v1/workspaces/${countries.id}/data-preview`)).json();
    expect(JSON.stringify(preview)).toContain('New Zealand');
    const spatial = (await send('GET', `/api/v1/workspaces/${countries.id}/spatial-preview`)).json();
    const nz = spatial.geojson.features.find((f: { properties: { ADMIN: string } }) => f.properties.ADMIN === 'New Zealand');
    // longitude first: New Zealand lies east of 160°E and south of the equator
    expect(JSON.stringify(nz.geometry.coordinates)).toMatch(/^\[\[\[\[1[67]\d/);

    const filtered = (
      await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: { layer: 'nybb', cql_filter: "BoroName = 'Brooklyn'" } })
    ).json();
    expect(filtered.layers[0].feature_count).toBe(1);
    const boxed = (
      await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: { layer: 'nyc:nybb', bbox: [979000, 189000, 1012000, 201000] } })
    ).json();
    expect(boxed.layers[0].feature_count).toBe(2);
    const both = await send('POST', '/api/v1/workspaces', {
      source_id: src.id,
      source_resource: { layer: 'nybb', bbox: [0, 0, 1, 1], cql_filter: "BoroName = 'x'" },
    });
    expect(both.statusCode).toBe(422);
    const gone = await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: 'nyc:atlantis' });
    expect(gone.json().error).toMatchObject({ code: 'source_failed' });
  }, 180_000);

  it('a Job publishes a layer (create), republishes it with replace twice while a reader polls the WFS, and create refuses an existing layer', async ({
    send,
    api,
  }) => {
    const src = (await send('POST', '/api/v1/sources', { name: 'boroughs', type: 'geoserver', configuration })).json();
    const dst = (await send('POST', '/api/v1/destinations', { name: 'publish', type: 'geoserver', configuration })).json();
    const job = (target: object) =>
      api.createJob({
        name: 'Publish boroughs',
        source_id: src.id,
        source_resource: 'nyc:nybb',
        destination_id: dst.id,
        destination_target: target,
        ...AS_READ,
      });

    const create = await job({
      workspace: 'nyc',
      store: 'boroughs',
      layer: 'boroughs',
      write_mode: 'create',
      title: 'NYC boroughs',
      abstract: 'Nightly copy',
      style: 'polygon',
    });
    const first = await api.runNow(create);
    expect(first.status, JSON.stringify(first.error)).toBe('succeeded');
    const served = await wfs('nyc:boroughs', '&srsName=EPSG:2263');
    expect(served.features.map((f) => f.properties.BoroName).sort()).toEqual(['Brooklyn', 'Manhattan', 'Queens']);
    expect(served.crs?.properties.name).toBe('urn:ogc:def:crs:EPSG::2263');
    const layer = await (await rest('GET', 'workspaces/nyc/layers/boroughs.json')).json();
    expect(layer.layer.defaultStyle.name).toBe('polygon');
    const ft = await (await rest('GET', 'workspaces/nyc/datastores/boroughs/featuretypes/boroughs.json')).json();
    expect(ft.featureType).toMatchObject({ title: 'NYC boroughs', abstract: 'Nightly copy', srs: 'EPSG:2263' });
    const again = await api.runNow(create);
    expect(again.status).toBe('failed');
    expect(again.error).toMatchObject({ code: 'target_exists' });

    const replace = await job({ workspace: 'nyc', store: 'boroughs', layer: 'boroughs', write_mode: 'replace', title: 'NYC boroughs (nightly)' });
    const firstFile = gs.fileOf('nyc', 'boroughs');
    const reader = pollUntilStopped(async () => (await wfs('nyc:boroughs')).features.length);
    for (let i = 0; i < 2; i++) {
      const done = await api.runNow(replace);
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    }
    const { seen, errors } = await reader.stop();
    expect(errors).toEqual([]);
    expect([...seen.keys()]).toEqual([3]);
    expect(gs.fileOf('nyc', 'boroughs')).not.toBe(firstFile);
    expect(existsSync(firstFile!)).toBe(false);
    expect((await (await rest('GET', 'workspaces/nyc/datastores.json')).json()).dataStores.dataStore.map((s: { name: string }) => s.name).sort()).toEqual([
      'boroughs',
      'nybb_src',
    ]);
    expect((await (await rest('GET', 'workspaces/nyc/datastores/boroughs/featuretypes/boroughs.json')).json()).featureType.title).toBe(
      'NYC boroughs (nightly)',
    );
  }, 300_000);
});
