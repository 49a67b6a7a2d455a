import { ContainerClient, ContainerSASPermissions, generateBlobSASQueryParameters, StorageSharedKeyCredential } from '@azure/storage-blob';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { azureblob, blockIds } from '../../connectors/azureblob/index.js';
import { azuriteUnavailable, startAzurite, type AzuriteServer } from '../servers/azurite/server.js';
import { closedPort, connectorContext, expectConnectorError, deliverInput as deliverFile, filesIn } from './support.js';

const CONTAINER = 'exports';

describe.skipIf(azuriteUnavailable())('azureblob connector against Azurite', () => {
  let server: AzuriteServer;
  let admin: ContainerClient;
  let config: ReturnType<typeof azureblob.configuration.parse>;

  beforeAll(async () => {
    server = await startAzurite();
    config = azureblob.configuration.parse({
      account_name: server.accountName,
      container: CONTAINER,
      endpoint: server.endpoint,
      prefix: 'team',
      account_key: server.accountKey,
    });
    admin = new ContainerClient(`${server.endpoint}/${CONTAINER}`, new StorageSharedKeyCredential(server.accountName, server.accountKey));
    await admin.create();
  });
  afterAll(async () => {
    await server?.stop();
  });

  const sas = (permissions: string) =>
    generateBlobSASQueryParameters(
      { containerName: CONTAINER, permissions: ContainerSASPermissions.parse(permissions), expiresOn: new Date(Date.now() + 3_600_000) },
      new StorageSharedKeyCredential(server.accountName, server.accountKey),
    ).toString();
  const withSas = (token: string) => {
    const { account_key: _k, ...rest } = config;
    return { ...rest, sas_token: token };
  };
  const put = (name: string, body: Buffer | string) => admin.getBlockBlobClient(name).upload(body, Buffer.byteLength(body));
  const read = (name: string) => admin.getBlobClient(name).downloadToBuffer();
  const deliverInput = (file: string, deliveryId: string) => deliverFile(file, deliveryId, 'application/geo+json');

  describe('test', () => {
    it('answers ok with the account key and with a SAS token, saying what was tried', async () => {
      expect(await azureblob.test!(config, connectorContext())).toMatchObject({
        ok: true,
        status: 'ok',
        tried: { account_name: server.accountName, container: CONTAINER, endpoint: server.endpoint, credential: 'account_key' },
      });
      expect(await azureblob.test!(withSas(sas('rl')), connectorContext())).toMatchObject({ ok: true, tried: { credential: 'sas_token' } });
    });

    it('classifies a wrong key, a forged SAS, a SAS without the permission, a missing container and a closed port, without secrets', async () => {
      const wrongKey = randomBytes(64).toString('base64');
      const result = await azureblob.test!({ ...config, account_key: wrongKey }, connectorContext());
      expect(result).toMatchObject({ ok: false, status: 'authentication_failed' });
      expect(JSON.stringify(result)).not.toContain(wrongKey);
      const forged = sas('rl').replace(/sig=[^&]+/, 'sig=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA%3D');
      expect(await azureblob.test!(withSas(forged), connectorContext())).toMatchObject({ ok: false, status: 'authentication_failed' });
      const writeOnly = await azureblob.test!(withSas(sas('cw')), connectorContext());
      expect(writeOnly).toMatchObject({ ok: false, status: 'permission_denied' });
      expect(JSON.stringify(writeOnly)).not.toContain('sig=');
      expect(await azureblob.test!({ ...config, container: 'nothing-here' }, connectorContext())).toMatchObject({
        ok: false,
        status: 'not_found',
        tried: { container: 'nothing-here' },
      });
      const closed = `http://127.0.0.1:${await closedPort()}/${server.accountName}`;
      expect(await azureblob.test!({ ...config, endpoint: closed }, connectorContext())).toMatchObject({ ok: false, status: 'unreachable' });
    });
  });

  describe('extract', () => {
    it('streams the blob under the prefix into the work folder, incrementally by ETag', async () => {
      await put('team/in/stations.csv', 'name,lat,lon\nBern,46.9,7.4\n');
      const ctx = connectorContext();
      const first = await azureblob.source!.extract(config, { blob: 'in/stations.csv' }, ctx, {});
      expect(first).toMatchObject({ filename: 'stations.csv', bytes: 27 });
      expect(path.dirname(first.file)).toBe(ctx.workDir);
      expect(readFileSync(first.file, 'utf8')).toBe('name,lat,lon\nBern,46.9,7.4\n');
      expect(first.sync?.cursor).toMatchObject({ blob: 'team/in/stations.csv', etag: expect.any(String) });

      expect(await azureblob.source!.extract(config, { blob: 'in/stations.csv' }, connectorContext(), { sync: first.sync! })).toMatchObject({
        unchanged: true,
      });
      await put('team/in/stations.csv', 'name,lat,lon\nChur,46.8,9.5\n');
      const changed = await azureblob.source!.extract(config, { blob: 'in/stations.csv' }, connectorContext(), { sync: first.sync! });
      expect(readFileSync(changed.file, 'utf8')).toContain('Chur');
    });

    it('refuses a blob over the limit, leaving nothing behind; a missing blob is not_found', async () => {
      await put('team/in/big.bin', randomBytes(5000));
      const ctx = connectorContext({ maxBytes: 4096 });
      expect(await expectConnectorError(azureblob.source!.extract(config, { blob: 'in/big.bin' }, ctx, {}), 'too_large')).toMatchObject({
        reason: 'too_large',
        details: { max_bytes: 4096 },
      });
      expect(filesIn(ctx.workDir)).toEqual([]);
      expect(await expectConnectorError(azureblob.source!.extract(config, { blob: 'in/none.gpkg' }, connectorContext(), {}), 'not_found')).toMatchObject({
        reason: 'not_found',
        details: { container: CONTAINER, blob: 'team/in/none.gpkg' },
      });
    });
  });

  describe('deliver', () => {
    it('stages blocks and commits them, once per delivery id', async () => {
      const ctx = connectorContext();
      const file = path.join(ctx.workDir, 'out.geojson');
      const first = randomBytes(8 * 1024 * 1024 + 4321); // two blocks
      writeFileSync(file, first);
      const progress: number[] = [];
      const result = await azureblob.destination!.deliver(config, { blob: 'exports/' }, deliverInput(file, 'dl_one'), {
        ...ctx,
        progress: (p) => progress.push(p.bytes!),
      });
      expect(result).toEqual({
        target: { account_name: server.accountName, container: CONTAINER, blob: 'team/exports/out.geojson' },
        bytes_written: first.length,
      });
      expect(progress).toHaveLength(2);
      expect((await read('team/exports/out.geojson')).equals(first)).toBe(true);
      const props = await admin.getBlobClient('team/exports/out.geojson').getProperties();
      expect(props).toMatchObject({ contentType: 'application/geo+json', metadata: { geoflow_delivery_id: 'dl_one' } });
      const blocks = await admin.getBlockBlobClient('team/exports/out.geojson').getBlockList('committed');
      expect(blocks.committedBlocks?.map((b) => b.name)).toEqual(blockIds('dl_one', 2));

      // The same delivery again finds its committed blob and writes nothing; another replaces it.
      writeFileSync(file, randomBytes(first.length));
      await azureblob.destination!.deliver(config, { blob: 'exports/out.geojson' }, deliverInput(file, 'dl_one'), ctx);
      expect((await read('team/exports/out.geojson')).equals(first)).toBe(true);
      await azureblob.destination!.deliver(config, { blob: 'exports/out.geojson' }, deliverInput(file, 'dl_two'), ctx);
      expect((await read('team/exports/out.geojson')).equals(readFileSync(file))).toBe(true);
    });

    it('leaves the old blob whole while blocks are staged, and a failed delivery changes nothing', async () => {
      await put('team/live.geojson', 'old content');
      const ctx = connectorContext();
      const file = path.join(ctx.workDir, 'live.geojson');
      writeFileSync(file, randomBytes(20 * 1024 * 1024));
      const abort = new AbortController();
      let midway: Promise<Buffer> | undefined;
      const delivery = azureblob.destination!.deliver(config, { blob: 'live.geojson' }, deliverInput(file, 'dl_abort'), {
        ...ctx,
        signal: abort.signal,
        // after the first staged block: a reader still gets the old blob; then the delivery is cancelled
        progress: () => {
          midway ??= read('team/live.geojson');
          abort.abort();
        },
      });
      const error = await expectConnectorError(delivery, 'timeout');
      expect(error.reason).toBe('timeout');
      expect((await midway!).toString()).toBe('old content');
      expect((await read('team/live.geojson')).toString()).toBe('old content');
    });

    it('writes with a SAS that may create and write, and classifies one that may only read', async () => {
      const ctx = connectorContext();
      const file = path.join(ctx.workDir, 'sas.geojson');
      writeFileSync(file, '{"type":"FeatureCollection","features":[]}');
      await azureblob.destination!.deliver(withSas(sas('cw')), { blob: 'sas.geojson' }, deliverInput(file, 'dl_sas'), ctx);
      expect((await read('team/sas.geojson')).toString()).toContain('FeatureCollection');
      const denied = await expectConnectorError(
        azureblob.destination!.deliver(withSas(sas('r')), { blob: 'sas2.geojson' }, deliverInput(file, 'dl_sas2'), ctx),
        'permission_denied',
      );
      expect(denied).toMatchObject({ reason: 'permission_denied', retryable: false, details: { blob: 'team/sas2.geojson' } });
      expect(denied.message).not.toContain('sig=');
    });
  });

  it('accepts its documented example; refuses container names Azure refuses and blob names that climb out of the prefix', () => {
    expect(azureblob.configuration.safeParse(azureblob.example).success).toBe(true);
    expect(azureblob.configuration.safeParse({ account_name: 'acct', container: 'Bad_Name' }).success).toBe(false);
    expect(azureblob.configuration.safeParse({ account_name: 'acct', container: 'a--b' }).success).toBe(false);
    expect(azureblob.configuration.safeParse({ account_name: 'acct', container: 'good-name-1' }).success).toBe(true);
    expect(azureblob.destination!.target.safeParse({ blob: '../x' }).success).toBe(false);
  });
});
