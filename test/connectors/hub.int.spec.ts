import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ApiKeyManager, ArcGISIdentityManager, request } from '@esri/arcgis-rest-request';
import { createFolder, createItem, getItem, getUserContent, isServiceNameAvailable, searchItems, setItemAccess } from '@esri/arcgis-rest-portal';
import { applyEdits, getLayer, queryFeatures } from '@esri/arcgis-rest-feature-service';
import gdal from 'gdal-async';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browseFolders, browseItems, browseLayers } from '../../connectors/hub/browse.js';
import { hub as sut } from '../../connectors/hub/index.js';
import type { SyncState } from '../../connectors/types.js';
import { cityLayers, startFeatureServer, type FeatureServerFixture } from '../servers/featureserver/server.js';
import { startHttpFixtureServer, type HttpFixtureServer } from '../servers/http/server.js';
import { startHubStandIn, type HubItem, type HubStandIn } from '../servers/hub/server.js';
import { boroughsShapefileZip, countriesGeoJson, fixtureDir } from '../support/fixtures.js';
import { closedPort, connectorContext, deliverInput, expectConnectorError, pollUntilStopped } from './support.js';

describe('hub connector against the portal and hosted FeatureServer stand-in', () => {
  let portal: HubStandIn;
  let files: HttpFixtureServer;
  let stations: HubItem;
  let countriesFile: HubItem;
  const dir = fixtureDir();
  const config = (c: Record<string, unknown>) => sut.configuration.parse(c) as { url: string; username?: string; password?: string; api_key?: string };
  const withKey = () => config({ url: portal.url, api_key: portal.apiKey });
  const withPassword = () => config({ url: portal.url, username: portal.users[0]!.username, password: portal.users[0]!.password });
  const extract = (c: ReturnType<typeof config>, r: unknown, sync: SyncState | null = null) =>
    sut.source!.extract(c, sut.source!.resource.parse(typeof r === 'string' ? { item_id: r } : r), connectorContext(), { sync });
  const deliver = (c: ReturnType<typeof config>, t: unknown, file: string, id = `d-${Math.random()}`) =>
    sut.destination!.deliver(c, sut.destination!.target.parse(t), deliverInput(file, id), connectorContext());
  const read = (file: string) => {
    const ds = gdal.open(file);
    try {
      const l = ds.layers.get(0);
      return {
        count: l.features.count(),
        epsg: l.srs?.getAuthorityCode(null) ?? null,
        rows: l.features.map((f) => f.fields.toObject() as Record<string, unknown>),
      };
    } finally {
      ds.close();
    }
  };
  /** The boroughs (EPSG:2263) as a GeoPackage output, optionally only some of them. */
  const boroughs = (where?: string) => {
    const out = path.join(fixtureDir(), 'boroughs.gpkg');
    execFileSync('ogr2ogr', [
      '-f',
      'GPKG',
      out,
      `/vsizip/${boroughsShapefileZip(fixtureDir())}`,
      '-nln',
      'boroughs',
      '-nlt',
      'PROMOTE_TO_MULTI',
      ...(where ? ['-where', where] : []),
    ]);
    return out;
  };

  beforeAll(async () => {
    portal = await startHubStandIn();
    files = await startHttpFixtureServer({ dir });
    const owner = portal.users[0]!.username;
    stations = portal.addFeatureLayer(owner, 'Fire stations', {
      name: 'stations',
      geometryType: 'esriGeometryPoint',
      wkid: 4326,
      fields: [
        { name: 'name', type: 'esriFieldTypeString', alias: 'Name' },
        { name: 'engines', type: 'esriFieldTypeInteger', alias: 'Engines' },
      ],
      features: Array.from({ length: 120 }, (_, i) => ({
        attributes: { name: `Station ${i + 1}`, engines: 1 + (i % 3) },
        geometry: { x: -74 + i * 0.001, y: 40.7 },
      })),
    });
    countriesFile = portal.addFileItem(owner, 'Countries', 'GeoJson', 'ne_countries.geojson', readFileSync(countriesGeoJson(dir)), 'org');
  });
  afterAll(async () => {
    await portal?.stop();
    await files?.stop();
  });

  it("the stand-in answers Esri's own client (@esri/arcgis-rest-*) as a portal does", async () => {
    const { username, password } = portal.users[0]!;
    const session = await ArcGISIdentityManager.signIn({ username, password, portal: portal.sharing });
    expect(session.token).toBeTruthy();
    expect((await session.getUser()).username).toBe(username);
    await expect(ArcGISIdentityManager.signIn({ username, password: 'wrong', portal: portal.sharing })).rejects.toThrow(
      /Unable to generate token|Invalid username/,
    );

    const found = await searchItems({ q: 'title:"Fire stations"', authentication: session });
    expect(found).toMatchObject({ total: 1, results: [{ id: stations.id, type: 'Feature Service' }] });
    expect((await getItem(stations.id, { authentication: session })).url).toBe(stations.url);
    const folder = await createFolder({ title: 'vendor-check', authentication: session });
    expect(folder.folder.title).toBe('vendor-check');
    const added = await createItem({
      item: { title: 'Vendor upload', type: 'GeoJson', tags: ['a', 'b'] },
      file: new Blob([readFileSync(countriesGeoJson(dir))]),
      filename: 'c.geojson',
      folderId: folder.folder.id,
      authentication: session,
    } as never);
    expect(added).toMatchObject({ success: true, folder: folder.folder.id });
    const content = await getUserContent({ folderId: folder.folder.id, authentication: session });
    expect(content.items.map((i: { title: string; tags: string[] }) => [i.title, i.tags])).toEqual([['Vendor upload', ['a', 'b']]]);
    expect((await getUserContent({ authentication: session })).folders.map((f: { title: string }) => f.title)).toContain('vendor-check');
    await setItemAccess({ id: added.id, access: 'org', owner: username, authentication: session });
    expect(portal.items.get(added.id)!.access).toBe('org');
    expect(await isServiceNameAvailable('Vendor_upload', 'Feature Service', session)).toMatchObject({ available: true });
    const published = await request(`${portal.sharing}/content/users/${username}/publish`, {
      params: { itemId: added.id, filetype: 'geojson', publishParameters: { name: 'Vendor_upload' } },
      authentication: session,
    });
    expect(published.services[0]).toMatchObject({ type: 'Feature Service', serviceItemId: expect.any(String) });
    await expect(request(`${portal.sharing}/content/items/nope`, { authentication: session })).rejects.toThrow(/does not exist or is inaccessible/);

    const key = ApiKeyManager.fromKey(portal.apiKey);
    const layerUrl = `${stations.url}/0`;
    expect(await getLayer({ url: layerUrl, authentication: key })).toMatchObject({
      name: 'stations',
      geometryType: 'esriGeometryPoint',
      objectIdField: 'OBJECTID',
    });
    expect(await queryFeatures({ url: layerUrl, where: 'engines = 2', returnCountOnly: true, authentication: key })).toEqual({ count: 40 });
    const page = (await queryFeatures({ url: layerUrl, resultOffset: 0, resultRecordCount: 10, authentication: key })) as {
      features: unknown[];
      exceededTransferLimit?: boolean;
    };
    expect(page.features).toHaveLength(10);
    expect(page.exceededTransferLimit).toBe(true);
    const edits = await applyEdits({
      url: layerUrl,
      adds: [{ attributes: { name: 'Vendor', engines: 9 }, geometry: { x: -73, y: 41 } }],
      rollbackOnFailure: true,
      authentication: key,
    } as never);
    expect(edits.addResults[0]).toMatchObject({ success: true });
    const oid = edits.addResults[0]!.objectId;
    expect((await applyEdits({ url: layerUrl, deletes: [oid], authentication: key } as never)).deleteResults[0]).toMatchObject({
      objectId: oid,
      success: true,
    });
    const refused = await applyEdits({
      url: layerUrl,
      adds: [{ attributes: { name: 'ok' } }, { attributes: { nope: 1 } }],
      rollbackOnFailure: true,
      authentication: key,
    } as never);
    expect(refused.addResults.map((r: { success: boolean }) => r.success)).toEqual([false, false]);
    expect(portal.rows(stations.id)).toHaveLength(120);
    await expect(getLayer({ url: layerUrl, authentication: ApiKeyManager.fromKey('AAPKwrong') })).rejects.toThrow(/Invalid token/);
  });

  it('tests the portal: API key, username and password, anonymous, and classified failures', async () => {
    const key = await sut.test!(withKey(), connectorContext());
    expect(key).toMatchObject({ ok: true, status: 'ok', tried: { url: portal.url, api_key: true } });
    expect(key.message).toContain('signed in as gis_team');
    expect((await sut.test!(withPassword(), connectorContext())).message).toContain('signed in as gis_team');
    expect((await sut.test!(config({ url: portal.url }), connectorContext())).message).toContain('anonymous');
    const wrong = await sut.test!(config({ url: portal.url, username: 'gis_team', password: 'not-the-password' }), connectorContext());
    expect(wrong).toMatchObject({ ok: false, status: 'authentication_failed' });
    expect(JSON.stringify(wrong)).not.toContain('not-the-password');
    expect(await sut.test!(config({ url: portal.url, api_key: 'AAPKnot-the-key' }), connectorContext())).toMatchObject({
      ok: false,
      status: 'authentication_failed',
    });
    expect(await sut.test!(config({ url: portal.url, username: 'gis_team' }), connectorContext())).toMatchObject({
      ok: false,
      status: 'authentication_failed',
    });
    expect(await sut.test!(config({ url: `http://127.0.0.1:${await closedPort()}/portal`, api_key: 'x' }), connectorContext())).toMatchObject({
      ok: false,
      status: 'unreachable',
    });
    const notPortal = await sut.test!(config({ url: files.url }), connectorContext());
    expect(notPortal.ok).toBe(false);
    expect(['not_found', 'invalid_response']).toContain(notPortal.status);
  });

  it('reads a hosted feature layer (paged) by id and by search, and a file item, token in the body or header only', async () => {
    const before = portal.requests.length;
    const layer = await extract(withPassword(), stations.id);
    expect(layer.features).toBe(120);
    expect(read(layer.file)).toMatchObject({ count: 120, epsg: '4326' });
    const filtered = await extract(withKey(), { search: 'title:"Fire stations" AND type:"Feature Service"', where: 'engines = 3' });
    expect(filtered.features).toBe(40);
    const file = await extract(withKey(), { item_id: countriesFile.id });
    expect(file.filename).toBe('ne_countries.geojson');
    expect(read(file.file)).toMatchObject({ count: 4, epsg: '4326' });
    const sent = portal.requests.slice(before);
    expect(sent.filter((r) => r.path.endsWith('/data')).map((r) => r.token)).toEqual(['header']);
    expect(sent.filter((r) => !r.path.endsWith('/data') && !r.path.endsWith('generateToken')).every((r) => r.token === 'body')).toBe(true);

    await expectConnectorError(extract(config({ url: portal.url }), stations.id), 'authentication_failed');
    await expectConnectorError(extract(withKey(), 'a1b2c3'), 'not_found');
    await expectConnectorError(extract(withKey(), { search: 'title:"Nothing like this"' }), 'not_found');
    expect(sut.source!.resource.safeParse({ item_id: 'a', search: 'b' }).success).toBe(false);
  });

  it('an unchanged layer (same last edit date) skips the Run; an edit makes the next read a full one', async () => {
    const first = await extract(withKey(), stations.id);
    expect(first.sync?.cursor).toMatchObject({ item_id: stations.id, layer: 0, modified: expect.any(Number) });
    expect(await extract(withKey(), stations.id, first.sync!)).toMatchObject({ unchanged: true, file: '' });
    portal.layer(stations.id).lastEditDate += 1000;
    expect((await extract(withKey(), stations.id, first.sync!)).features).toBe(120);
  });

  it('publishes a new hosted layer (addItem + publish + share, in a new folder), then replaces, appends and refuses create', async () => {
    const target = { title: 'NYC boroughs', tags: ['nyc', 'boundaries'], folder: 'nightly', sharing: 'org' };
    const created = await deliver(withPassword(), target, boroughs());
    expect(created).toMatchObject({ rows_written: 2, target: { title: 'NYC boroughs', created: true, write_mode: 'replace' } });
    const itemId = created.target.item_id as string;
    const item = portal.items.get(itemId)!;
    expect(item).toMatchObject({ type: 'Feature Service', owner: 'gis_team', access: 'org', tags: ['nyc', 'boundaries'] });
    expect((await browseFolders(withKey(), connectorContext())).folders.map((f) => f.title)).toContain('nightly');
    expect(item.ownerFolder).toBeTruthy();
    const rows = portal.rows(itemId);
    expect(rows.map((r) => r.attributes.BoroName)).toEqual(['Manhattan', 'The Brönx']);
    expect(rows[0]!.geometry).toHaveProperty('rings');
    // Manhattan is two polygons apart: one Esri polygon of two outer rings, in WGS 84 now
    expect((rows[0]!.geometry as { rings: number[][][] }).rings).toHaveLength(2);
    expect((rows[0]!.geometry as { rings: number[][][] }).rings[0]![0]![0]).toBeCloseTo(-74, 0);

    const replaced = await deliver(withKey(), { title: 'NYC boroughs' }, boroughs("BoroName = 'Manhattan'"));
    expect(replaced).toMatchObject({ rows_written: 1, target: { item_id: itemId, created: false } });
    expect(portal.rows(itemId).map((r) => r.attributes.BoroName)).toEqual(['Manhattan']);
    await deliver(withKey(), { item_id: itemId, write_mode: 'append' }, boroughs());
    expect(portal.rows(itemId).map((r) => r.attributes.BoroName)).toEqual(['Manhattan', 'Manhattan', 'The Brönx']);
    await expectConnectorError(deliver(withKey(), { title: 'NYC boroughs', write_mode: 'create' }, boroughs()), 'target_exists');

    // an output field the layer lacks: refused before anything is sent
    const countries = path.join(fixtureDir(), 'countries.gpkg');
    execFileSync('ogr2ogr', ['-f', 'GPKG', countries, countriesGeoJson(fixtureDir())]);
    const wrong = await expectConnectorError(deliver(withKey(), { item_id: itemId }, countries), 'invalid_data');
    expect(wrong.message).toContain('"ISO_A3"');
    expect(portal.rows(itemId)).toHaveLength(3);
    await expectConnectorError(deliver(config({ url: portal.url }), { title: 'x' }, countries), 'authentication_failed');
  });

  it('replace twice while a reader polls the layer: the reader never sees it empty or half-written', async () => {
    const created = await deliver(withKey(), { title: 'Boroughs live' }, boroughs());
    const itemId = created.target.item_id as string;
    const key = ApiKeyManager.fromKey(portal.apiKey);
    const reading = pollUntilStopped(
      async () => ((await queryFeatures({ url: `${portal.items.get(itemId)!.url}/0`, returnCountOnly: true, authentication: key })) as { count: number }).count,
    );
    await deliver(withKey(), { title: 'Boroughs live' }, boroughs());
    await deliver(withKey(), { item_id: itemId }, boroughs());
    const { seen, errors } = await reading.stop();
    expect(errors).toEqual([]);
    expect([...seen.keys()]).toEqual([2]);
    expect(portal.rows(itemId)).toHaveLength(2);
  });

  it("browses: items by search (paged), the user's folders, an item's layers", async () => {
    const page = await browseItems(withKey(), { q: 'type:"Feature Service"', start: 1, num: 1, owner_only: true }, connectorContext());
    expect(page.total).toBeGreaterThanOrEqual(2);
    expect(page.items).toHaveLength(1);
    expect(page.next_start).toBe(2);
    expect(page.query).toBe('type:"Feature Service" AND owner:gis_team');
    const layers = await browseLayers(withKey(), stations.id, connectorContext());
    expect(layers.layers).toEqual([{ id: 0, name: 'stations', kind: 'layer', geometry_type: 'esriGeometryPoint' }]);
    await expectConnectorError(browseLayers(withKey(), countriesFile.id, connectorContext()), 'invalid_data');
    await expectConnectorError(browseFolders(config({ url: portal.url }), connectorContext()), 'authentication_failed');
  });
});

/*
 * Issue 32, finding 6: an item's `url` is whatever its publisher wrote, so the portal's token goes
 * only where Esri's own client sends it: the portal, and the servers the portal says it federates
 * with (portals/self/servers). A service anywhere else is read without the token; when that
 * fails, the error says why the token was kept back.
 */
describe('hub sends its credentials only to the portal and the servers it federates with', () => {
  let federated: FeatureServerFixture;
  let stranger: FeatureServerFixture;
  let guarded: FeatureServerFixture;
  let portal: HubStandIn;
  const root = (service: string) => service.replace(/\/rest\/services\/.*$/, '');
  const config = (c: Record<string, unknown>) => sut.configuration.parse(c) as { url: string; username?: string; password?: string; api_key?: string };
  const credentials = () => [
    config({ url: portal.url, api_key: portal.apiKey }),
    config({ url: portal.url, username: portal.users[0]!.username, password: portal.users[0]!.password }),
  ];

  beforeAll(async () => {
    federated = await startFeatureServer();
    stranger = await startFeatureServer();
    guarded = await startFeatureServer({ token: 'a token this server issued itself' });
    portal = await startHubStandIn({ federated: [root(federated.url)] });
  });
  afterAll(async () => {
    for (const s of [portal, federated, stranger, guarded]) await s?.stop();
  });

  it('a federated server gets the token; a service elsewhere is read without it', async () => {
    const owner = portal.users[0]!.username;
    const onFederated = portal.addServiceItem(owner, 'City on a federated server', federated.url, 'org');
    const elsewhere = portal.addServiceItem(owner, 'City anywhere', stranger.url, 'public');
    for (const c of credentials()) {
      const layers = await browseLayers(c, onFederated.id, connectorContext());
      expect(layers.layers.map((l) => l.name)).toEqual(['Parcels', 'Hydrants', 'Owners']);
      expect((await browseLayers(c, elsewhere.id, connectorContext())).layers).toHaveLength(3);
      const read = await sut.source!.extract(c, sut.source!.resource.parse({ item_id: elsewhere.id, layer: 1 }), connectorContext(), {});
      expect(read.features).toBe(cityLayers()[1]!.features.length);
    }
    expect(federated.requests.length).toBeGreaterThan(0);
    expect(federated.requests.every((r) => r.token === 'body')).toBe(true);
    expect(stranger.requests.length).toBeGreaterThan(0);
    expect(stranger.requests.filter((r) => r.token !== null)).toEqual([]);
  });

  it('a service elsewhere that wants a token fails with an error that says the credentials were kept back', async () => {
    const item = portal.addServiceItem(portal.users[0]!.username, 'City behind its own token', guarded.url, 'public');
    for (const c of credentials()) {
      const error = await expectConnectorError(browseLayers(c, item.id, connectorContext()), 'authentication_failed');
      expect(error.message).toContain('is neither');
      expect(error.message).toContain('portals/self/servers');
      expect(error.message).toContain('Token Required');
      expect(error.details).toMatchObject({ credentials_withheld: true });
    }
    expect(guarded.requests.filter((r) => r.token !== null)).toEqual([]);
  });
});
