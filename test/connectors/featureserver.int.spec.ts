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

/*
 * The reads run against Koop (the second describe); the stand-in keeps what Koop lacks: tokens and
 * ArcGIS error objects, layers without pagination (read by objectIds), tables, projected layers, MapServer.
 */
describe('featureserver connector against the stand-in, for what Koop lacks', () => {
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

  it('reads layers without pagination by objectIds (also through a MapServer), tables without geometry, and a projected layer (EPSG:2056)', async () => {
    const parcels = read((await extract({ url: open.url }, { layer: 0, where: "zone = 'commercial' AND area > 5000" })).file);
    expect(parcels).toMatchObject({ layer: 'Parcels', geometryType: gdal.wkbMultiPolygon, epsg: '2056' });
    expect(parcels.rows.every((r) => r.zone === 'commercial')).toBe(true);

    const before = open.requests.length;
    const hydrants = await extract({ url: open.url }, { layer: 1 });
    const points = read(hydrants.file);
    expect(points).toMatchObject({ layer: 'Hydrants', count: 45, geometryType: gdal.wkbPoint, epsg: '4326' });
    // ids first, then 20 at a time
    expect(open.requests.slice(before).filter((r) => r.path.endsWith('/1/query'))).toHaveLength(4);

    // the same layer through the service's MapServer
    const viaMap = read((await extract({ url: open.url.replace(/FeatureServer$/, 'MapServer') }, { layer: 1 })).file);
    expect(viaMap).toMatchObject({ layer: 'Hydrants', count: 45 });

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
});

describe('featureserver connector against Koop 10.4 (a real FeatureServer: @koopjs/koop-core with the file GeoJSON provider)', () => {
  let koop: KoopServer;
  const extractFrom = (url: string, r: Record<string, unknown>, ctx = connectorContext()) =>
    sut.source!.extract(sut.configuration.parse({ url }), sut.source!.resource.parse(r), ctx, { sync: null });
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

  // 230 squares a row of 20 wide; parcel 10 has two squares apart (a multipolygon)
  const square = (x: number, y: number) => [
    [
      [x, y],
      [x + 0.0008, y],
      [x + 0.0008, y + 0.0008],
      [x, y + 0.0008],
      [x, y],
    ],
  ];
  const parcels = Array.from({ length: 230 }, (_, i) => {
    const [x, y] = [7.4 + (i % 20) * 0.001, 46.9 + Math.floor(i / 20) * 0.001];
    return {
      type: 'Feature',
      properties: { parcel_no: 1001 + i, parcel_id: `P-${String(i + 1).padStart(4, '0')}`, zone: ['residential', 'commercial', 'agricultural'][i % 3] },
      geometry: i === 9 ? { type: 'MultiPolygon', coordinates: [square(x, y), square(x + 0.5, y)] } : { type: 'Polygon', coordinates: square(x, y) },
    };
  });

  beforeAll(async () => {
    koop = await startKoop(path.join(fixtureDir(), 'koop'));
    console.log(`Koop ${KOOP_VERSION} started in ${koop.startupMs} ms`);
    koop.addGeoJson('trees', { type: 'FeatureCollection', metadata: { idField: 'tree_id', maxRecordCount: 50, name: 'Trees' }, features: trees });
    koop.addGeoJson('parcels', { type: 'FeatureCollection', metadata: { idField: 'parcel_no', maxRecordCount: 100, name: 'Parcels' }, features: parcels });
  });
  afterAll(async () => koop?.stop());

  it('tests the service, and reads a paged layer keeping ids, decimals and text; where filters', async () => {
    const url = koop.serviceUrl('trees');
    expect(await sut.test!(sut.configuration.parse({ url }), connectorContext())).toMatchObject({ ok: true, status: 'ok' });
    const got = await extractFrom(url, { layer: 0 });
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
    const lindens = await extractFrom(url, { layer: 0, where: "species = 'Tilia cordata'" });
    expect(lindens.features).toBe(65);
  });

  it('reads a paged polygon layer into one GeoPackage layer, the multipart parcel kept; an empty where result; the size limit while paging', async () => {
    const url = koop.serviceUrl('parcels');
    const ctx = connectorContext();
    const got = await extractFrom(url, { layer: 0 }, ctx);
    expect(got).toMatchObject({ filename: 'Parcels.gpkg', features: 230 });
    expect(filesIn(ctx.workDir)).toEqual(['Parcels.gpkg']);
    const ds = gdal.open(got.file);
    try {
      const layer = ds.layers.get(0);
      expect(layer.geomType).toBe(gdal.wkbMultiPolygon);
      const parts = new Map(
        layer.features.map((f) => {
          const g = f.getGeometry();
          return [f.fields.get('parcel_id') as string, g instanceof gdal.GeometryCollection ? g.children.count() : 1];
        }),
      );
      expect(parts.size).toBe(230);
      expect(parts.get('P-0010')).toBe(2);
      expect(parts.get('P-0001')).toBe(1);
    } finally {
      ds.close();
    }
    const none = await extractFrom(url, { layer: 0, where: "zone = 'none'" });
    expect(none.features).toBe(0);
    const small = connectorContext({ maxBytes: 30 * 1024 });
    const error = await expectConnectorError(extractFrom(url, { layer: 0 }, small), 'too_large');
    expect(error.details.max_bytes).toBe(30 * 1024);
    expect(filesIn(small.workDir)).toEqual([]);
  });

  it('refuses the layer Koop answers for an id it lacks (layer 0); a missing service fails the connection test', async () => {
    const missing = await expectConnectorError(extractFrom(koop.serviceUrl('trees'), { layer: 7 }), 'not_found');
    expect(missing.message).toContain('no layer 7');
    const test = await sut.test!(sut.configuration.parse({ url: koop.serviceUrl('nothing-here') }), connectorContext());
    expect(test.ok).toBe(false);
  });
});
