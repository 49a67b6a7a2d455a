import gdal from 'gdal-async';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stac as sut } from '../../connectors/stac/index.js';
import { fixtureDir } from '../support/fixtures.js';
import { startHttpFixtureServer, type HttpFixtureServer } from '../servers/http/server.js';
import { skipWithoutStacApi, startStacApi, startStacServer, type StacServer } from '../servers/stac/server.js';
import { closedPort, connectorContext, expectConnectorError } from './support.js';

const TOKEN = 'stac-token-0a9b8c';

describe('stac connector against a static catalog served over HTTP', () => {
  let open: StacServer;
  let guarded: StacServer;
  let cdn: HttpFixtureServer;
  const config = (c: Record<string, unknown>) => sut.configuration.parse(c);
  const extract = (c: Record<string, unknown>, r: Record<string, unknown>, ctx = connectorContext(), cursor?: unknown) =>
    sut.source!.extract(config(c), sut.source!.resource.parse(r), ctx, { sync: cursor === undefined ? null : { cursor } });

  beforeAll(async () => {
    const cdnDir = fixtureDir();
    cdn = await startHttpFixtureServer({ dir: cdnDir, bearer: TOKEN });
    open = await startStacServer();
    // the guarded catalog's GeoTIFF lives on another origin (a CDN), which must never see the token
    guarded = await startStacServer({ bearer: TOKEN, sceneHref: `${cdn.url}/files/scene.tif` });
    writeFileSync(path.join(cdnDir, 'scene.tif'), readFileSync(path.join(guarded.dir, 'imagery/scenes/scene-1/scene.tif')));
  });
  afterAll(async () => {
    await open?.stop();
    await guarded?.stop();
    await cdn?.stop();
  });

  it('tests the root: a STAC catalog, a token that is missing or wrong, not STAC, nobody listening', async () => {
    const ok = await sut.test!(config({ url: open.url }), connectorContext());
    expect(ok).toMatchObject({ ok: true, status: 'ok', tried: { url: open.url, token: false } });
    expect(ok.message).toContain('geoflow-test');
    expect(await sut.test!(config({ url: guarded.url, token: TOKEN }), connectorContext())).toMatchObject({ ok: true });
    expect(await sut.test!(config({ url: guarded.url }), connectorContext())).toMatchObject({ ok: false, status: 'authentication_failed' });
    expect(await sut.test!(config({ url: guarded.url, token: 'wrong' }), connectorContext())).toMatchObject({ ok: false, status: 'authentication_failed' });
    const notStac = await sut.test!(config({ url: open.url.replace('catalog.json', 'parcels/parcels-2024/places.geojson') }), connectorContext());
    expect(notStac).toMatchObject({ ok: false, status: 'invalid_response' });
    expect(await sut.test!(config({ url: open.url.replace('catalog.json', 'nothing.json') }), connectorContext())).toMatchObject({
      ok: false,
      status: 'not_found',
    });
    expect(await sut.test!(config({ url: `http://127.0.0.1:${await closedPort()}/catalog.json` }), connectorContext())).toMatchObject({
      ok: false,
      status: 'unreachable',
    });
  });

  it('walks catalog → collection → item → asset and downloads the data asset', async () => {
    const before = open.files.requests.length;
    const got = await extract({ url: open.url }, { collection: 'parcels', item: 'parcels-2024' });
    expect(got.filename).toBe('places.geojson');
    expect(JSON.parse(readFileSync(got.file, 'utf8')).features).toHaveLength(12);
    // the item's path names it: root, collection, item, asset; the broken link was never needed
    expect(open.files.requests.slice(before).map((r) => r.path)).toEqual([
      '/files/catalog.json',
      '/files/parcels/collection.json',
      '/files/parcels/parcels-2024/parcels-2024.json',
      '/files/parcels/parcels-2024/places.geojson',
    ]);

    const gpkg = await extract({ url: open.url }, { item: 'parcels-2024', asset: 'archive' });
    expect(gpkg.filename).toBe('parcels.gpkg');
    const ds = gdal.open(gpkg.file);
    expect(ds.layers.get(0).features.count()).toBe(12);
    ds.close();
  });

  it('finds items whose path does not name them, past broken links, and in nested catalogs', async () => {
    const renamed = await extract({ url: open.url }, { item: 'renamed-item' });
    expect(JSON.parse(readFileSync(renamed.file, 'utf8')).features).toHaveLength(3);
    const scene = await extract({ url: open.url }, { collection: 'scenes', item: 'scene-1', asset: 'visual' });
    // the asset file has no extension: its media type names it a GeoTIFF
    expect(scene.filename).toBe('visual.tif');
    const ds = gdal.open(scene.file);
    expect(ds.driver.description).toBe('GTiff');
    expect(ds.rasterSize).toEqual({ x: 20, y: 20 });
    ds.close();
    // an s3:// asset with an https alternate is read from the alternate
    expect((await extract({ url: open.url }, { item: 'scene-1', asset: 'cloud' })).filename).toBe('scene.tif');
  });

  it('says what is missing: collection, item, asset, or an asset only in an object store', async () => {
    expect((await expectConnectorError(extract({ url: open.url }, { collection: 'roads', item: 'x' }), 'not_found')).message).toContain(
      'no collection "roads"',
    );
    expect((await expectConnectorError(extract({ url: open.url }, { collection: 'parcels', item: 'scene-1' }), 'not_found')).message).toContain(
      'no item "scene-1" in collection "parcels"',
    );
    const noAsset = await expectConnectorError(extract({ url: open.url }, { item: 'parcels-2024', asset: 'cog' }), 'not_found');
    expect(noAsset.details.assets).toEqual(['data', 'thumbnail', 'archive']);
    // two assets with the role "data": which one?
    const ambiguous = await expectConnectorError(extract({ url: open.url }, { item: 'scene-1', collection: 'scenes' }), 'not_found');
    expect(ambiguous.message).toContain('name one in source_resource.asset');
    expect(ambiguous.retryable).toBe(false);
    const s3 = await expectConnectorError(extract({ url: open.url }, { item: 'scene-1', asset: 'raw' }), 'invalid_data');
    expect(s3.message).toContain('s3:');
  });

  it('sends the token to the catalog’s origin only: the asset on another origin is fetched without it', async () => {
    const before = guarded.files.requests.length;
    const got = await extract({ url: guarded.url, token: TOKEN }, { collection: 'scenes', item: 'scene-1', asset: 'visual' });
    expect(got.filename).toBe('scene.tif');
    const atCatalog = guarded.files.requests.slice(before);
    expect(atCatalog.length).toBeGreaterThan(2);
    expect(atCatalog.every((r) => r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);
    const atCdn = cdn.requests.filter((r) => r.path === '/files/scene.tif');
    expect(atCdn).toHaveLength(1);
    expect(atCdn[0]!.headers.authorization).toBeUndefined();
  });

  it('reads incrementally: an unchanged asset is not downloaded again', async () => {
    const r = { item: 'parcels-2024' };
    const first = await extract({ url: open.url }, r);
    expect(first.sync!.cursor).toMatchObject({
      href: open.url.replace('catalog.json', 'parcels/parcels-2024/places.geojson'),
      etag: expect.stringMatching(/^"/),
    });
    const second = await extract({ url: open.url }, r, connectorContext(), first.sync!.cursor);
    expect(second).toMatchObject({ unchanged: true, bytes: 0 });
    const other = await extract({ url: open.url }, { item: 'parcels-2024', asset: 'archive' }, connectorContext(), first.sync!.cursor);
    expect(other.unchanged).toBeFalsy();
  });
});

describe.skipIf(skipWithoutStacApi)('stac connector against a STAC API (stac-fastapi-static)', () => {
  let api: Awaited<ReturnType<typeof startStacApi>>;
  const config = (c: Record<string, unknown>) => sut.configuration.parse(c);
  const extract = (r: Record<string, unknown>) =>
    sut.source!.extract(config({ url: api.url }), sut.source!.resource.parse(r), connectorContext(), { sync: null });

  beforeAll(async () => {
    api = await startStacApi();
  });
  afterAll(async () => {
    await api?.stop();
  });

  it('tests the landing page as an API', async () => {
    const result = await sut.test!(config({ url: api.url }), connectorContext());
    expect(result).toMatchObject({ ok: true, status: 'ok' });
    expect(result.message).toContain('STAC API');
  });

  it('reads an item by collection and id, or by search, and downloads its asset', async () => {
    const byUrl = await extract({ collection: 'parcels', item: 'parcels-2024' });
    expect(JSON.parse(readFileSync(byUrl.file, 'utf8')).features).toHaveLength(12);
    const bySearch = await extract({ item: 'scene-1', asset: 'visual' });
    expect(bySearch.filename).toBe('visual.tif');
    const ds = gdal.open(bySearch.file);
    expect(ds.driver.description).toBe('GTiff');
    ds.close();
    await expectConnectorError(extract({ collection: 'parcels', item: 'nope' }), 'not_found');
    await expectConnectorError(extract({ item: 'nope' }), 'not_found');
  });
});
