import { readFileSync } from 'node:fs';
import { afterAll, describe, expect } from 'vitest';
import { boroughsShapefileZip, fixtureDir } from '../support/fixtures.js';
import { createPostgisTarget } from '../support/jobs.js';
import { startHubStandIn, type HubItem, type HubStandIn } from '../servers/hub/server.js';
import { AS_READ, connectorTest, skipWithoutWorker } from './e2e.js';
import { closedPort } from './support.js';

/*
 * ArcGIS portals through /api/v1 as a user drives them, with the real worker, Temporal and
 * PostGIS: create → test → browse → import → a Job through Run Now to succeeded, the data checked
 * where it landed (the PostGIS table, the hosted layer). CKAN's Job runs against a real CKAN in
 * ckan-real.e2e.spec.ts.
 */

const it = connectorTest();

describe.skipIf(skipWithoutWorker)('CKAN and ArcGIS portal connections through the API', () => {
  let arcgis: HubStandIn;
  let target: Awaited<ReturnType<typeof createPostgisTarget>>;
  let warehouse: string;
  let stations: HubItem;
  let boroughsFile: HubItem;
  const dir = fixtureDir();

  // through the fixture, so that the app and its worker start in this hook's time, not a test's
  it.beforeAll(async ({ api }) => {
    arcgis = await startHubStandIn();
    stations = arcgis.addFeatureLayer('gis_team', 'Fire stations', {
      name: 'stations',
      geometryType: 'esriGeometryPoint',
      wkid: 4326,
      fields: [{ name: 'name', type: 'esriFieldTypeString', alias: 'Name' }],
      features: Array.from({ length: 60 }, (_, i) => ({ attributes: { name: `Station ${i + 1}` }, geometry: { x: -74 + i * 0.001, y: 40.7 } })),
    });
    boroughsFile = arcgis.addFileItem('gis_team', 'NYC borough boundaries', 'Shapefile', 'nybb_16a.zip', readFileSync(boroughsShapefileZip(dir)));
    target = await createPostgisTarget();
    warehouse = (await api.create('destinations', 'postgis', target.configuration, 'warehouse')).id;
  });
  afterAll(async () => {
    await arcgis?.stop();
    await target?.drop();
  });

  it('hub: test, browse (scopes, ownership), import a hosted layer, and a Job into PostGIS', async ({ api, get }) => {
    const configuration = { url: arcgis.url, username: 'gis_team', password: arcgis.users[0]!.password };
    const source = (await api.call('POST', '/api/v1/sources', { name: 'City portal', type: 'hub', configuration })).json();
    expect((await api.call('POST', `/api/v1/sources/${source.id}/test`)).json()).toMatchObject({ ok: true, status: 'ok' });
    expect(
      (
        await api.call('POST', '/api/v1/sources/test', { type: 'hub', configuration: { url: `http://127.0.0.1:${await closedPort()}/portal`, api_key: 'x' } })
      ).json(),
    ).toMatchObject({ ok: false, status: 'unreachable' });

    const items = await api.call('GET', `/api/v1/sources/${source.id}/hub/items?q=${encodeURIComponent('type:"Feature Service"')}`);
    expect(items.statusCode, items.body).toBe(200);
    expect(items.json()).toMatchObject({ total: 1, items: [{ id: stations.id, title: 'Fire stations', type: 'Feature Service' }] });
    expect(items.body).not.toContain(arcgis.users[0]!.password);
    expect((await api.call('GET', `/api/v1/sources/${source.id}/hub/folders`)).json()).toMatchObject({ username: 'gis_team', folders: [] });
    expect((await api.call('GET', `/api/v1/sources/${source.id}/hub/items/${stations.id}/layers`)).json().layers).toEqual([
      { id: 0, name: 'stations', kind: 'layer', geometry_type: 'esriGeometryPoint' },
    ]);
    const notLayer = await api.call('GET', `/api/v1/sources/${source.id}/hub/items/${boroughsFile.id}/layers`);
    expect(notLayer.statusCode).toBe(422);
    expect(notLayer.json().error).toMatchObject({ code: 'source_failed', details: { reason: 'invalid_data' } });
    const ckanSource = (
      await api.call('POST', '/api/v1/sources', { name: 'c', type: 'ckan', configuration: { url: `http://127.0.0.1:${await closedPort()}/` } })
    ).json();
    expect((await api.call('GET', `/api/v1/sources/${ckanSource.id}/hub/folders`)).json().error.code).toBe('invalid_source');
    // another user's connection is not found; a token without the scope is forbidden
    const hidden = await get(`/api/v1/sources/${source.id}/hub/items`, await api.tokenFor(['sources:read', 'destinations:read'], 'other@example.com'));
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json().error.code).toBe('source_not_found');
    const narrow = await get(`/api/v1/sources/${source.id}/hub/items`, await api.tokenFor(['jobs:read']));
    expect(narrow.statusCode).toBe(403);

    const doc = (await get('/api/v1/openapi.json', {})).json();
    for (const kind of ['sources', 'destinations']) {
      for (const p of ['hub/items', 'hub/folders', 'hub/items/{itemId}/layers'])
        expect(doc.paths[`/api/v1/${kind}/{id}/${p}`]?.get?.responses?.['200'], `${kind}/${p}`).toBeTruthy();
    }
    const catalog = (await get('/api/v1/connectors', {})).json().items.filter((c: { type: string }) => ['ckan', 'hub'].includes(c.type));
    expect(catalog.map((c: { type: string; implemented: boolean; source: { importable: boolean } }) => [c.type, c.implemented, c.source.importable])).toEqual([
      ['ckan', true, false],
      ['hub', true, true],
    ]);

    const imported = await api.call('POST', '/api/v1/workspaces', { source_id: source.id, source_resource: stations.id });
    expect(imported.statusCode, imported.body).toBe(201);
    expect(imported.json().layers[0]).toMatchObject({ name: 'stations', feature_count: 60, crs: 'EPSG:4326' });

    const job = await api.createJob({
      name: 'Boroughs from the portal',
      source_id: source.id,
      source_resource: { item_id: boroughsFile.id },
      destination_id: warehouse,
      destination_target: { table: 'boroughs', write_mode: 'replace' },
      ...AS_READ,
    });
    const run = await api.runNow(job);
    expect(run, JSON.stringify(run.error)).toMatchObject({ status: 'succeeded' });
    const rows = await target.query<{ name: string; srid: number }>('SELECT "BoroName" AS name, ST_SRID(geom) AS srid FROM public.boroughs ORDER BY 1');
    expect(rows).toEqual([
      { name: 'Manhattan', srid: 2263 },
      { name: 'The Brönx', srid: 2263 },
    ]);
  });

  it('hub Destination: a Job publishes the boroughs as a hosted layer, and the next Run replaces its rows', async ({ api }) => {
    const destination = (
      await api.call('POST', '/api/v1/destinations', { name: 'ArcGIS Online', type: 'hub', configuration: { url: arcgis.url, api_key: arcgis.apiKey } })
    ).json();
    expect((await api.call('POST', `/api/v1/destinations/${destination.id}/test`)).json()).toMatchObject({ ok: true });
    expect((await api.call('GET', `/api/v1/destinations/${destination.id}/hub/folders`)).statusCode).toBe(200);
    const files = (
      await api.call('POST', '/api/v1/sources', { name: 'portal files', type: 'hub', configuration: { url: arcgis.url, api_key: arcgis.apiKey } })
    ).json();
    const job = await api.createJob({
      name: 'Boroughs to ArcGIS',
      source_id: files.id,
      source_resource: { item_id: boroughsFile.id },
      destination_id: destination.id,
      destination_target: { title: 'NYC boroughs (nightly)', tags: ['nyc'], folder: 'nightly', sharing: 'public' },
      ...AS_READ,
    });
    const run = await api.runNow(job);
    expect(run, JSON.stringify(run.error)).toMatchObject({ status: 'succeeded' });
    const published = [...arcgis.items.values()].find((i) => i.title === 'NYC boroughs (nightly)' && i.type === 'Feature Service')!;
    expect(published).toMatchObject({ access: 'public', tags: ['nyc'] });
    expect(
      arcgis
        .rows(published.id)
        .map((r) => r.attributes.BoroName)
        .sort(),
    ).toEqual(['Manhattan', 'The Brönx']);
    // the file item changed: the next Run reads it again and replaces the layer's rows in place
    boroughsFile.modified += 1000;
    const next = await api.runNow(job);
    expect(next).toMatchObject({ status: 'succeeded', skipped_reason: null });
    expect([...arcgis.items.values()].filter((i) => i.title === 'NYC boroughs (nightly)' && i.type === 'Feature Service')).toHaveLength(1);
    expect(arcgis.rows(published.id)).toHaveLength(2);
  });
});
