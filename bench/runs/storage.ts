import { randomBytes } from 'node:crypto';

/** The storage settings every process of the service gets (none for the local data folder). */
export async function storageEnv(kind: string): Promise<{ env: Record<string, string>; label: string; stop(): Promise<void> }> {
  if (kind === 'local') return { env: { SVC_STORAGE_URL: '' }, label: 'local data folder', stop: async () => undefined };
  if (process.env.SVC_STORAGE_URL) return { env: {}, label: `${process.env.SVC_STORAGE_URL} (from the environment)`, stop: async () => undefined };
  const { s3ServerUnavailable, startS3Server } = await import('../../devservers/s3/server.js');
  const missing = s3ServerUnavailable();
  if (missing) {
    console.error(`BENCH_STORAGE=s3: ${missing}`);
    process.exit(1);
  }
  const s3 = await startS3Server();
  const { S3Client, CreateBucketCommand } = await import('@aws-sdk/client-s3');
  const client = new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: s3.writer.access_key, secretAccessKey: s3.writer.secret_key },
  });
  await client.send(new CreateBucketCommand({ Bucket: 'bench' }));
  client.destroy();
  return {
    env: {
      SVC_STORAGE_URL: 's3://bench/runs',
      SVC_STORAGE_ENDPOINT: s3.endpoint,
      SVC_STORAGE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: s3.writer.access_key,
      AWS_SECRET_ACCESS_KEY: s3.writer.secret_key,
      AWS_REGION: 'us-east-1',
      // Every host decrypts connection secrets with one key when storage is shared.
      SVC_SECRET_KEY: process.env.SVC_SECRET_KEY ?? randomBytes(32).toString('hex'),
    },
    label: `S3 (moto at ${s3.endpoint}, s3://bench/runs)`,
    stop: () => s3.stop(),
  };
}
