import { PutObjectCommand } from '@aws-sdk/client-s3';
import { ContainerClient, StorageSharedKeyCredential } from '@azure/storage-blob';
import gdal from 'gdal-async';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { Send } from '../support/e2e.js';
import { fixtureDir, pointsGeoJson, zippedShapefile } from '../support/fixtures.js';
import { azuriteUnavailable, startAzurite, type AzuriteServer } from '../servers/azurite/server.js';
import { s3ServerUnavailable, startS3Server, type S3Server } from '../../devservers/s3/server.js';
import { sshdUnavailable, startSshd, type Sshd } from '../servers/sshd/server.js';
import { type ConnectorApi, connectorTest, skipWithoutWorker, startAppBeforeAll } from './e2e.js';
import { bucketOf } from './s3-bucket.js';

/*
 * The object store and file server connectors through /api/v1, as a user drives them: saved
 * Sources and Destinations, a Workspace imported from S3 and Azure Blob (preview, convert), and
 * a converted output delivered to S3, Azure Blob and SFTP, read back byte for byte.
 */

const it = connectorTest();

describe.skipIf(skipWithoutWorker)('s3, azureblob and sftp through /api/v1', () => {
  startAppBeforeAll(it);
  const dir = fixtureDir();

  /** Import from a saved Source, then preview and convert to GeoPackage; answers the Workspace. */
  async function importPreviewConvert(call: Send, sourceId: string, resource: unknown, features: number) {
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
  async function convertedUpload(call: Send, api: ConnectorApi): Promise<{ id: string; bytes: Buffer; filename: string }> {
    const id = await api.convertedUpload(pointsGeoJson(dir));
    const download = await call('GET', `/api/v1/workspaces/${id}/download`);
    const filename = /filename="([^"]+)"/.exec(String(download.headers['content-disposition']))![1]!;
    return { id, bytes: download.rawPayload, filename };
  }

  const deliver = (call: Send, workspaceId: string, destinationId: string, target: object) =>
    call('POST', `/api/v1/workspaces/${workspaceId}/deliver`, { destination_id: destinationId, destination_target: target });

  describe.skipIf(s3ServerUnavailable())('s3', () => {
    let server: S3Server;
    let bucket: Awaited<ReturnType<typeof bucketOf>>;
    let configuration: Record<string, unknown>;
    beforeAll(async () => {
      server = await startS3Server();
      configuration = { bucket: 'gis-data', endpoint: server.endpoint, force_path_style: true, prefix: 'city/', ...server.writer };
      bucket = await bucketOf(server, 'gis-data');
    });
    afterAll(async () => {
      bucket?.client.destroy();
      await server?.stop();
    });

    it('imports an object into a Workspace, previews and converts it; a missing key is source_failed', async ({ send: call, api }) => {
      await bucket.client.send(new PutObjectCommand({ Bucket: 'gis-data', Key: 'city/in/places.geojson', Body: readFileSync(pointsGeoJson(dir)) }));
      await bucket.client.send(new PutObjectCommand({ Bucket: 'gis-data', Key: 'city/in/places.zip', Body: readFileSync(zippedShapefile(dir)) }));
      const source = await api.create('sources', 's3', configuration);
      expect(source.configuration).toMatchObject({ has_secret_key: true, bucket: 'gis-data' });
      expect((await call('POST', `/api/v1/sources/${source.id}/test`)).json()).toMatchObject({ ok: true, status: 'ok' });
      const ws = await importPreviewConvert(call, source.id, 'in/places.geojson', 25);
      expect(ws).toMatchObject({ filename: 'places.geojson', driver: 'GeoJSON' });
      await importPreviewConvert(call, source.id, { key: 'in/places.zip' }, 25);

      const missing = await call('POST', '/api/v1/workspaces', { source_id: source.id, source_resource: { key: 'in/none.geojson' } });
      expect(missing.statusCode).toBe(422);
      expect(missing.json().error).toMatchObject({ code: 'source_failed', details: { reason: 'not_found', key: 'city/in/none.geojson', retryable: false } });
      expect(missing.body).not.toContain(server.writer.secret_key);
      const noKey = await call('POST', '/api/v1/workspaces', { source_id: source.id });
      expect(noKey.statusCode).toBe(400);
    });

    it('delivers the converted output and the object holds exactly the downloaded bytes', async ({ send: call, api }) => {
      const out = await convertedUpload(call, api);
      const destination = await api.create('destinations', 's3', configuration);
      const res = await deliver(call, out.id, destination.id, { key: 'exports/' });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        destination_type: 's3',
        target: { bucket: 'gis-data', key: `city/exports/${out.filename}` },
        bytes_written: out.bytes.length,
        rows_written: null,
      });
      expect((await bucket.read(`city/exports/${out.filename}`)).equals(out.bytes)).toBe(true);

      const wrong = await api.create('destinations', 's3', { ...configuration, secret_key: 'wrong-secret-value' });
      const refused = await deliver(call, out.id, wrong.id, { key: 'exports/x.gpkg' });
      expect(refused.statusCode).toBe(422);
      expect(refused.json().error).toMatchObject({ code: 'delivery_failed', details: { reason: 'authentication_failed', retryable: false } });
      expect(refused.body).not.toContain('wrong-secret-value');
      expect((await deliver(call, out.id, destination.id, { key: '../escape.gpkg' })).statusCode).toBe(422);
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

    it('imports a blob into a Workspace, previews and converts it', async ({ send: call, api }) => {
      const body = readFileSync(pointsGeoJson(dir));
      await container.getBlockBlobClient('city/in/places.geojson').upload(body, body.length);
      const source = await api.create('sources', 'azureblob', configuration);
      expect(source.configuration).toMatchObject({ has_account_key: true, has_sas_token: false });
      expect((await call('POST', `/api/v1/sources/${source.id}/test`)).json()).toMatchObject({ ok: true });
      await importPreviewConvert(call, source.id, { blob: 'in/places.geojson' }, 25);
    });

    it('delivers the converted output and the blob holds exactly the downloaded bytes', async ({ send: call, api }) => {
      const out = await convertedUpload(call, api);
      const destination = await api.create('destinations', 'azureblob', configuration);
      const res = await deliver(call, out.id, destination.id, { blob: 'exports/places.gpkg' });
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

    it('is a Destination only', async ({ send: call }) => {
      const res = await call('POST', '/api/v1/sources', { name: 'x', type: 'sftp', configuration: { host: server.host, username: 'x' } });
      expect(res.statusCode).toBe(422);
    });

    it('delivers the converted output with a key and the file holds exactly the downloaded bytes', async ({ send: call, api }) => {
      const out = await convertedUpload(call, api);
      const destination = await api.create('destinations', 'sftp', {
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
      const res = await deliver(call, out.id, destination.id, { path: 'incoming/' });
      expect(res.statusCode, res.body).toBe(200);
      const remote = path.join(server.keyUser.home, 'incoming', out.filename);
      expect(res.json()).toMatchObject({
        destination_type: 'sftp',
        target: { host: server.host, port: server.port, path: remote },
        bytes_written: out.bytes.length,
      });
      expect(readFileSync(remote).equals(out.bytes)).toBe(true);
    });

    it('answers delivery_failed with the reason for a wrong password', async ({ send: call, api }) => {
      const out = await convertedUpload(call, api);
      const destination = await api.create('destinations', 'sftp', {
        host: server.host,
        port: server.port,
        username: server.passwordUser.username,
        password: 'not the password',
        base_path: server.passwordUser.home,
      });
      const res = await deliver(call, out.id, destination.id, { path: 'x.gpkg' });
      expect(res.statusCode).toBe(422);
      expect(res.json().error).toMatchObject({ code: 'delivery_failed', details: { reason: 'authentication_failed', host: server.host } });
      expect(res.body).not.toContain('not the password');
    });
  });
});
