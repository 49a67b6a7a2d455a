import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { startS3Server, s3ServerUnavailable } from '../devservers/s3/server.js';

/*
 * `npx tsx scripts/storage-server.ts [bucket]`: moto's S3 on a free loopback port with one
 * bucket, for running the service or a benchmark (bench:runs, bench:convert) with object
 * storage on one machine. Prints the settings to export, then runs until Ctrl-C. Objects live
 * in moto's memory and go with it.
 */
const unavailable = s3ServerUnavailable();
if (unavailable) {
  console.error(unavailable);
  process.exit(1);
}
const bucket = process.argv[2] ?? 'geoflow-local';
const server = await startS3Server();
const credentials = { accessKeyId: server.writer.access_key, secretAccessKey: server.writer.secret_key };
await new S3Client({ region: 'us-east-1', endpoint: server.endpoint, forcePathStyle: true, credentials }).send(new CreateBucketCommand({ Bucket: bucket }));
console.log(`export SVC_STORAGE_URL=s3://${bucket}/files SVC_STORAGE_ENDPOINT=${server.endpoint} SVC_STORAGE_PATH_STYLE=true`);
console.log(`export AWS_ACCESS_KEY_ID=${credentials.accessKeyId} AWS_SECRET_ACCESS_KEY=${credentials.secretAccessKey} AWS_REGION=us-east-1`);
console.log('export SVC_SECRET_KEY=$(openssl rand -hex 32)   # the same for every process of the install');
const stop = () => void server.stop().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
