import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertDataset } from '../../geo/datasets/convert.js';
import { datasetAt } from '../../geo/datasets/dataset-files.js';
import { engineAvailable } from '../../geo/formats/engine.js';
import { bearer, createTestApp, createToken, login, type TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { fixtureDir, pointsGeoJson } from '../support/fixtures.js';
import { multipartFile } from '../support/multipart.js';
import { startTestWorker, temporalAddress } from '../support/worker.js';

/*
 * Issue 35 through the API: a GeoParquet upload inspected and previewed, the formats catalogue,
 * creation options checked before a conversion starts, GeoParquet and PMTiles downloads.
 */
const skip =
  skipWithoutDatabase ||
  (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal') ||
  (!engineAvailable() && 'the formats engine is not installed (scripts/ensure.sh installs it)');

describe.skipIf(skip)('GeoParquet and PMTiles through /api/v1', () => {
  let sut: TestApp;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let token: string;
  const dir = fixtureDir();
  let parquet: string;

  beforeAll(async () => {
    sut = await createTestApp({ temporal: true });
    worker = await startTestWorker(sut.services.config);
    token = await createToken(sut.app, await login(sut.app), ['workspaces:read', 'workspaces:write', 'workspaces:run']);
    // The fixture: the service's own GeoParquet of 25 points (interop.int.spec.ts checks it against other readers).
    const written = await convertDataset(datasetAt(pointsGeoJson(dir)), { outputFormat: 'GeoParquet' }, path.join(dir, 'parquet'));
    parquet = path.join(dir, 'parquet', written.filename);
  });
  afterAll(async () => {
    await worker?.stop();
    await sut?.close();
  });

  const get = (url: string) => sut.app.inject({ method: 'GET', url, headers: bearer(token) });
  const post = (url: string, payload: object) => sut.app.inject({ method: 'POST', url, payload, headers: bearer(token) });

  it('lists GeoParquet (read and write), PMTiles and vector MBTiles among the formats', async () => {
    const formats = (await get('/api/v1/formats')).json().items as {
      id: string;
      kind: string;
      read: boolean;
      write: boolean;
      extensions: string[];
      media_type: string;
    }[];
    expect(formats.find((f) => f.id === 'GeoParquet')).toMatchObject({ kind: 'vector', read: true, write: true, extensions: ['parquet', 'geoparquet'] });
    expect(formats.find((f) => f.id === 'PMTiles')).toMatchObject({ kind: 'vector', read: false, write: true, media_type: 'application/vnd.pmtiles' });
    expect(formats.find((f) => f.id === 'MBTiles' && f.kind === 'vector')).toMatchObject({ write: true });
  });

  it('uploads a GeoParquet file, previews it, refuses bad creation options, converts to GeoParquet and PMTiles', async () => {
    const m = multipartFile(parquet, 'places.parquet');
    const created = await sut.app.inject({ method: 'POST', url: '/api/v1/workspaces', payload: m.payload, headers: { ...m.headers, ...bearer(token) } });
    expect(created.statusCode, created.body).toBe(201);
    const ws = created.json();
    expect(ws).toMatchObject({ status: 'inspected', filename: 'places.parquet', driver: 'GeoParquet', format: 'GeoParquet 1.1.0', crs: 'EPSG:4326' });
    expect(ws.layers[0]).toMatchObject({ name: 'places', feature_count: 25, geometry_type: 'POINT', has_geometry: true });
    expect(ws.layers[0].extent).toEqual([6, 46, 8.4, 47.2]);

    const map = await get(`/api/v1/workspaces/${ws.id}/spatial-preview`);
    expect(map.statusCode).toBe(200);
    expect(map.json()).toMatchObject({ returned_count: 25, feature_count: 25 });

    const bad = await post(`/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GeoParquet', creation_options: { dataset: { ROW_GROUPS: '10' } } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'invalid_parameter', details: { parameter: 'creation_options', option: 'ROW_GROUPS' } });
    const notForGpkg = await post(`/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GPKG', creation_options: { dataset: { MAXZOOM: '3' } } });
    expect(notForGpkg.statusCode).toBe(400);
    // Refused before anything started: the Workspace is as it was.
    expect((await get(`/api/v1/workspaces/${ws.id}`)).json()).toMatchObject({ status: 'inspected', output: null });

    const toParquet = await post(`/api/v1/workspaces/${ws.id}/convert`, { output_format: 'parquet', creation_options: { dataset: { COMPRESSION: 'SNAPPY' } } });
    expect(toParquet.statusCode, toParquet.body).toBe(200);
    expect(toParquet.json().output).toMatchObject({ format: 'GeoParquet', filename: 'places.parquet', media_type: 'application/vnd.apache.parquet' });
    const parquetBytes = (await get(`/api/v1/workspaces/${ws.id}/download`)).rawPayload;
    expect(parquetBytes.subarray(0, 4).toString('latin1')).toBe('PAR1');
    expect(parquetBytes.subarray(-4).toString('latin1')).toBe('PAR1');

    const toTiles = await post(`/api/v1/workspaces/${ws.id}/convert`, {
      output_format: 'PMTiles',
      creation_options: { dataset: { MINZOOM: '0', MAXZOOM: '6' } },
    });
    expect(toTiles.statusCode, toTiles.body).toBe(200);
    expect(toTiles.json().output).toMatchObject({ format: 'PMTiles', filename: 'places.pmtiles', layers: ['places'] });
    const tiles = (await get(`/api/v1/workspaces/${ws.id}/download`)).rawPayload;
    // PMTiles v3: "PMTiles" then the version byte 3; header bytes 100/101 hold the min and max zoom.
    expect(tiles.subarray(0, 7).toString('latin1')).toBe('PMTiles');
    expect([tiles[7], tiles[100], tiles[101]]).toEqual([3, 0, 6]);
  });
});
