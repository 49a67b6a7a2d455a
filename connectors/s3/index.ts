import { GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { underPrefix } from '../shared/files/remote-paths.js';
import { connectionTest } from '../shared/connection-test.js';
import { alreadyDelivered, objectChanged, readObjectIfChanged } from '../shared/files/object-store.js';
import { isMissing, isNotModified, s3Client, s3Failure, s3Where, withS3Client, type S3Config } from './client.js';
import { uploadObject } from './upload.js';
import { s3Declaration } from './declaration.js';
import { defineConnector, type ConnectorContext, type DestinationBehaviour, type SourceBehaviour, type TestResult } from '../types.js';

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
      await withS3Client(c, ctx.log, (client) =>
        client.send(new ListObjectsV2Command({ Bucket: c.bucket, Prefix: c.prefix || undefined, MaxKeys: 1 }), { abortSignal: ctx.signal }),
      );
      return `${label(c)} is reachable and the credentials may list it`;
    },
    (error) => s3Failure(error, label(c), s3Where(c)),
  );
}

const source = {
  async extract(config, resource, ctx, options) {
    const c = config;
    const key = underPrefix(c.prefix, resource.key);
    return withS3Client(c, ctx.log, (client) =>
      readObjectIfChanged(
        {
          field: 'key' satisfies keyof S3Cursor,
          name: key,
          async read(ifNoneMatch) {
            const answer = await client.send(new GetObjectCommand({ Bucket: c.bucket, Key: key, IfNoneMatch: ifNoneMatch }), { abortSignal: ctx.signal });
            return { body: answer.Body as Readable | undefined, length: answer.ContentLength, etag: answer.ETag ?? null };
          },
          notModified: isNotModified,
          failure: (error) => s3Failure(error, label(c, key), s3Where(c, key)),
          label: label(c, key),
          where: s3Where(c, key),
        },
        options.sync,
        ctx,
      ),
    );
  },
  changeCheck: {
    changed(config, resource, ctx, sync) {
      const key = underPrefix(config.prefix, resource.key);
      const etag = (client: S3Client) => async () =>
        (await client.send(new HeadObjectCommand({ Bucket: config.bucket, Key: key }), { abortSignal: ctx.signal })).ETag ?? null;
      return withS3Client(config, ctx.log, (client) =>
        objectChanged(
          {
            field: 'key' satisfies keyof S3Cursor,
            name: key,
            etag: etag(client),
            failure: (error) => s3Failure(error, label(config, key), s3Where(config, key)),
          },
          sync,
        ),
      );
    },
  },
} satisfies SourceBehaviour<{ key: string }, S3Config>;

const destination = {
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
} satisfies DestinationBehaviour<{ key: string }, S3Config>;

export const s3 = defineConnector(s3Declaration, {
  test,
  source,
  destination,
});
