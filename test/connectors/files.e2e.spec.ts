import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { ContainerClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import gdal from 'gdal-async';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, createTestApp, createToken, login, type TestApp } from '../support/app.js';
import { skipWithoutDatabase } from '../support/database.js';
import { fixtureDir, pointsGeoJson, zippedShapefile } from '../support/fixtures.js';
import { multipartFile } from '../support/multipart.js';
import { startTestWorker, temporalAddress } from '../support/worker.js';
import { azuriteUnavailable, startAzurite, type AzuriteServer } from '../servers/azurite/server.js';
import { s3ServerUnavailable, startS3Server, type S3Server } from '../../devservers/s3/server.js';
import { sshdUnavailable, startSshd, type Sshd } from '../servers/sshd/server.js';

/*
 * The object store and file server connectors through /api/v1, as a user drives them: saved
 * Sources and Destinations, a Workspace imported from S3 and Azure Blob (preview, convert), and
 * a converted output delivered to S3, Azure Blob and SFTP, read back byte for byte.
 */

const skip = skipWithoutDatabase || (!temporalAddress && 'SVC_TEST_TEMPORAL_ADDRESS is not set: run with `npm test`, which starts Temporal');

describe.skipIf(skip)('s3, azureblob and sftp through /api/v1', () => {
  let sut: TestApp;
  let worker: Awaited<ReturnType<typeof startTestWorker>>;
  let token: string;
  const dir = fixtureDir();

  beforeAll(async () => {
    sut = await createTestApp({ temporal: true });
    worker = await startTestWorker(sut.services.config);
    const cookie = await login(sut.app);
    token = await createToken(sut.app, cookie, [
      'sources:read',
      'sources:write',
      'destinations:read',
      'destinations:write',
      'workspaces:read',
      'workspaces:write',
      'workspaces:run',
    ]);
  });
  afterAll(async () => {
    await worker?.stop();
    await sut?.close();
  });

  const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
    sut.app.inject({ method, url, headers: bearer(token), ...(payload ? { payload } : {}) });
  const create = async (kind: 'sources' | 'destinations', type: string, configuration: object) => {
    const res = await call('POST', `/api/v1/${kind}`, { name: `${type} ${kind}`, type, configuration });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; configuration: Record<string, unknown> };
  };

  /** Import from a saved Source, then preview and convert to GeoPackage; answers the Workspace. */
  async function importPreviewConvert(sourceId: string, resource: unknown, features: number) {
    const created = await call('POST', '/api/v1/workspaces', { source_id: sourceId, source_resource: resource });
    expect(created.statusCode, created.body).toBe(201);
    const ws = created.json();
    expect(ws.layers[0]).toMatchObject({ feature_count: features, has_geometry: true });
    const preview = await call('GET', `/api/v1/workspaces/${ws.id}/data-preview?limit=5`);
    expect(preview.statusCode, preview.body).toBe(200);
    expect(preview.json()).toMatchObject({ row_count: features, preview_row_count: 5 });
    const converted = await call('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GPKG' });
    expect(converted.statusCode, converted.body).toBe(200);
    expect(converted.json()).toMatchObject({ status: 'completed' });
    const out = path.join(dir, `${ws.id}.gpkg`);
    writeFileSync(out, (await call('GET', `/api/v1/workspaces/${ws.id}/download`)).rawPayload);
    const ds = gdal.open(out);
    expect(ds.layers.get(0).features.count()).toBe(features);
    ds.close();
    return ws;
  }

  /** Upload, convert to GeoPackage and download: the bytes a delivery must put on the remote side. */
  async function convertedUpload(): Promise<{ id: string; bytes: Buffer; filename: string }> {
    const m = multipartFile(pointsGeoJson(dir));
    const ws = (await sut.app.inject({ method: 'POST', url: '/api/v1/workspaces', payload: m.payload, headers: { ...m.headers, ...bearer(token) } })).json();
    const converted = await call('POST', `/api/v1/workspaces/${ws.id}/convert`, { output_format: 'GPKG' });
    expect(converted.statusCode, converted.body).toBe(200);
    const download = await call('GET', `/api/v1/workspaces/${ws.id}/download`);
    const filename = /filename="([^"]+)"/.exec(String(download.headers['content-disposition']))![1]!;
    return { id: ws.id, bytes: download.rawPayload, filename };
  }

  const deliver = (workspaceId: string, destinationId: string, target: object) =>
    call('POST', `/api/v1/workspaces/${workspaceId}/deliver`, { destination_id: destinationId, destination_target: target });

  describe.skipIf(s3ServerUnavailable())('s3', () => {
    let server: S3Server;
    let admin: S3Client;
    let configuration: Record<string, unknown>;
    beforeAll(async () => {
      server = await startS3Server();
      configuration = { bucket: 'gis-data', endpoint: server.endpoint, force_path_style: true, prefix: 'city/', ...server.writer };
      admin = new S3Client({
        region: 'us-east-1',
        endpoint: server.endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: server.writer.access_key, secretAccessKey: server.writer.secret_key },
      });
      await admin.send(new CreateBucketCommand({ Bucket: 'gis-data' }));
    });
    afterAll(async () => {
      admin?.destroy();
      await server?.stop();
    });

    it('imports an object into a Workspace, previews and converts it; a missing key is source_failed', async () => {
      await admin.send(new PutObjectCommand({ Bucket: 'gis-data', Key: 'city/in/places.geojson', Body: readFileSync(pointsGeoJson(dir)) }));
      await admin.send(new PutObjectCommand({ Bucket: 'gis-data', Key: 'city/in/places.zip', Body: readFileSync(zippedShapefile(dir)) }));
      const source = await create('sources', 's3', configuration);
      expect(source.configuration).toMatchObject({ has_secret_key: true, bucket: 'gis-data' });
      expect((await call('POST', `/api/v1/sources/${source.id}/test`)).json()).toMatchObject({ ok: true, status: 'ok' });
      const ws = await importPreviewConvert(source.id, 'in/places.geojson', 25);
      expect(ws).toMatchObject({ filename: 'places.geojson', driver: 'GeoJSON' });
      await importPreviewConvert(source.id, { key: 'in/places.zip' }, 25);

      const missing = await call('POST', '/api/v1/workspaces', { source_id: source.id, source_resource: { key: 'in/none.geojson' } });
      expect(missing.statusCode).toBe(422);
      expect(missing.json().error).toMatchObject({ code: 'source_failed', details: { reason: 'not_found', key: 'city/in/none.geojson', retryable: false } });
      expect(missing.body).not.toContain(server.writer.secret_key);
      const noKey = await call('POST', '/api/v1/workspaces', { source_id: source.id });
      expect(noKey.statusCode).toBe(400);
    });

    it('delivers the converted output and the object holds exactly the downloaded bytes', async () => {
      const out = await convertedUpload();
      const destination = await create('destinations', 's3', configuration);
      const res = await deliver(out.id, destination.id, { key: 'exports/' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        destination_type: 's3',
        target: { bucket: 'gis-data', key: `city/exports/${out.filename}` },
        bytes_written: out.bytes.length,
        rows_written: null,
      });
      const object = await admin.send(new GetObjectCommand({ Bucket: 'gis-data', Key: `city/exports/${out.filename}` }));
      expect(Buffer.from(await object.Body!.transformToByteArray()).equals(out.bytes)).toBe(true);

      const wrong = await create('destinations', 's3', { ...configuration, secret_key: 'wrong-secret-value' });
      const refused = await deliver(out.id, wrong.id, { key: 'exports/x.gpkg' });
      expect(refused.statusCode).toBe(422);
      expect(refused.json().error).toMatchObject({ code: 'delivery_failed', details: { reason: 'authentication_failed', retryable: false } });
      expect(refused.body).not.toContain('wrong-secret-value');
      expect((await deliver(out.id, destination.id, { key: '../escape.gpkg' })).statusCode).toBe(422);
    });
  });

  describe.skipIf(azuriteUnavailable())('azureblob', () => {
    let server: AzuriteServer;
    let container: ContainerClient;
    let configuration: Record<string, unknown>;
    beforeAll(async () => {
      server = await startAzurite();
      configuration = { account_name: server.accountName, container: 'gis-data', endpoint: server.endpoint, prefix: 'city', account_key: server.accountKey };
      container = new ContainerClient(`${server.endpoint}/gis-data`, new StorageSharedKeyCredential(server.accountName, server.accountKey));
      await container.create();
    });
    afterAll(async () => {
      await server?.stop();
    });

    it('imports a blob into a Workspace, previews and converts it', async () => {
      const body = readFileSync(pointsGeoJson(dir));
      await container.getBlockBlobClient('city/in/places.geojson').upload(body, body.length);
      const source = await create('sources', 'azureblob', configuration);
      expect(source.configuration).toMatchObject({ has_account_key: true, has_sas_token: false });
      expect((await call('POST', `/api/v1/sources/${source.id}/test`)).json()).toMatchObject({ ok: true });
      await importPreviewConvert(source.id, { blob: 'in/places.geojson' }, 25);
    });

    it('delivers the converted output and the blob holds exactly the downloaded bytes', async () => {
      const out = await convertedUpload();
      const destination = await create('destinations', 'azureblob', configuration);
      const res = await deliver(out.id, destination.id, { blob: 'exports/places.gpkg' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        destination_type: 'azureblob',
        target: { container: 'gis-data', blob: 'city/exports/places.gpkg' },
        bytes_written: out.bytes.length,
      });
      expect((await container.getBlobClient('city/exports/places.gpkg').downloadToBuffer()).equals(out.bytes)).toBe(true);
    });
  });

  describe.skipIf(sshdUnavailable())('sftp', () => {
    let server: Sshd;
    beforeAll(async () => {
      server = await startSshd();
    });
    afterAll(async () => {
      await server?.stop();
    });

    it('is a Destination only', async () => {
      const res = await call('POST', '/api/v1/sources', { name: 'x', type: 'sftp', configuration: { host: server.host, username: 'x' } });
      expect(res.statusCode).toBe(422);
    });

    it('delivers the converted output with a key and the file holds exactly the downloaded bytes', async () => {
      const out = await convertedUpload();
      const destination = await create('destinations', 'sftp', {
        host: server.host,
        port: server.port,
        username: server.keyUser.username,
        private_key: server.keyUser.privateKey,
        host_key_sha256: server.hostKeySha256,
        base_path: server.keyUser.home,
      });
      expect(destination.configuration).toMatchObject({ has_private_key: true, has_password: false, has_passphrase: false });
      const tested = (await call('POST', `/api/v1/destinations/${destination.id}/test`)).json();
      expect(tested).toMatchObject({ ok: true, tried: { host_key_sha256: server.hostKeySha256 } });
      const res = await deliver(out.id, destination.id, { path: 'incoming/' });
      expect(res.statusCode, res.body).toBe(200);
      const remote = path.join(server.keyUser.home, 'incoming', out.filename);
      expect(res.json()).toMatchObject({
        destination_type: 'sftp',
        target: { host: server.host, port: server.port, path: remote },
        bytes_written: out.bytes.length,
      });
      expect(readFileSync(remote).equals(out.bytes)).toBe(true);
    });

    it('answers delivery_failed with the reason for a wrong password', async () => {
      const out = await convertedUpload();
      const destination = await create('destinations', 'sftp', {
        host: server.host,
        port: server.port,
        username: server.passwordUser.username,
        password: 'not the password',
        base_path: server.passwordUser.home,
      });
      const res = await deliver(out.id, destination.id, { path: 'x.gpkg' });
      expect(res.statusCode).toBe(422);
      expect(res.json().error).toMatchObject({ code: 'delivery_failed', details: { reason: 'authentication_failed', host: server.host } });
      expect(res.body).not.toContain('not the password');
    });
  });
});
