import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { S3Server } from '../../devservers/s3/server.js';

/** The S3 credentials of the stand-in's writer, as the AWS SDK takes them. */
export const writerCredentials = (s3: S3Server) => ({ accessKeyId: s3.writer.access_key, secretAccessKey: s3.writer.secret_key });

/** A client of the S3 stand-in with its writer's keys, after creating `bucket` with it (a suite's own look at the bucket). */
export async function bucketAdmin(s3: S3Server, bucket: string): Promise<S3Client> {
  const admin = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: writerCredentials(s3) });
  await admin.send(new CreateBucketCommand({ Bucket: bucket }));
  return admin;
}
