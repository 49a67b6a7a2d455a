import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import gdal from 'gdal-async';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ckan as sut } from '../../connectors/ckan/index.js';
import type { SyncState } from '../../connectors/types.js';
import { startCkanStandIn, type CkanStandIn } from '../servers/ckan/server.js';
import { boroughCentroidsCsv, boroughsShapefileZip, countriesGeoJson, fixtureDir } from '../support/fixtures.js';
import { connectorContext, expectConnectorError } from './support.js';

const ckanapiPython = path.resolve(process.env.SVC_DATA_DIR ?? '.data', 'tools', 'ckanapi', 'bin', 'python');
const skipWithoutCkanapi = existsSync(ckanapiPython)
  ? false
  : `ckanapi is not installed in ${path.dirname(path.dirname(ckanapiPython))}: run \`npm test\` (test/servers/ckan/install.sh installs it)`;

/*
 * What only the stand-in can show (test/servers/ckan/server.ts says why): resources dated at will
 * (the newest of a format by last_modified), the log of which requests carried the token, and a
 * file re-uploaded under a chosen last_modified. The rest of the connector (connection test,
 * formats as CKAN stores them, private uploads through ckan.site_url, Last-Modified /
 * If-Modified-Since, a Job into PostGIS) runs against a real CKAN 2.12 with Solr in
 * ckan-real.e2e.spec.ts.
 */
describe('ckan connector against the Action API stand-in', () => {
  let portal: CkanStandIn;
  const dir = fixtureDir();
  const ids: Record<string, string> = {};
  const config = (c: Record<string, unknown>) => sut.configuration.parse(c) as { url: string; api_key?: string };
  const extract = (c: Record<string, unknown>, r: unknown, sync: SyncState | null = null, ctx = connectorContext()) =>
    sut.source!.extract(config(c), sut.source!.resource.parse(r), ctx, { sync });
  const layerOf = (file: string) => {
    const ds = gdal.open(/\.zip$/.test(file) ? `/vsizip/${file}` : file);
    try {
      const l = ds.layers.get(0);
      return {
        count: l.features.count(),
        epsg: l.srs?.getAuthorityCode(null) ?? null,
        names: l.features.map((f) => f.fields.toObject() as Record<string, unknown>),
      };
    } finally {
      ds.close();
    }
  };

  beforeAll(async () => {
    portal = await startCkanStandIn();
    portal.addDataset({ name: 'nyc-boroughs', title: 'NYC Borough Boundaries' });
    // a CSV of `rows` borough centroids, uploaded as a publisher would
    const centroids = (name: string, format: string, filename: string, rows: number, at: string) =>
      portal.upload('nyc-boroughs', { name, format, filename, body: readFileSync(boroughCentroidsCsv(dir, `${rows}.csv`, rows)), at, mimetype: 'text/csv' }).id;
    ids.csv2023 = centroids('Borough centroids 2023', 'CSV', 'centroids-2023.csv', 3, '2023-05-01T10:00:00.000000');
    ids.shp = portal.upload('nyc-boroughs', {
      name: 'Borough boundaries',
      format: 'SHP',
      filename: 'nybb_16a.zip',
      body: readFileSync(boroughsShapefileZip(dir)),
      at: '2024-01-01T00:00:00.000000',
      mimetype: 'application/zip',
    }).id;
    ids.csv2024 = centroids('Borough centroids 2024', 'csv', 'centroids-2024.csv', 5, '2024-05-01T10:00:00.000000');
    portal.addDataset({ name: 'countries', title: 'Countries (private)', private: true });
    ids.countries = portal.upload('countries', {
      name: 'Admin 0',
      format: 'GeoJSON',
      filename: 'countries.geojson',
      body: readFileSync(countriesGeoJson(dir)),
      at: '2024-02-02T00:00:00.000000',
    }).id;
    portal.external('countries-mirror.geojson', readFileSync(countriesGeoJson(dir)));
    ids.mirror = portal.link('countries', { name: 'Mirror', format: 'GeoJSON', url: `${portal.otherOrigin}/external/countries-mirror.geojson`, at: null }).id;
  });
  afterAll(async () => {
    await portal?.stop();
  });

  it.skipIf(skipWithoutCkanapi)("the stand-in answers ckanapi (CKAN's own client) as CKAN does", async () => {
    // asynchronously: the stand-in answers from this process
    const { stdout } = await promisify(execFile)(
      ckanapiPython,
      [path.resolve('test/servers/ckan/ckanapi_check.py'), portal.url, portal.token, 'nyc-boroughs', 'countries'],
      { encoding: 'utf8' },
    );
    const out = JSON.parse(stdout);
    expect(out.status.ckan_version).toBe('2.12.0');
    expect(out.public.name).toBe('nyc-boroughs');
    expect(out.public.resources.map((r: { name: string }) => r.name)).toEqual(['Borough centroids 2023', 'Borough boundaries', 'Borough centroids 2024']);
    expect(out.public.resources[1]).toMatchObject({ format: 'SHP', url_type: 'upload', last_modified: '2024-01-01T00:00:00.000000' });
    expect(out.resource_show).toBe('Borough centroids 2023');
    expect(out.package_list).toEqual(['nyc-boroughs']);
    expect(out).toMatchObject({
      missing: 'NotFound',
      private_anonymous: 'NotAuthorized',
      private_signed_in: 'countries',
      no_id: 'ValidationError:name_or_id',
      search: 1,
    });
  });

  it('reads the newest resource of a format, one by name, and one by id (shorthand)', async () => {
    const newest = await extract({ url: portal.url }, { dataset: 'nyc-boroughs', format: 'CSV' });
    expect(newest.filename).toBe('centroids-2024.csv');
    expect(readFileSync(newest.file, 'utf8').trim().split('\n')).toHaveLength(6);
    const shp = await extract({ url: portal.url }, { dataset: 'nyc-boroughs', resource: 'Borough boundaries' });
    expect(shp.filename).toBe('nybb_16a.zip');
    const boroughs = layerOf(shp.file);
    expect(boroughs).toMatchObject({ count: 2, epsg: '2263' });
    expect(boroughs.names.map((r) => r.BoroName)).toEqual(['Manhattan', 'The Brönx']);
    const byId = await extract({ url: portal.url }, sut.source!.resource.parse({ resource: ids.csv2023 }));
    expect(byId.filename).toBe('centroids-2023.csv');
    const missing = await expectConnectorError(extract({ url: portal.url }, { dataset: 'nyc-boroughs', format: 'GPKG' }), 'not_found');
    expect(missing.message).toContain('Borough boundaries (SHP)');
    await expectConnectorError(extract({ url: portal.url }, { dataset: 'nowhere', format: 'CSV' }), 'not_found');
    await expectConnectorError(extract({ url: portal.url }, { resource: 'no-such-id' }), 'not_found');
    expect(sut.source!.resource.safeParse({ dataset: 'nyc-boroughs' }).success).toBe(false);
    expect(sut.source!.resource.safeParse({ resource: 'x', format: 'CSV' }).success).toBe(false);
  });

  it('private datasets: the token opens them, goes to the portal only, and a wrong one is classified', async () => {
    const denied = await expectConnectorError(extract({ url: portal.url }, { dataset: 'countries', format: 'GeoJSON' }), 'authentication_failed');
    expect(denied.message).toContain('set api_key');
    const wrong = await expectConnectorError(
      extract({ url: portal.url, api_key: 'not-the-token' }, { dataset: 'countries', resource: 'Admin 0' }),
      'permission_denied',
    );
    expect(JSON.stringify({ m: wrong.message, d: wrong.details })).not.toContain('not-the-token');

    const before = portal.requests.length;
    const got = await extract({ url: portal.url, api_key: portal.token }, { dataset: 'countries', resource: 'Admin 0' });
    expect(layerOf(got.file)).toMatchObject({ count: 4, epsg: '4326' });
    const mirror = await extract({ url: portal.url, api_key: portal.token }, { dataset: 'countries', resource: 'Mirror' });
    expect(layerOf(mirror.file).count).toBe(4);
    const sent = portal.requests.slice(before);
    expect(sent.filter((r) => r.path.startsWith('/api/') || r.path.startsWith('/dataset/')).every((r) => r.authorized)).toBe(true);
    // the link to another origin was fetched without the token
    expect(sent.filter((r) => r.path.startsWith('/external/'))).toEqual([{ method: 'GET', path: '/external/countries-mirror.geojson', authorized: false }]);
  });

  it('an unchanged resource (same last_modified) is skipped without a download; a new upload is read', async () => {
    const first = await extract({ url: portal.url }, { dataset: 'nyc-boroughs', resource: 'Borough boundaries' });
    expect(first.sync?.cursor).toMatchObject({ resource_id: ids.shp, last_modified: '2024-01-01T00:00:00.000000' });
    const downloads = () => portal.requests.filter((r) => r.path.includes(`/resource/${ids.shp}/download/`)).length;
    const before = downloads();
    const again = await extract({ url: portal.url }, { dataset: 'nyc-boroughs', resource: 'Borough boundaries' }, first.sync!);
    expect(again).toMatchObject({ unchanged: true, file: '' });
    expect(downloads()).toBe(before);
    // Other bytes (a zip made again within the same two seconds is byte-identical, and its ETag
    // would rightly say unchanged): the same files with a zip comment.
    portal.reupload(ids.shp!, withZipComment(readFileSync(boroughsShapefileZip(fixtureDir())), 'new upload'), '2024-09-09T09:09:09.000000');
    const changed = await extract({ url: portal.url }, { dataset: 'nyc-boroughs', resource: 'Borough boundaries' }, first.sync!);
    expect(changed.unchanged).toBeUndefined();
    expect(changed.sync?.cursor).toMatchObject({ last_modified: '2024-09-09T09:09:09.000000' });
    expect(downloads()).toBe(before + 1);
    // a link without last_modified: the download's ETag decides (the stand-in's links send none: read again)
    const link = await extract({ url: portal.url, api_key: portal.token }, { dataset: 'countries', resource: 'Mirror' });
    expect((await extract({ url: portal.url, api_key: portal.token }, { dataset: 'countries', resource: 'Mirror' }, link.sync!)).unchanged).toBeUndefined();
  });
});

/** The same zip with a comment: other bytes (another ETag and hash), the same files. */
function withZipComment(zip: Buffer, comment: string): Buffer {
  const endOfDirectory = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  const text = Buffer.from(comment);
  const out = Buffer.concat([zip.subarray(0, endOfDirectory + 22), text]);
  out.writeUInt16LE(text.length, endOfDirectory + 20);
  return out;
}
