import { createReadStream, statSync } from 'node:fs';
import { readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect } from 'vitest';
import type { TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { e2eTest, type Send, type Upload } from '../support/e2e.js';
import { fixtureDir, pointsGeoJson, zippedShapefile } from '../support/fixtures.js';
import { temporalAddress } from '../support/worker.js';

const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');
const it = e2eTest({
  worker: true,
  scopes: ['workspaces:read', 'workspaces:write', 'workspaces:run', 'sources:read', 'sources:write', 'destinations:read', 'destinations:write'],
  env: { SVC_MAX_UPLOAD_MB: '1' },
});

/** Workspace import from a saved Source and delivery rules that hold for every connector. */
describe.skipIf(skip)('Workspace import and delivery', () => {
  let sut: TestApp;
  let send: Send;
  let upload: Upload;
  let files: Server;
  let base: string;
  const served: Record<string, string> = {};

  it.beforeAll(async ({ sut: theSut, send: theSend, upload: theUpload }) => {
    sut = theSut;
    send = theSend;
    upload = theUpload;
    served['/places.geojson'] = pointsGeoJson(fixtureDir(), 12);
    served['/parcels.zip'] = zippedShapefile(fixtureDir());
    files = createServer((req, res) => {
      const file = served[req.url ?? ''];
      if (req.url === '/moved') return res.writeHead(302, { location: '/places.geojson' }).end();
      if (req.url === '/huge.geojson') {
        // more than the 1 MiB limit, without a Content-Length: the limit must hold while streaming
        res.writeHead(200, { 'content-type': 'application/geo+json' });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        let sent = 0;
        const pump = () => {
          while (sent < 4 * 1024 * 1024) {
            sent += chunk.length;
            if (!res.write(chunk)) return res.once('drain', pump);
          }
          res.end();
        };
        return pump();
      }
      if (!file) return res.writeHead(404).end();
      res.writeHead(200, { 'content-length': statSync(file).size, 'content-type': 'application/octet-stream', etag: '"v1"' });
      createReadStream(file).pipe(res);
    });
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    files?.close();
  });

  const source = async (type: string, configuration: object) => (await send('POST', '/api/v1/sources', { name: type, type, configuration })).json();

  it('imports a url Source; the Workspace then behaves like an upload', async () => {
    const src = await source('url', { url: `${base}/moved` });
    const created = await send('POST', '/api/v1/workspaces', { source_id: src.id });
    expect(created.statusCode, created.body).toBe(201);
    const ws = created.json();
    expect(ws).toMatchObject({ status: 'inspected', filename: 'places.geojson', driver: 'GeoJSON' });
    expect(ws.layers[0]).toMatchObject({ name: 'places', feature_count: 12 });
    expect((await send('GET', `/api/v1/workspaces/${ws.id}/data-preview?limit=5`)).json().preview_row_count).toBe(5);
    expect((await send('GET', `/api/v1/workspaces/${ws.id}/spatial-preview`)).json().returned_count).toBe(12);
    expect(
      (await send('PUT', `/api/v1/workspaces/${ws.id}/transformations`, { operations: [{ type: 'buffer', distance: 10, units: 'meters' }] })).statusCode,
    ).toBe(200);
    const converted = await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GPKG' });
    expect(converted.statusCode, converted.body).toBe(200);
    expect(converted.json().status).toBe('completed');
  });

  it('imports a zipped shapefile from a url; the selector may be an object or a string', async () => {
    const src = await source('url', { url: `${base}/parcels.zip` });
    const created = await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: {} });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().driver).toBe('ESRI Shapefile');
    const stringSelector = await send('POST', '/api/v1/workspaces', { source_id: src.id, source_resource: 'anything' });
    expect(stringSelector.statusCode).toBe(422);
  });

  it('enforces the upload limit while streaming and leaves nothing behind', async () => {
    const before = readdirSync(path.join(sut.services.config.dataDir, 'workspaces')).length;
    const src = await source('url', { url: `${base}/huge.geojson` });
    const res = await send('POST', '/api/v1/workspaces', { source_id: src.id });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'upload_too_large', details: { max_bytes: 1024 * 1024 } });
    expect(readdirSync(path.join(sut.services.config.dataDir, 'workspaces')).length).toBe(before);
  });

  it('classifies a failing Source as source_failed with its reason', async () => {
    const src = await source('url', { url: `${base}/missing.geojson` });
    const res = await send('POST', '/api/v1/workspaces', { source_id: src.id });
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toMatchObject({ code: 'source_failed', details: { reason: 'not_found', retryable: false } });
  });

  it('refuses import types the spec refuses, and unknown or foreign Sources', async () => {
    const drive = await source('gdrive', { folder_id: 'f', credentials_json: '{}' });
    const refused = await send('POST', '/api/v1/workspaces', { source_id: drive.id, source_resource: { file_id: 'x' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.code).toBe('invalid_source');
    const missing = await send('POST', '/api/v1/workspaces', { source_id: 'src_nope' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('source_not_found');
    // Every type is implemented: an import from a GeoNode nobody answers is a source failure.
    const later = await source('geonode', { url: `http://127.0.0.1:${await closedPort()}` });
    const failed = await send('POST', '/api/v1/workspaces', { source_id: later.id, source_resource: 'parcels' });
    expect(failed.statusCode).toBe(422);
    expect(failed.json().error).toMatchObject({ code: 'source_failed', details: { reason: 'unreachable' } });
  });

  it('delivery: job_not_ready before a convert, refused and unknown Destinations', async () => {
    const ws = (await upload(pointsGeoJson(fixtureDir(), 3))).json();
    const later = (
      await send('POST', '/api/v1/destinations', { name: 'g', type: 'geonode', configuration: { url: `http://127.0.0.1:${await closedPort()}` } })
    ).json();
    const early = await send('POST', `/api/v1/workspaces/${ws.id}/deliver`, { destination_id: later.id, destination_target: { title: 't' } });
    expect(early.statusCode).toBe(409);
    expect(early.json().error.code).toBe('job_not_ready');
    expect((await send('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GeoJSON' })).statusCode).toBe(200);
    const failed = await send('POST', `/api/v1/workspaces/${ws.id}/deliver`, { destination_id: later.id, destination_target: { title: 't' } });
    expect(failed.statusCode).toBe(422);
    expect(failed.json().error).toMatchObject({ code: 'delivery_failed', details: { reason: 'unreachable' } });
    const drive = (await send('POST', '/api/v1/destinations', { name: 'd', type: 'gdrive', configuration: { folder_id: 'f' } })).json();
    const refused = await send('POST', `/api/v1/workspaces/${ws.id}/deliver`, { destination_id: drive.id, destination_target: { filename: 'x' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error.code).toBe('invalid_destination');
    const unknown = await send('POST', `/api/v1/workspaces/${ws.id}/deliver`, { destination_id: 'dst_nope' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('destination_not_found');
  });
});

/** A loopback port nobody listens on. */
async function closedPort(): Promise<number> {
  const { createServer } = await import('node:net');
  return new Promise<number>((resolve) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as import('node:net').AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}
