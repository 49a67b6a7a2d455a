import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import gdal from 'gdal-async';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { ckan as sut } from '../../connectors/ckan/index.js';
import type { SyncState } from '../../connectors/types.js';
import { boroughCentroidsCsv, boroughsShapefileZip, countriesGeoJson, fixtureDir } from '../support/fixtures.js';
import { createPostgisTarget } from '../support/jobs.js';
import { temporalAddress } from '../support/worker.js';
import { startHttpFixtureServer, type HttpFixtureServer } from '../servers/http/server.js';
import { realCkanMissing, startRealCkan, type CkanResourceRecord, type RealCkan } from '../servers/ckan/real.js';
import { AS_READ, connectorTest } from './e2e.js';
import { closedPort, connectorContext, expectConnectorError } from './support.js';

/*
 * The ckan connector against a real CKAN 2.12.0 with a real Solr 9.10.1 (test/servers/ckan/real.ts),
 * seeded by ckanapi as a publisher would: the connection test (and a wrong token), formats as
 * CKAN itself writes them, private uploads with the token through ckan.site_url, the portal's own
 * Last-Modified / If-Modified-Since, and a Job from the portal into PostGIS through the API.
 * The portal listens on 127.0.0.1 and its ckan.site_url says localhost: one server, two origins.
 */

const skip = realCkanMissing() || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');
if (skip) console.warn(`[ckan-real] skipped: ${skip}`);
// The connector's own calls need no app; the Job at the end gets one (and a worker) from the fixture.
const it = connectorTest();

describe.skipIf(skip)('ckan connector against a real CKAN 2.12 with Solr', () => {
  let portal: RealCkan;
  let links: HttpFixtureServer;
  let seeded: Record<string, Record<string, CkanResourceRecord>>;
  const dir = fixtureDir();
  const config = (c: Record<string, unknown>) => sut.configuration.parse(c) as { url: string; api_key?: string };
  const extract = (c: Record<string, unknown>, r: unknown, sync: SyncState | null = null) =>
    sut.source!.extract(config(c), sut.source!.resource.parse(r), connectorContext(), { sync });
  const featureCount = (file: string) => {
    const ds = gdal.open(/\.zip$/.test(file) ? `/vsizip/${file}` : file);
    try {
      return ds.layers.get(0).features.count();
    } finally {
      ds.close();
    }
  };

  beforeAll(async () => {
    links = await startHttpFixtureServer({ dir });
    portal = await startRealCkan();
    const seedStarted = performance.now();
    const countries = countriesGeoJson(dir);
    writeFileSync(path.join(dir, 'trees.csv'), readFileSync(boroughCentroidsCsv(dir, 't.csv', 2)));
    seeded = await portal.seed('geoflow-tests', [
      {
        name: 'nyc-boroughs',
        title: 'NYC Borough Boundaries',
        resources: [
          { name: 'Borough centroids 2023', format: 'csv', file: boroughCentroidsCsv(dir, 'centroids-2023.csv', 3) },
          { name: 'Borough boundaries', format: 'Shapefile', file: boroughsShapefileZip(dir) },
          { name: 'Borough centroids 2024', format: '.csv', file: boroughCentroidsCsv(dir, 'centroids-2024.csv', 5) },
          // no format: CKAN guesses one from the file name
          { name: 'Trees', file: path.join(dir, 'trees.csv') },
        ],
      },
      {
        name: 'countries',
        title: 'Countries (private)',
        private: true,
        resources: [
          { name: 'Admin 0', format: 'geojson', file: countries },
          { name: 'Mirror', format: 'GeoJSON', url: `${links.url}/files/${path.basename(countries)}` },
        ],
      },
    ]);
    console.log(
      `[ckan-real] CKAN ${portal.version} with Solr 9.10.1 up in ${(portal.startupMs / 1000).toFixed(1)} s, seeded by ckanapi in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
    );
  }, 240_000);
  afterAll(async () => {
    await portal?.stop();
    await links?.stop();
  });

  it('the connection test: CKAN 2.12.0, the token signs in, a wrong token is refused, the other site_url noted; nobody listening, not a CKAN', async () => {
    const anonymous = await sut.test!(config({ url: portal.siteUrl }), connectorContext());
    expect(anonymous).toMatchObject({ ok: true, status: 'ok' });
    expect(anonymous.message).toContain('CKAN 2.12.0 (geoflow test portal)');
    const signedIn = await sut.test!(config({ url: portal.siteUrl, api_key: portal.token }), connectorContext());
    expect(signedIn).toMatchObject({ ok: true, status: 'ok' });
    expect(signedIn.message).toContain(`signs in as ${portal.user}`);
    const wrong = await sut.test!(config({ url: portal.siteUrl, api_key: `${portal.token.slice(0, -4)}AAAA` }), connectorContext());
    expect(wrong).toMatchObject({ ok: false, status: 'authentication_failed' });
    expect(wrong.message).toContain('did not accept the API token');
    expect(JSON.stringify(wrong)).not.toContain(portal.token.slice(0, 40));
    const otherOrigin = await sut.test!(config({ url: portal.url, api_key: portal.token }), connectorContext());
    expect(otherOrigin).toMatchObject({ ok: true });
    expect(otherOrigin.message).toContain(`ckan.site_url is ${portal.siteUrl}`);
    const closed = await sut.test!(config({ url: `http://127.0.0.1:${await closedPort()}` }), connectorContext());
    expect(closed).toMatchObject({ ok: false, status: 'unreachable' });
    const notCkan = await sut.test!(config({ url: links.url }), connectorContext());
    expect(notCkan.ok).toBe(false);
    expect(['not_found', 'invalid_response']).toContain(notCkan.status);
  });

  it('formats as CKAN writes them: normalised on save, guessed from the file name, matched by the selector', async () => {
    const boroughs = seeded['nyc-boroughs']!;
    // "csv" and "Shapefile" become CKAN's short names, ".csv" is kept as typed (the connector reads it as CSV), none is guessed
    expect(Object.values(boroughs).map((r) => r.format)).toEqual(['CSV', 'SHP', '.csv', 'CSV']);
    expect(seeded.countries!['Admin 0']).toMatchObject({ format: 'GeoJSON', url_type: 'upload' });
    expect(boroughs['Borough boundaries']!.url.startsWith(`${portal.siteUrl}/dataset/`)).toBe(true);
    const shp = await extract({ url: portal.siteUrl }, { dataset: 'nyc-boroughs', format: 'Shapefile' });
    expect(shp.filename).toBe('nybb_16a.zip');
    expect(featureCount(shp.file)).toBe(2);
    // the newest CSV is the last one uploaded (CKAN stamps last_modified itself)
    const newest = await extract({ url: portal.siteUrl }, { dataset: 'nyc-boroughs', format: 'text/csv' });
    expect(newest.filename).toBe('trees.csv');
    const byName = await extract({ url: portal.siteUrl }, { dataset: 'nyc-boroughs', resource: 'Borough centroids 2024' });
    expect(readFileSync(byName.file, 'utf8').trim().split('\n')).toHaveLength(6);
    const byId = await extract({ url: portal.siteUrl }, { resource: boroughs['Borough centroids 2023']!.id });
    expect(byId.filename).toBe('centroids-2023.csv');
    const missing = await expectConnectorError(extract({ url: portal.siteUrl }, { dataset: 'nyc-boroughs', format: 'GPKG' }), 'not_found');
    expect(missing.message).toContain('Borough boundaries (SHP)');
    await expectConnectorError(extract({ url: portal.siteUrl }, { dataset: 'nowhere', format: 'CSV' }), 'not_found');
    await expectConnectorError(extract({ url: portal.siteUrl }, { resource: 'no-such-id' }), 'not_found');
  });

  it('private datasets: refused without the token or with a wrong one; read with it through ckan.site_url; a link elsewhere gets no token', async () => {
    const denied = await expectConnectorError(extract({ url: portal.siteUrl }, { dataset: 'countries', format: 'GeoJSON' }), 'authentication_failed');
    expect(denied.message).toContain('set api_key');
    const wrongToken = `${portal.token.slice(0, -4)}AAAA`;
    const wrong = await expectConnectorError(
      extract({ url: portal.siteUrl, api_key: wrongToken }, { dataset: 'countries', resource: 'Admin 0' }),
      'permission_denied',
    );
    expect(JSON.stringify({ m: wrong.message, d: wrong.details })).not.toContain(wrongToken);

    const got = await extract({ url: portal.siteUrl, api_key: portal.token }, { dataset: 'countries', resource: 'Admin 0' });
    expect(got.filename).toBe(path.basename(countriesGeoJson(dir)));
    expect(featureCount(got.file)).toBe(4);
    const before = links.requests.length;
    const mirror = await extract({ url: portal.siteUrl, api_key: portal.token }, { dataset: 'countries', resource: 'Mirror' });
    expect(featureCount(mirror.file)).toBe(4);
    const sent = links.requests.slice(before);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.every((r) => r.headers.authorization === undefined)).toBe(true);
  });

  it('a Source url on another origin than ckan.site_url: the upload is refused without the token, and the error names both URLs and the setting', async () => {
    const refused = await expectConnectorError(
      extract({ url: portal.url, api_key: portal.token }, { dataset: 'countries', resource: 'Admin 0' }),
      'permission_denied',
    );
    expect(refused.message).toContain(portal.siteUrl);
    expect(refused.message).toContain(portal.url);
    expect(refused.message).toContain('ckan.site_url');
    expect(JSON.stringify({ m: refused.message, d: refused.details })).not.toContain(portal.token);
    // public uploads on the other origin are read: no token is needed there
    expect((await extract({ url: portal.url }, { dataset: 'nyc-boroughs', resource: 'Borough boundaries' })).filename).toBe('nybb_16a.zip');
  });

  it("unchanged resources: CKAN's last_modified skips the download; its Last-Modified answers If-Modified-Since with 304; a new upload is read", async () => {
    const selector = { dataset: 'countries', resource: 'Admin 0' };
    const auth = { url: portal.siteUrl, api_key: portal.token };
    const first = await extract(auth, selector);
    const cursor = first.sync!.cursor as Record<string, string | null>;
    expect(cursor).toMatchObject({ resource_id: seeded.countries!['Admin 0']!.id, last_modified: seeded.countries!['Admin 0']!.last_modified });
    expect(cursor.http_last_modified).toMatch(/GMT$/);
    expect((await extract(auth, selector, first.sync!)).unchanged).toBe(true);
    // metadata says changed (another last_modified), the file does not: the portal's own 304 decides
    const conditional = await extract(auth, selector, { cursor: { ...cursor, last_modified: '2020-01-01T00:00:00', hash: null } } as SyncState);
    expect(conditional).toMatchObject({ unchanged: true, file: '' });

    const other = path.join(dir, 'countries-v2.geojson');
    const v2 = JSON.parse(readFileSync(countriesGeoJson(dir), 'utf8'));
    v2.features = v2.features.slice(0, 2);
    writeFileSync(other, JSON.stringify(v2));
    const patched = await portal.reupload(seeded.countries!['Admin 0']!.id, other);
    expect(patched.last_modified).not.toBe(cursor.last_modified);
    const changed = await extract(auth, selector, first.sync!);
    expect(changed.unchanged).toBeUndefined();
    expect(changed.filename).toBe('countries-v2.geojson');
    expect(featureCount(changed.file)).toBe(2);
  });

  describe('through the API with the real worker', () => {
    let target: Awaited<ReturnType<typeof createPostgisTarget>>;
    let warehouse: string;

    // through the fixture, so that the app and its worker start in this hook's time, not the test's
    it.beforeAll(async ({ api }) => {
      target = await createPostgisTarget();
      warehouse = (await api.create('destinations', 'postgis', target.configuration, 'warehouse')).id;
    });
    afterAll(async () => {
      await target?.drop();
    });

    it('a Job: the private boundaries of a CKAN dataset into PostGIS with the API token, then unchanged', async ({ api }) => {
      const source = await api.call('POST', '/api/v1/sources', {
        name: 'City portal',
        type: 'ckan',
        configuration: { url: portal.siteUrl, api_key: portal.token },
      });
      expect(source.statusCode, source.body).toBe(201);
      expect(source.body).not.toContain(portal.token);
      expect((await api.call('POST', `/api/v1/sources/${source.json().id}/test`)).json()).toMatchObject({ ok: true, status: 'ok' });
      // a draft against a closed port is a classified failure; the spec refuses ckan for Workspace import
      const draft = await api.call('POST', '/api/v1/sources/test', { type: 'ckan', configuration: { url: `http://127.0.0.1:${await closedPort()}/` } });
      expect(draft.json()).toMatchObject({ ok: false, status: 'unreachable' });
      const imported = await api.call('POST', '/api/v1/workspaces', {
        source_id: source.json().id,
        source_resource: { dataset: 'countries', resource: 'Admin 0' },
      });
      expect(imported.statusCode, imported.body).toBe(400);
      expect(imported.json().error.code).toBe('invalid_source');
      const job = await api.createJob({
        name: 'Countries from the portal',
        ...AS_READ,
        source_id: source.json().id,
        source_resource: { dataset: 'countries', resource: 'Admin 0' },
        destination_id: warehouse,
        destination_target: { table: 'countries', write_mode: 'replace' },
      });
      const run = await api.runNow(job);
      expect(run, JSON.stringify(run.error)).toMatchObject({ status: 'succeeded', skipped_reason: null });
      const rows = await target.query<{ n: string; srid: number }>('SELECT count(*) AS n, max(ST_SRID(geom)) AS srid FROM public.countries');
      expect(rows[0]!.srid).toBe(4326);
      // the second upload of the unchanged-resources case: two countries
      expect(Number(rows[0]!.n)).toBe(2);
      expect(await api.runNow(job)).toMatchObject({ status: 'succeeded', skipped_reason: 'source_unchanged' });
    });
  });
});
