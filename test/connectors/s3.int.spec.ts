import { GetObjectCommand, HeadObjectCommand, ListMultipartUploadsCommand, PutObjectCommand, CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { s3Client } from '../../connectors/s3/client.js';
import { s3 } from '../../connectors/s3/index.js';
import { uploadObject } from '../../connectors/s3/upload.js';
import { s3ServerUnavailable, startS3Server, type S3Server } from '../../devservers/s3/server.js';
import { closedPort, connectorContext, expectConnectorError, deliverInput as deliverFile, filesIn } from './support.js';

const BUCKET = 'geoflow-int';

describe.skipIf(s3ServerUnavailable())('s3 connector against moto', () => {
  let server: S3Server;
  let admin: S3Client;
  let config: ReturnType<typeof s3.configuration.parse>;

  beforeAll(async () => {
    server = await startS3Server();
    config = s3.configuration.parse({ bucket: BUCKET, endpoint: server.endpoint, force_path_style: true, prefix: 'team/', ...server.writer });
    admin = s3Client(config as never);
    await admin.send(new CreateBucketCommand({ Bucket: BUCKET }));
  });
  afterAll(async () => {
    await server?.stop();
  });

  const put = (key: string, body: Buffer | string) => admin.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
  const read = async (key: string) => Buffer.from(await (await admin.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }))).Body!.transformToByteArray());
  const deliverInput = (file: string, deliveryId: string) => deliverFile(file, deliveryId, 'application/geopackage+sqlite3');

  describe('test', () => {
    it('answers ok for a bucket the keys may list, saying what was tried', async () => {
      const result = await s3.test!(config, connectorContext());
      expect(result).toMatchObject({ ok: true, status: 'ok', tried: { bucket: BUCKET, endpoint: server.endpoint, prefix: 'team/', signed: true } });
    });

    it('classifies wrong credentials, missing permissions, a missing bucket and a closed port, without the secret', async () => {
      const wrongSecret = await s3.test!({ ...config, secret_key: 'not-the-secret-0xdeadbeef' }, connectorContext());
      expect(wrongSecret).toMatchObject({ ok: false, status: 'authentication_failed' });
      expect(wrongSecret.message).toContain('SignatureDoesNotMatch');
      expect(JSON.stringify(wrongSecret)).not.toContain('not-the-secret-0xdeadbeef');
      expect(JSON.stringify(await s3.test!(config, connectorContext()))).not.toContain(server.writer.secret_key);

      expect(await s3.test!({ ...config, access_key: 'AKIAUNKNOWNUNKNOWN00' }, connectorContext())).toMatchObject({
        ok: false,
        status: 'authentication_failed',
      });
      expect(await s3.test!({ ...config, ...server.nobody }, connectorContext())).toMatchObject({ ok: false, status: 'permission_denied' });
      expect(await s3.test!({ ...config, bucket: 'no-such-bucket' }, connectorContext())).toMatchObject({
        ok: false,
        status: 'not_found',
        tried: { bucket: 'no-such-bucket' },
      });
      expect(await s3.test!({ ...config, endpoint: `http://127.0.0.1:${await closedPort()}` }, connectorContext())).toMatchObject({
        ok: false,
        status: 'unreachable',
      });
    });

    it('sends anonymous requests without an access key, never credentials of the service environment', async () => {
      // A stand-in endpoint that records what arrives: moto cannot answer unsigned requests.
      const seen: (string | undefined)[] = [];
      const endpoint = createServer((req, res) => {
        seen.push(req.headers.authorization);
        res
          .writeHead(403, { 'content-type': 'application/xml' })
          .end('<?xml version="1.0"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>');
      });
      await new Promise<void>((r) => endpoint.listen(0, '127.0.0.1', r));
      process.env.AWS_ACCESS_KEY_ID = server.writer.access_key;
      process.env.AWS_SECRET_ACCESS_KEY = server.writer.secret_key;
      try {
        const { access_key: _a, secret_key: _s, ...anonymous } = config;
        const result = await s3.test!({ ...anonymous, endpoint: `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}` }, connectorContext());
        expect(result).toMatchObject({ ok: false, status: 'permission_denied', tried: { signed: false } });
        expect(seen.length).toBeGreaterThan(0);
        expect(seen.every((h) => h === undefined)).toBe(true);
      } finally {
        delete process.env.AWS_ACCESS_KEY_ID;
        delete process.env.AWS_SECRET_ACCESS_KEY;
        endpoint.close();
      }
    });
  });

  describe('extract', () => {
    it('streams the object under the prefix into the work folder', async () => {
      const body = Buffer.from(JSON.stringify({ type: 'FeatureCollection', features: [] }));
      await put('team/in/empty.geojson', body);
      const ctx = connectorContext();
      const result = await s3.source!.extract(config, { key: 'in/empty.geojson' }, ctx, {});
      expect(result).toMatchObject({ filename: 'empty.geojson', bytes: body.length });
      expect(path.dirname(result.file)).toBe(ctx.workDir);
      expect(readFileSync(result.file)).toEqual(body);
    });

    it('reads incrementally: an unchanged object is reported unchanged, a changed one is read again', async () => {
      await put('team/in/sync.csv', 'a,b\n1,2\n');
      const first = await s3.source!.extract(config, { key: 'in/sync.csv' }, connectorContext(), {});
      expect(first.sync?.cursor).toMatchObject({ key: 'team/in/sync.csv', etag: expect.any(String) });
      const again = await s3.source!.extract(config, { key: 'in/sync.csv' }, connectorContext(), { sync: first.sync! });
      expect(again).toMatchObject({ unchanged: true, sync: first.sync });
      await put('team/in/sync.csv', 'a,b\n1,2\n3,4\n');
      const changed = await s3.source!.extract(config, { key: 'in/sync.csv' }, connectorContext(), { sync: first.sync! });
      expect(changed.unchanged).toBeFalsy();
      expect(readFileSync(changed.file, 'utf8')).toBe('a,b\n1,2\n3,4\n');
    });

    it('refuses an object over the limit, leaving nothing behind; a missing key is not_found', async () => {
      await put('team/in/big.bin', randomBytes(4096));
      const ctx = connectorContext({ maxBytes: 1000 });
      const tooLarge = await expectConnectorError(s3.source!.extract(config, { key: 'in/big.bin' }, ctx, {}), 'too_large');
      expect(tooLarge).toMatchObject({ reason: 'too_large', retryable: false, details: { max_bytes: 1000 } });
      expect(filesIn(ctx.workDir)).toEqual([]);
      const missing = await expectConnectorError(s3.source!.extract(config, { key: 'in/none.gpkg' }, connectorContext(), {}), 'not_found');
      expect(missing).toMatchObject({ reason: 'not_found', details: { bucket: BUCKET, key: 'team/in/none.gpkg' } });
    });
  });

  describe('deliver', () => {
    it('writes the file under the prefix, once per delivery id', async () => {
      const ctx = connectorContext();
      const file = path.join(ctx.workDir, 'out.gpkg');
      const first = randomBytes(300_000);
      writeFileSync(file, first);
      const result = await s3.destination!.deliver(config, { key: 'exports/' }, deliverInput(file, 'dl_first'), ctx);
      expect(result).toEqual({ target: { bucket: BUCKET, key: 'team/exports/out.gpkg' }, bytes_written: first.length });
      expect((await read('team/exports/out.gpkg')).equals(first)).toBe(true);
      const head = await admin.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'team/exports/out.gpkg' }));
      expect(head).toMatchObject({ ContentType: 'application/geopackage+sqlite3', Metadata: { 'geoflow-delivery-id': 'dl_first' } });

      // A retry of the same delivery finds its object complete and uploads nothing: had it
      // uploaded, the object would now hold the second bytes.
      writeFileSync(file, randomBytes(first.length));
      await s3.destination!.deliver(config, { key: 'exports/' }, deliverInput(file, 'dl_first'), ctx);
      expect((await read('team/exports/out.gpkg')).equals(first)).toBe(true);
      // Another delivery replaces it.
      const second = readFileSync(file);
      await s3.destination!.deliver(config, { key: 'exports/out.gpkg' }, deliverInput(file, 'dl_second'), ctx);
      expect((await read('team/exports/out.gpkg')).equals(second)).toBe(true);
    });

    it('uploads large files in parts, and a failed multipart upload leaves neither object nor parts', async () => {
      const ctx = connectorContext();
      const file = path.join(ctx.workDir, 'large.bin');
      const bytes = randomBytes(11 * 1024 * 1024 + 123);
      writeFileSync(file, bytes);
      const progress: number[] = [];
      const options = { singlePutMaxBytes: 1024 * 1024, partBytes: 5 * 1024 * 1024 };
      await uploadObject(
        admin,
        { bucket: BUCKET, key: 'team/large.bin', file, size: bytes.length, metadata: {} },
        { ...ctx, progress: (p) => progress.push(p.bytes!) },
        options,
      );
      expect((await read('team/large.bin')).equals(bytes)).toBe(true);
      expect(progress.length).toBe(3);

      // As against AWS: the SDK's default CRC32 checksums on every part, checked again on completion.
      const aws = new S3Client({
        region: 'us-east-1',
        endpoint: server.endpoint,
        forcePathStyle: true,
        credentials: { accessKeyId: server.writer.access_key, secretAccessKey: server.writer.secret_key },
      });
      await uploadObject(aws, { bucket: BUCKET, key: 'team/large-crc.bin', file, size: bytes.length, metadata: {} }, ctx, { ...options, checksums: true });
      expect((await read('team/large-crc.bin')).equals(bytes)).toBe(true);
      await uploadObject(aws, { bucket: BUCKET, key: 'team/single-crc.bin', file, size: bytes.length, metadata: {} }, ctx, { checksums: true });
      expect((await read('team/single-crc.bin')).equals(bytes)).toBe(true);

      const abort = new AbortController();
      const failed = uploadObject(
        admin,
        { bucket: BUCKET, key: 'team/broken.bin', file, size: bytes.length, metadata: {} },
        { signal: abort.signal, progress: () => abort.abort() },
        options,
      );
      await expect(failed).rejects.toThrow();
      await expect(admin.send(new HeadObjectCommand({ Bucket: BUCKET, Key: 'team/broken.bin' }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 404 } });
      const open = await admin.send(new ListMultipartUploadsCommand({ Bucket: BUCKET }));
      expect(open.Uploads ?? []).toEqual([]);
    });

    it('classifies a delivery with keys that may not write', async () => {
      const ctx = connectorContext();
      const file = path.join(ctx.workDir, 'x.geojson');
      writeFileSync(file, '{}');
      const denied = await expectConnectorError(
        s3.destination!.deliver({ ...config, ...server.nobody }, { key: 'x.geojson' }, deliverInput(file, 'dl_x'), ctx),
        'permission_denied',
      );
      expect(denied).toMatchObject({ reason: 'permission_denied', retryable: false, details: { bucket: BUCKET, key: 'team/x.geojson' } });
      expect(existsSync(file)).toBe(true);
    });
  });

  it('accepts its documented example; refuses keys that climb out of the prefix or are absolute', () => {
    expect(s3.configuration.safeParse(s3.example).success).toBe(true);
    expect(s3.destination!.target.safeParse({ key: '../other/x.gpkg' }).success).toBe(false);
    expect(s3.destination!.target.safeParse({ key: '/x.gpkg' }).success).toBe(false);
    expect(s3.source!.resource.safeParse({ key: 'a/b.gpkg' }).success).toBe(true);
  });
});
