import path from 'node:path';
import gdal from 'gdal-async';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { featureserver as sut } from '../../connectors/featureserver/index.js';
import { startHttpFixtureServer, type HttpFixtureServer } from '../servers/http/server.js';
import { startFeatureServer, type FeatureServerFixture } from '../servers/featureserver/server.js';
import { KOOP_VERSION, startKoop, type KoopServer } from '../servers/koop/server.js';
import { fixtureDir } from '../support/fixtures.js';
import { closedPort, connectorContext, expectConnectorError, filesIn } from './support.js';

const TOKEN = 'arcgis-token-77f0c2';

describe('featureserver connector against a local FeatureServer-protocol server', () => {
  let open: FeatureServerFixture;
  let secured: FeatureServerFixture;
  let files: HttpFixtureServer;
  const config = (c: Record<string, unknown>) => sut.configuration.parse(c);
  const extract = (c: Record<string, unknown>, r: Record<string, unknown>, ctx = connectorContext()) =>
    sut.source!.extract(config(c), sut.source!.resource.parse(r), ctx, { sync: null });
  const read = (file: string) => {
    const ds = gdal.open(file);
    try {
      const layer = ds.layers.get(0);
      return {
        driver: ds.driver.description,
        layer: layer.name,
        count: layer.features.count(),
        geometryType: layer.geomType,
        epsg: layer.srs?.getAuthorityCode(null) ?? null,
        fields: layer.fields.getNames(),
        rows: layer.features.map((f) => f.fields.toObject() as Record<string, unknown>),
        parts: layer.features.map((f) => {
          const g = f.getGeometry();
          return g instanceof gdal.GeometryCollection ? g.children.count() : g ? 1 : 0;
        }),
      };
    } finally {
      ds.close();
    }
  };

  beforeAll(async () => {
    open = await startFeatureServer();
    secured = await startFeatureServer({ token: TOKEN });
    files = await startHttpFixtureServer({ dir: fixtureDir() });
  });
  afterAll(async () => {
    await open?.stop();
    await secured?.stop();
    await files?.stop();
  });

  it('tests the service: layers listed, token missing or wrong, missing service, not ArcGIS, nobody listening', async () => {
    const ok = await sut.test!(config({ url: open.url }), connectorContext());
    expect(ok).toMatchObject({ ok: true, status: 'ok', tried: { url: open.url, token: false } });
    expect(ok.message).toContain('2 layer(s) and 1 table(s)');
    expect(await sut.test!(config({ url: secured.url, token: TOKEN }), connectorContext())).toMatchObject({ ok: true });
    expect(await sut.test!(config({ url: secured.url }), connectorContext())).toMatchObject({ ok: false, status: 'authentication_failed' });
    const wrong = await sut.test!(config({ url: secured.url, token: 'nope' }), connectorContext());
    expect(wrong).toMatchObject({ ok: false, status: 'authentication_failed' });
    expect(wrong.message).toContain('498');
    expect(await sut.test!(config({ url: open.url.replace('City', 'Elsewhere') }), connectorContext())).toMatchObject({ ok: false, status: 'not_found' });
    expect(await sut.test!(config({ url: `${files.url}/x/FeatureServer` }), connectorContext())).toMatchObject({ ok: false, status: 'not_found' });
    expect(await sut.test!(config({ url: `http://127.0.0.1:${await closedPort()}/arcgis/rest/services/x/FeatureServer` }), connectorContext())).toMatchObject({
      ok: false,
      status: 'unreachable',
    });
    expect(sut.configuration.safeParse({ url: `${open.url}/0` }).success).toBe(false);
    expect(sut.configuration.safeParse({ url: 'not a url' }).success).toBe(false);
  });

  it('reads a paged polygon layer into one GeoPackage layer, multipart parcels included', async () => {
    const ctx = connectorContext();
    const got = await extract({ url: open.url }, { layer: 0 }, ctx);
    expect(got).toMatchObject({ filename: 'Parcels.gpkg', features: 230 });
    expect(filesIn(ctx.workDir)).toEqual(['Parcels.gpkg']);
    const layer = read(got.file);
    expect(layer).toMatchObject({ driver: 'GPKG', layer: 'Parcels', count: 230, geometryType: gdal.wkbMultiPolygon, epsg: '2056' });
    expect(layer.fields).toEqual(expect.arrayContaining(['parcel_id', 'zone', 'area']));
    expect(new Set(layer.rows.map((r) => r.parcel_id)).size).toBe(230);
    // parcel 10 has two rings apart: a multipolygon of two parts; the others are single parts
    expect(layer.parts[layer.rows.findIndex((r) => r.parcel_id === 'P-0010')]).toBe(2);
    expect(layer.parts[layer.rows.findIndex((r) => r.parcel_id === 'P-0001')]).toBe(1);
    // 100 a page (the layer's maxRecordCount): three queries after the description
    const queries = open.requests.filter((r) => r.path.endsWith('/0/query'));
    expect(queries.length).toBeGreaterThanOrEqual(3);
  });

  it('filters with where, reads layers without pagination by objectIds, and tables without geometry', async () => {
    const zoned = await extract({ url: open.url }, { layer: 0, where: "zone = 'commercial' AND area > 5000" });
    const zonedRows = read(zoned.file).rows;
    expect(zonedRows.length).toBe(open.layers[0]!.features.filter((f) => f.attributes.zone === 'commercial' && (f.attributes.area as number) > 5000).length);
    expect(zonedRows.every((r) => r.zone === 'commercial')).toBe(true);

    const before = open.requests.length;
    const hydrants = await extract({ url: open.url }, { layer: 1 });
    const points = read(hydrants.file);
    expect(points).toMatchObject({ layer: 'Hydrants', count: 45, geometryType: gdal.wkbPoint, epsg: '4326' });
    // ids first, then 20 at a time
    expect(open.requests.slice(before).filter((r) => r.path.endsWith('/1/query'))).toHaveLength(4);

    const owners = read((await extract({ url: open.url }, { layer: 2 })).file);
    expect(owners.count).toBe(5);
    expect(owners.rows.map((r) => r.owner)).toEqual(['Ana', 'Bo', 'Çelik', 'Dana', 'Émile']);

    const none = await extract({ url: open.url }, { layer: 1, where: "hydrant_id = 'none'" });
    expect(none.features).toBe(0);
    expect(read(none.file).count).toBe(0);
  });

  it('sends the token in the POST body only, and classifies ArcGIS error objects', async () => {
    const before = secured.requests.length;
    expect((await extract({ url: secured.url, token: TOKEN }, { layer: 0 })).features).toBe(230);
    const sent = secured.requests.slice(before);
    expect(sent.every((r) => r.method === 'POST' && r.token === 'body')).toBe(true);

    const denied = await expectConnectorError(extract({ url: secured.url, token: 'nope' }, { layer: 0 }), 'authentication_failed');
    expect(denied.retryable).toBe(false);
    expect(JSON.stringify({ m: denied.message, d: denied.details })).not.toContain('nope');
    await expectConnectorError(extract({ url: secured.url }, { layer: 0 }), 'authentication_failed');
    await expectConnectorError(extract({ url: open.url }, { layer: 9 }), 'not_found');
    const badWhere = await expectConnectorError(extract({ url: open.url }, { layer: 0, where: 'zone LIKE x%' }), 'invalid_response');
    expect(badWhere.message).toContain('Unable to complete operation');
  });

  it("keeps the server's object ids on every page, widens Integer fields that carry decimals, and refuses another layer than the one asked for (issue 38)", async () => {
    const koopLike = await startFeatureServer({ assessments: true, missingLayerAsLayer0: true });
    try {
      const got = await extract({ url: koopLike.url }, { layer: 3 });
      expect(got.features).toBe(120);
      const ds = gdal.open(got.file);
      try {
        const layer = ds.layers.get(0);
        const rows = layer.features.map((f) => ({ fid: f.fid, ...(f.fields.toObject() as { parcel: string; assessed: number }) }));
        // 50 a page: ids from pages 2 and 3 too are the server's (5001, 5004, …), not renumbered
        expect(rows.map((r) => r.fid)).toEqual(koopLike.layers[3]!.features.map((f) => f.attributes.OBJECTID));
        expect(layer.fields.get('assessed').type).toBe(gdal.OFTReal);
        expect(rows.find((r) => r.parcel === 'P-51')!.assessed).toBe(10192317.3 + 50);
        expect(rows.find((r) => r.parcel === 'P-1')!.assessed).toBe(400000);
      } finally {
        ds.close();
      }
      // Koop answers a layer id it lacks with layer 0: that is not_found, not Parcels
      const missing = await expectConnectorError(extract({ url: koopLike.url }, { layer: 7 }), 'not_found');
      expect(missing.message).toContain('no layer 7');
    } finally {
      await koopLike.stop();
    }
  });

  it('stops at the size limit while paging, leaving nothing behind', async () => {
    const ctx = connectorContext({ maxBytes: 30 * 1024 });
    const error = await expectConnectorError(extract({ url: open.url }, { layer: 0 }, ctx), 'too_large');
    expect(error.details.max_bytes).toBe(30 * 1024);
    expect(filesIn(ctx.workDir)).toEqual([]);
  });
});

describe('featureserver connector against Koop 10.4 (a real FeatureServer: @koopjs/koop-core with the file GeoJSON provider)', () => {
  let koop: KoopServer;
  const trees = Array.from({ length: 130 }, (_, i) => ({
    type: 'Feature',
    // ids that are not 1…N, a height declared Integer by Koop (its first value is whole) that has decimals later, and non-ASCII text
    properties: {
      tree_id: 9001 + i * 7,
      height: i < 50 ? 12 : 12.5 + i,
      species: i % 2 ? 'Tilia cordata' : 'Acer pseudoplatanus',
      street: `Bahnhofstraße ${i}`,
    },
    geometry: { type: 'Point', coordinates: [7.4 + i * 0.001, 46.9 + (i % 10) * 0.001] },
  }));

  beforeAll(async () => {
    koop = await startKoop(path.join(fixtureDir(), 'koop'));
    console.log(`Koop ${KOOP_VERSION} started in ${koop.startupMs} ms`);
    koop.addGeoJson('trees', { type: 'FeatureCollection', metadata: { idField: 'tree_id', maxRecordCount: 50, name: 'Trees' }, features: trees });
  });
  afterAll(async () => koop?.stop());

  it('tests the service, and reads a paged layer keeping ids, decimals and text; where filters', async () => {
    const url = koop.serviceUrl('trees');
    expect(await sut.test!(sut.configuration.parse({ url }), connectorContext())).toMatchObject({ ok: true, status: 'ok' });
    const got = await sut.source!.extract(sut.configuration.parse({ url }), sut.source!.resource.parse({ layer: 0 }), connectorContext(), { sync: null });
    expect(got).toMatchObject({ filename: 'Trees.gpkg', features: 130 });
    const ds = gdal.open(got.file);
    try {
      const layer = ds.layers.get(0);
      expect(layer.srs?.getAuthorityCode(null)).toBe('4326');
      const rows = layer.features.map((f) => ({ fid: f.fid, ...(f.fields.toObject() as { height: number; street: string }) }));
      expect(rows.map((r) => r.fid)).toEqual(trees.map((t) => t.properties.tree_id));
      expect(layer.fields.get('height').type).toBe(gdal.OFTReal);
      expect(rows.map((r) => r.height)).toEqual(trees.map((t) => t.properties.height));
      expect(rows[77]!.street).toBe('Bahnhofstraße 77');
    } finally {
      ds.close();
    }
    const lindens = await sut.source!.extract(
      sut.configuration.parse({ url }),
      sut.source!.resource.parse({ layer: 0, where: "species = 'Tilia cordata'" }),
      connectorContext(),
      { sync: null },
    );
    expect(lindens.features).toBe(65);
  });

  it('refuses the layer Koop answers for an id it lacks (layer 0); a missing service fails the connection test', async () => {
    const missing = await expectConnectorError(
      sut.source!.extract(sut.configuration.parse({ url: koop.serviceUrl('trees') }), sut.source!.resource.parse({ layer: 7 }), connectorContext(), {
        sync: null,
      }),
      'not_found',
    );
    expect(missing.message).toContain('no layer 7');
    const test = await sut.test!(sut.configuration.parse({ url: koop.serviceUrl('nothing-here') }), connectorContext());
    expect(test.ok).toBe(false);
  });
});
