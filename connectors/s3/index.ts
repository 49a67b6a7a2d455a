import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { httpUrl, secret } from '../shared/fields.js';
import { relativeKey, underPrefix } from '../shared/files/remote-paths.js';
import { connectionTest } from '../shared/connection-test.js';
import { alreadyDelivered, objectChanged, readObjectIfChanged } from '../shared/files/object-store.js';
import { defineConnector, type ConnectorContext, type DestinationSupport, type SourceSupport, type TestResult } from '../types.js';
import { isMissing, isNotModified, s3Client, s3Failure, s3Where, type S3Config } from './client.js';
import { uploadObject } from './upload.js';

const configuration = z.strictObject({
  bucket: z
    .string()
    .min(3)
    .max(63)
    .regex(/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/, 'an S3 bucket name')
    .describe('Bucket'),
  region: z.string().min(1).max(64).default('us-east-1').describe('Region'),
  endpoint: httpUrl.optional().describe('Endpoint of an S3-compatible store (MinIO, Ceph …); omit for AWS'),
  force_path_style: z.boolean().default(false).describe('Path-style addressing (most S3-compatible stores need it)'),
  prefix: z.string().max(512).default('').describe('Folder (key prefix) every object key is relative to'),
  access_key: z.string().min(1).max(256).optional().describe('Access key id; without one, requests are anonymous (public buckets)'),
  secret_key: secret('Secret access key'),
  session_token: secret('Session token (temporary credentials)'),
});

/** Metadata on every delivered object: a retried delivery recognises its own finished upload. */
const DELIVERY_META = 'geoflow-delivery-id';

/** What an s3 Source remembers between Runs: the object it read and its ETag. */
interface S3Cursor {
  key: string;
  etag: string | null;
}

const label = (c: S3Config, key?: string) => (key === undefined ? `S3 bucket "${c.bucket}"` : `S3 object "${key}" in bucket "${c.bucket}"`);

async function test(config: S3Config, ctx: ConnectorContext): Promise<TestResult> {
  const c = config;
  return connectionTest(
    { ...s3Where(c), prefix: c.prefix, signed: Boolean(c.access_key) },
    async () => {
      // Listing one key under the prefix proves the endpoint, the credentials and read access at
      // once, and unlike HEAD its errors say which of them failed.
      const client = s3Client(c, ctx.log);
      try {
        await client.send(new ListObjectsV2Command({ Bucket: c.bucket, Prefix: c.prefix || undefined, MaxKeys: 1 }), { abortSignal: ctx.signal });
      } finally {
        client.destroy();
      }
      return `${label(c)} is reachable and the credentials may list it`;
    },
    (error) => s3Failure(error, label(c), s3Where(c)),
  );
}

const source: SourceSupport<{ key: string }, S3Config> = {
  resource: z.strictObject({ key: relativeKey('Object key, relative to the prefix') }),
  shorthand: 'key',
  resourceRequired: true,
  importable: true,
  incremental: true,
  incrementalNote: 'ETag: an object that has not changed since the last Run (HTTP 304 to If-None-Match) skips the rest of the Run',
  async extract(config, resource, ctx, options) {
    const c = config;
    const key = underPrefix(c.prefix, resource.key);
    const client = s3Client(c, ctx.log);
    try {
      return await readObjectIfChanged(
        {
          field: 'key' satisfies keyof S3Cursor,
          name: key,
          async read(ifNoneMatch) {
            try {
              const answer = await client.send(new GetObjectCommand({ Bucket: c.bucket, Key: key, IfNoneMatch: ifNoneMatch }), { abortSignal: ctx.signal });
              return { body: answer.Body as Readable | undefined, length: answer.ContentLength, etag: answer.ETag ?? null };
            } catch (error) {
              if (ifNoneMatch && isNotModified(error)) return 'unchanged';
              throw error;
            }
          },
          failure: (error) => s3Failure(error, label(c, key), s3Where(c, key)),
          label: label(c, key),
          where: s3Where(c, key),
        },
        options.sync,
        ctx,
      );
    } finally {
      client.destroy();
    }
  },
  changeCheck: {
    note: "the object's ETag from a HEAD",
    async changed(config, resource, ctx, sync) {
      const key = underPrefix(config.prefix, resource.key);
      const client = s3Client(config, ctx.log);
      try {
        return await objectChanged(
          {
            field: 'key' satisfies keyof S3Cursor,
            name: key,
            etag: async () => (await client.send(new HeadObjectCommand({ Bucket: config.bucket, Key: key }), { abortSignal: ctx.signal })).ETag ?? null,
            failure: (error) => s3Failure(error, label(config, key), s3Where(config, key)),
          },
          sync,
        );
      } finally {
        client.destroy();
      }
    },
  },
};

const destination: DestinationSupport<{ key: string }, S3Config> = {
  target: z.strictObject({
    key: relativeKey('Object key to write, relative to the prefix; ending in "/" it names a folder and the output keeps its filename'),
  }),
  deliverable: true,
  async deliver(config, target, input, ctx) {
    const c = config;
    const key = underPrefix(c.prefix, target.key, input.filename);
    const where = s3Where(c, key);
    const client = s3Client(c, ctx.log);
    const { size } = await stat(input.file);
    const result = { target: { bucket: c.bucket, key }, bytes_written: size };
    try {
      // A retried or resumed delivery whose upload already completed: nothing left to do.
      const head = await client.send(new HeadObjectCommand({ Bucket: c.bucket, Key: key }), { abortSignal: ctx.signal }).catch((error: unknown) => {
        if (isMissing(error) || (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 403) return null; // absent, or write-only credentials
        throw error;
      });
      if (alreadyDelivered(head ? { deliveryId: head.Metadata?.[DELIVERY_META], size: head.ContentLength } : null, input.deliveryId, size)) return result;
      await uploadObject(
        client,
        { bucket: c.bucket, key, file: input.file, size, contentType: input.mediaType ?? undefined, metadata: { [DELIVERY_META]: input.deliveryId } },
        ctx,
        { checksums: !c.endpoint },
      );
    } catch (error) {
      throw s3Failure(error, label(c, key), where);
    } finally {
      client.destroy();
    }
    return result;
  },
};

export const s3 = defineConnector({
  type: 's3',
  label: 'Amazon S3 (or S3-compatible)',
  description: 'Objects in an S3 bucket, or in any S3-compatible store (MinIO, Ceph, …) through endpoint.',
  configuration,
  secrets: ['secret_key', 'session_token'],
  example: { bucket: 'gis-exports', region: 'eu-central-1', access_key: 'AKIA…', secret_key: '…', prefix: 'nightly/' },
  implemented: true,
  verifiedAgainst: 'emulator in npm test: moto 5.2 in server mode (S3 API with IAM authentication on), started by the tests',
  notes: [
    '- **Import** (`source_resource`: `{"key": "parcels.gpkg"}` or just `"parcels.gpkg"`): the object under `prefix` is streamed to disk with the upload limit enforced while it streams, then opened like an upload (its key\'s extension picks the driver; a `.zip` may hold a shapefile).',
    '- **Deliver** (`destination_target`: `{"key": "out/parcels.gpkg"}`; a key ending in `/` keeps the output\'s filename): a single PutObject, or a multipart upload above 64 MiB. Both are atomic in S3: the object appears, or replaces the old one, only when the upload completes, so no reader sees part of a file and no temporary key is left behind (a copy-then-delete would double the transfer for nothing; a failed multipart upload is aborted). The object carries the metadata `geoflow-delivery-id`; a retried delivery finds its finished object and does not upload again. The result is `{"target": {"bucket", "key"}, "bytes_written"}`.',
    '- **Test** lists one key under `prefix`: `authentication_failed` for an unknown access key or a wrong secret, `permission_denied` when the credentials may not list the bucket, `not_found` for a missing bucket, `unreachable`/`timeout` for the endpoint.',
    "- **Credentials** go into this call's own SDK client and nowhere else. Without `access_key` requests are anonymous (public buckets): the service never lends its own AWS credentials (environment, instance profile) to a connection. GDAL's `/vsis3/` is not used because gdal-async offers no per-path credential option, only the process-wide `gdal.config.set`, which another request could read; a whole-object transfer needs no random access anyway.",
    '- **S3-compatible stores** (`endpoint` set; most need `force_path_style: true`) get requests without the CRC32 checksum headers the AWS SDK sends to AWS by default, which several stores refuse.',
  ].join('\n'),
  test,
  source,
  destination,
});
