import gdal from 'gdal-async';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { boroughsGpkg, countriesGpkg, fixtureDir } from '../support/fixtures.js';
import { startGeonode, type GeonodeStandIn } from '../servers/geonode/server.js';
import { ogrLayerInfo } from '../servers/ogrinfo.js';
import { checkWithClient, mapClientMissing } from '../servers/geoserver/map-clients.js';
import { AS_READ, connectorTest, skipWithoutWorker, startAppBeforeAll } from './e2e.js';
import { closedPort, pollUntilStopped } from './support.js';

const it = connectorTest();

/** What a stored dataset holds, read on the server side with GDAL. */
async function served(file: string): Promise<{ count: number; names: string[]; epsg: string | null }> {
  const ds = await gdal.openAsync(file);
  try {
    const layer = ds.layers.get(0);
    const names: string[] = [];
    const field = layer.fields.getNames().includes('BoroName') ? 'BoroName' : 'ADMIN';
    for (const f of layer.features) names.push(String(f.fields.get(field)));
    const epsg = ogrLayerInfo(file, layer.name).epsg;
    return { count: names.length, names: names.sort(), epsg: epsg === null ? null : String(epsg) };
  } finally {
    ds.close();
  }
}

/** GeoNode Sources and Destinations through /api/v1 with the real worker, against the GeoNode API v2 stand-in. */
describe.skipIf(skipWithoutWorker)('GeoNode: read datasets through their links, upload and replace through the upload API, browse', () => {
  startAppBeforeAll(it);
  let gn: GeonodeStandIn;
  let configuration: Record<string, unknown>;
  let countriesPk: number;
  const dir = fixtureDir();

  beforeAll(async () => {
    gn = await startGeonode();
    countriesPk = gn.add('ne_countries', 'Natural Earth countries', countriesGpkg(dir));
    gn.add('nybb', 'NYC boroughs', boroughsGpkg(dir));
    configuration = { url: gn.url, username: gn.username, password: gn.password };
  });
  afterAll(async () => {
    await gn?.stop();
  });

  it.skipIf(mapClientMissing('geonodectl'))(
    'the stand-in answers the geonodectl client library as GeoNode API v2 does',
    async () => {
      const out = await checkWithClient('geonode', [gn.url, gn.username, gn.password, boroughsGpkg(dir, ['Staten Island'])]);
      expect(out.upload).toMatchObject({ success: true, execution_id: expect.any(String) });
      expect(out.execution).toMatchObject({ status: 'finished', output_params: { resources: [{ id: expect.anything() }] } });
      expect(out.dataset).toMatchObject({
        name: 'nybb_1',
        alternate: 'geonode:nybb_1',
        resource_type: 'dataset',
        links: expect.arrayContaining([expect.objectContaining({ link_type: 'data', extension: 'gpkg' })]),
      });
      expect(out.after_patch).toMatchObject({ title: 'Checked by geonodectl', abstract: 'client check' });
      expect(out.list).toHaveLength(2);
      expect(out.search.map((d: { title: string }) => d.title)).toEqual(['Checked by geonodectl']);
      expect(out.by_name).toHaveLength(1);
      expect(out.wrong_password).toBeNull();
    },
    180_000,
  );

  it('tests with a classified result, browses datasets (search, paging), imports by id, name and alternate; refuses others', async ({ send, api }) => {
    const port = await closedPort();
    expect((await send('POST', '/api/v1/sources/test', { type: 'geonode', configuration: { url: `http://127.0.0.1:${port}` } })).json()).toMatchObject({
      ok: false,
      status: 'unreachable',
    });
    const wrong = (await send('POST', '/api/v1/sources/test', { type: 'geonode', configuration: { url: gn.url, api_key: 'not-the-key' } })).json();
    expect(wrong).toMatchObject({ ok: false, status: 'authentication_failed' });
    expect(JSON.stringify(wrong)).not.toContain('not-the-key');
    const src = (await send('POST', '/api/v1/sources', { name: 'GeoNode', type: 'geonode', configuration: { url: gn.url, api_key: gn.token } })).json();
    expect(src.configuration).toEqual({ url: gn.url, has_password: false, has_api_key: true });
    expect((await send('POST', `/api/v1/sources/${src.id}/test`)).json()).toMatchObject({
      ok: true,
      status: 'ok',
      message: expect.stringContaining('with the API key'),
    });

    const all = (await send('GET', `/api/v1/sources/${src.id}/geonode/datasets?page_size=50`)).json();
    expect(all.items.map((d: { name: string }) => d.name)).toEqual(expect.arrayContaining(['ne_countries', 'nybb']));
    const found = (await send('GET', `/api/v1/sources/${src.id}/geonode/datasets?search=natural`)).json();
    expect(found).toMatchObject({
      total: 1,
      page: 1,
      items: [
        {
          id: String(countriesPk),
          alternate: 'geonode:ne_countries',
          title: 'Natural Earth countries',
          page_url: `${gn.url}/catalogue/#/dataset/${countriesPk}`,
        },
      ],
    });
    const paged = (await send('GET', `/api/v1/sources/${src.id}/geonode/datasets?page=2&page_size=1`)).json();
    expect(paged.items).toHaveLength(1);
    expect(paged.items[0].id).not.toBe(all.items[0].id);
    expect((await send('GET', `/api/v1/sources/${src.id}/geonode/datasets?page=0`)).statusCode).toBe(400);
    expect((await send('GET', `/api/v1/sources/${src.id}/geonode/datasets?page=99`)).json()).toMatchObject({ items: [], page: 99 });

    const other = await api.tokenFor(['sources:read'], 'gn-other@example.com');
    const hidden = await send('GET', `/api/v1/sources/${src.id}/geonode/datasets`, undefined, other);
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json().error.code).toBe('source_not_found');
    expect((await send('GET', `/api/v1/sources/${src.id}/geonode/datasets`, undefined, await api.tokenFor(['jobs:read']))).statusCode).toBe(403);

    for (const key of [String(countriesPk), 'ne_countries', 'geonode:ne_countries']) {
      const imported = await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: key });
      expect(imported.statusCode, imported.body).toBe(201);
      expect(imported.json().layers[0]).toMatchObject({ name: 'countries', feature_count: 3, crs: 'EPSG:4326' });
    }
    const nyc = (await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: { dataset: 'geonode:nybb' } })).json();
    expect(nyc.layers[0]).toMatchObject({ feature_count: 2, crs: 'EPSG:2263', geometry_type: 'MULTIPOLYGON' });
    const missing = await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: 'atlantis' });
    expect(missing.json().error).toMatchObject({ code: 'source_failed', details: { reason: 'not_found' } });
    expect(gn.requests.length).toBeGreaterThan(0);
  }, 180_000);

  it('a Workspace delivery uploads a new dataset whose result carries its id and page URL', async ({ send, api }) => {
    const dst = (await send('POST', '/api/v1/destinations', { name: 'GeoNode out', type: 'geonode', configuration })).json();
    expect((await send('GET', `/api/v1/destinations/${dst.id}/geonode/datasets?search=boroughs`)).json().total).toBe(1);
    const wsId = await api.convertedUpload(boroughsGpkg(dir, ['Manhattan', 'Brooklyn', 'Queens', 'The Bronx']));
    const delivered = await send('POST', `/api/v1/workspaces/${wsId}/deliver`, {
      destination_id: dst.id,
      destination_target: { title: 'Boroughs 2026', abstract: 'Four of five' },
    });
    expect(delivered.statusCode, delivered.body).toBe(200);
    const target = delivered.json().target;
    expect(target).toMatchObject({
      dataset_id: expect.any(Number),
      title: 'Boroughs 2026',
      page_url: expect.stringContaining(`/catalogue/#/dataset/`),
      action: 'upload',
    });
    expect(delivered.body).not.toContain(gn.password);
    expect(await served(gn.fileOf(target.dataset_id)!)).toMatchObject({ count: 4, epsg: '2263' });
    const meta = (await send('GET', `/api/v1/destinations/${dst.id}/geonode/datasets?search=Four of five`)).json();
    expect(meta.items).toEqual([expect.objectContaining({ id: String(target.dataset_id), title: 'Boroughs 2026' })]);
  }, 180_000);

  it("a Job reads a dataset and replaces another one's data twice through Run Now while a reader polls its download: never missing", async ({ send, api }) => {
    const src = (await send('POST', '/api/v1/sources', { name: 'countries', type: 'geonode', configuration })).json();
    const dst = (await send('POST', '/api/v1/destinations', { name: 'replace', type: 'geonode', configuration })).json();
    const targetPk = gn.add('countries_copy', 'Countries (copy)', boroughsGpkg(dir, ['Placeholder']));
    const job = await api.createJob({
      name: 'Countries nightly',
      source_id: src.id,
      source_resource: String(countriesPk),
      destination_id: dst.id,
      destination_target: { dataset: String(targetPk), title: 'Countries (nightly)', abstract: 'From Natural Earth' },
      ...AS_READ,
    });
    const reader = pollUntilStopped(async () => {
      const res = await fetch(`${gn.url}/download/${targetPk}/x.gpkg`, { headers: { authorization: `Bearer ${gn.token}` } });
      await res.arrayBuffer();
      return res.status;
    });
    for (let i = 0; i < 2; i++) {
      const done = await api.runNow(job);
      expect(done.status, JSON.stringify(done.error)).toBe('succeeded');
    }
    const { seen, errors } = await reader.stop();
    expect(errors).toEqual([]);
    expect([...seen.keys()]).toEqual([200]);
    expect(await served(gn.fileOf(targetPk)!)).toEqual({ count: 3, names: ['Iceland', 'New Zealand', 'Switzerland'], epsg: '4326' });
    const after = (await send('GET', `/api/v1/destinations/${dst.id}/geonode/datasets?search=nightly`)).json();
    expect(after.items).toEqual([expect.objectContaining({ id: String(targetPk), title: 'Countries (nightly)' })]);
    const gone = await api.createJob({
      name: 'to nowhere',
      source_id: src.id,
      source_resource: String(countriesPk),
      destination_id: dst.id,
      destination_target: { dataset: '9999', title: 'x' },
      ...AS_READ,
    });
    const failed = await api.runNow(gone);
    expect(failed).toMatchObject({ status: 'failed', error: { code: 'delivery_failed', reason: 'not_found' } });
  }, 300_000);
});
