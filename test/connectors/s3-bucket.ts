import { CreateBucketCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { S3Server } from '../../devservers/s3/server.js';

/** An S3 client with the test server's writer keys and `bucket` made: the far end the specs look at. */
export async function bucketOf(server: S3Server, bucket: string): Promise<{ client: S3Client; read(key: string): Promise<Buffer> }> {
  const client = new S3Client({
    region: 'us-east-1',
    endpoint: server.endpoint,
    forcePathStyle: true,
    credentials: { accessKeyId: server.writer.access_key, secretAccessKey: server.writer.secret_key },
  });
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    client,
    read: async (key) => Buffer.from(await (await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }))).Body!.transformToByteArray()),
  };
}
