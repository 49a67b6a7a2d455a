import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { gdal } from '../../geo/gdal/gdal.js';
import { bwrapPath } from '../../geo/sandbox/sandbox.js';
import { bearer } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest, type Send, type Upload } from '../support/e2e.js';
import { fixtureDir, pointsGeoJson } from '../support/fixtures.js';
import { until } from '../support/until.js';
import { temporalAddress } from '../support/worker.js';

/*
 * Issue 32's findings 1, 3 and 4 through the API, as a user would try them: a label that names a
 * file outside its folder, CRS texts and in-file CRS links that would make GDAL fetch a URL, and a
 * preview whose SQL never ends.
 */

const it = e2eTest({ worker: true, scopes: ['workspaces:read', 'workspaces:write', 'workspaces:run'] });
const skip =
  skipWithoutDatabase ||
  (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal') ||
  (!bwrapPath() && 'bubblewrap (bwrap) is missing: the sandbox these tests check cannot start');

/** A PDS4 label whose one delimited table is `file` (any path, relative to the label). */
const pds4Label = (file: string) => `<?xml version="1.0" encoding="UTF-8"?>
<Product_Observational xmlns="http://pds.nasa.gov/pds4/pds/v1">
  <Identification_Area>
    <logical_identifier>urn:nasa:pds:geoflow:test:label</logical_identifier>
    <version_id>1.0</version_id>
    <title>label</title>
    <information_model_version>1.11.0.0</information_model_version>
    <product_class>Product_Observational</product_class>
  </Identification_Area>
  <File_Area_Observational>
    <File><file_name>${file}</file_name></File>
    <Table_Delimited>
      <offset unit="byte">0</offset>
      <parsing_standard_id>PDS DSV 1</parsing_standard_id>
      <records>2</records>
      <record_delimiter>Carriage-Return Line-Feed</record_delimiter>
      <field_delimiter>Comma</field_delimiter>
      <Record_Delimited>
        <fields>1</fields>
        <groups>0</groups>
        <Field_Delimited><name>line</name><field_number>1</field_number><data_type>ASCII_String</data_type></Field_Delimited>
      </Record_Delimited>
    </Table_Delimited>
  </File_Area_Observational>
</Product_Observational>
`;

/** Processes whose command line holds `marker` (a preview's GDAL child, found by its SQL). */
function processesWith(marker: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', marker], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when none matches
  }
}

/** A Workspace whose transformation never ends, its column named by a fresh marker that finds its GDAL process. */
async function endlessPreview(upload: Upload, send: Send, dir: string): Promise<{ id: string; marker: string }> {
  const marker = `n_${randomBytes(6).toString('hex')}`;
  const id = (await upload(pointsGeoJson(dir))).json().id as string;
  await send('PUT', `/api/v1/workspaces/${id}/transformations`, {
    sql: `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) AS ${marker} FROM c`,
  });
  return { id, marker };
}

describe.skipIf(skip)('untrusted uploads and requests', { timeout: 120_000 }, () => {
  let listener: Server;
  let port: number;
  const requests: string[] = [];
  const dir = fixtureDir();
  const canaryText = `geoflow-canary-${randomBytes(8).toString('hex')}`;

  it.beforeAll(async ({ sut }) => {
    // What a crafted file would like to read: a file in the service's own data folder.
    writeFileSync(path.join(sut.services.config.dataDir, 'canary.txt'), `${canaryText}\r\n${canaryText}\r\n`);
    listener = createServer((req, res) => {
      requests.push(req.url ?? '');
      res.writeHead(404).end();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    port = (listener.address() as AddressInfo).port;
  });
  it.afterAll(async () => {
    await new Promise((r) => listener?.close(r));
  });
  it.beforeEach(() => {
    requests.length = 0;
  });

  it('answers a PDS4 label naming a file outside its folder with a clear 400, and leaks nothing', async ({ sut, upload }) => {
    // From the Workspace's original/ folder, enough ../ reach / whatever the data folder's depth.
    const outside = `${'../'.repeat(20)}${path.join(sut.services.config.dataDir, 'canary.txt').slice(1)}`;
    const label = path.join(dir, 'label.xml');
    writeFileSync(label, pds4Label(outside));
    // The control: GDAL on this machine, outside the sandbox, reads the canary through that label.
    expect(execFileSync('ogrinfo', ['-ro', '-al', label], { encoding: 'utf8' })).toContain(canaryText);

    const res = await upload(label);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error.code).toBe('invalid_source');
    expect(res.json().error.message).toMatch(/no layers and no raster/);
    expect(res.body).not.toContain(canaryText);
  });

  it('still reads formats the service opens only in the sandbox (a KML), upload to convert', async ({ upload, get, send }) => {
    const kml = path.join(dir, 'places.kml');
    execFileSync('ogr2ogr', ['-f', 'KML', kml, pointsGeoJson(dir)]);
    const created = await upload(kml);
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ driver: 'LIBKML', layers: [{ feature_count: 25 }] });
    const id = created.json().id;
    const preview = await get(`/api/v1/workspaces/${id}/data-preview?limit=5`);
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json()).toMatchObject({ preview_row_count: 5, row_count: 25 });
    expect((await get(`/api/v1/workspaces/${id}/spatial-preview`)).json().returned_count).toBe(25);
    const converted = await send('POST', `/api/v1/workspaces/${id}/convert`, { output_format: 'GPKG' });
    expect(converted.statusCode, converted.body).toBe(200);
    expect(converted.json().output).toMatchObject({ format: 'GPKG' });
  });

  it('reads a GeoJSON whose crs links to a URL without any request leaving: upload, previews, convert', async ({ upload, get, send }) => {
    const base = `http://127.0.0.1:${port}`;
    for (const crs of [
      { type: 'link', properties: { href: `${base}/crs-link`, type: 'proj4' } },
      { type: 'url', properties: { url: `${base}/crs-url` } },
      { type: 'name', properties: { name: `${base}/crs-name` } },
    ]) {
      const file = path.join(dir, `crs-${crs.type}.geojson`);
      writeFileSync(
        file,
        JSON.stringify({
          type: 'FeatureCollection',
          crs,
          features: [{ type: 'Feature', properties: { id: 1 }, geometry: { type: 'Point', coordinates: [7.44, 46.95] } }],
        }),
      );
      const created = await upload(file);
      expect(created.statusCode, created.body).toBe(201);
      const id = created.json().id;
      expect((await get(`/api/v1/workspaces/${id}/data-preview`)).statusCode).toBe(200);
      await get(`/api/v1/workspaces/${id}/spatial-preview`);
      const converted = await send('POST', `/api/v1/workspaces/${id}/convert`, { output_format: 'GPKG', target_crs: 'EPSG:3857' });
      expect([200, 400, 422]).toContain(converted.statusCode);
    }
    expect(requests).toEqual([]);
  });

  it('refuses URL, virtual-file and path CRS texts before GDAL sees them', async ({ upload, send }) => {
    const created = await upload(pointsGeoJson(dir));
    const id = created.json().id;
    for (const target_crs of [
      `http://127.0.0.1:${port}/target`,
      `/vsicurl/http://127.0.0.1:${port}/vsi`,
      '/etc/passwd',
      '../../secret.key',
      'file:///etc/passwd',
    ]) {
      const res = await send('POST', `/api/v1/workspaces/${id}/convert`, { output_format: 'GeoJSON', target_crs });
      expect(res.statusCode, `${target_crs}: ${res.body}`).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'invalid_parameter', details: { parameter: 'target_crs' } });
    }
    const reproject = await send('PUT', `/api/v1/workspaces/${id}/transformations`, {
      operations: [{ type: 'reproject', target_crs: `http://127.0.0.1:${port}/op` }],
    });
    expect(reproject.statusCode, reproject.body).toBe(422);
    expect(reproject.json().error.message).toMatch(/URL/);
    // The service's own GDAL cannot fetch one either, if some path forgot to check.
    expect(() => gdal.SpatialReference.fromUserInput(`http://127.0.0.1:${port}/in-process`)).toThrow();
    expect(requests).toEqual([]);
  });

  it('caps what a preview query can make: an endless WITH RECURSIVE shows its first rows', async ({ upload, get, send }) => {
    const id = (await upload(pointsGeoJson(dir))).json().id;
    const set = await send('PUT', `/api/v1/workspaces/${id}/transformations`, {
      sql: 'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT x FROM c',
    });
    expect(set.statusCode, set.body).toBe(200);
    const res = await get(`/api/v1/workspaces/${id}/transform-preview`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ preview_row_count: 100, truncated: true });
  });

  it('stops a preview query at SVC_PREVIEW_TIMEOUT_S, its GDAL process gone with it', async ({ sut, upload, get, send }) => {
    sut.services.config.previewTimeoutMs = 3_000;
    const { id, marker } = await endlessPreview(upload, send, dir);
    const res = await get(`/api/v1/workspaces/${id}/transform-preview`);
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().error).toMatchObject({ code: 'invalid_transformation', details: { limit_s: 3, setting: 'SVC_PREVIEW_TIMEOUT_S' } });
    expect(processesWith(marker)).toEqual([]);
  });

  it('stops a preview query when its client goes away', async ({ sut, token, upload, send }) => {
    sut.services.config.previewTimeoutMs = 120_000;
    const { id, marker } = await endlessPreview(upload, send, dir);
    const address = await sut.app.listen({ port: 0, host: '127.0.0.1' });
    const client = new AbortController();
    const answer = fetch(`${address}/api/v1/workspaces/${id}/transform-preview`, { headers: bearer(token), signal: client.signal }).catch((e: Error) => e);
    expect(await until('the converter process started', () => processesWith(marker).length > 0, 60_000)).toBe(true);
    client.abort();
    expect(await answer).toBeInstanceOf(Error);
    // Gone long before the two-minute deadline: the closed request stopped it.
    expect(await until('the converter process gone', () => processesWith(marker).length === 0, 15_000)).toBe(true);
  });
});
