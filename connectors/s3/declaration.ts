import { z } from 'zod';
import { httpUrl, secret } from '../shared/fields.js';
import { relativeKey } from '../shared/files/remote-paths.js';
import { declareConnector } from '../types.js';

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

/** What the registry knows of s3 without loading its behaviour (index.ts) or its SDK. */
export const s3Declaration = declareConnector({
  type: 's3',
  label: 'Amazon S3 (or S3-compatible)',
  description: 'Objects in an S3 bucket, or in any S3-compatible store (MinIO, Ceph, …) through endpoint.',
  configuration,
  secrets: ['secret_key', 'session_token'],
  example: { bucket: 'gis-exports', region: 'eu-central-1', access_key: 'AKIA…', secret_key: '…', prefix: 'nightly/' },
  implemented: true,
  verifiedAgainst: 'emulator in npm test: moto 5.2 in server mode (S3 API with IAM authentication on), started by the tests',
  source: {
    resource: z.strictObject({ key: relativeKey('Object key, relative to the prefix') }),
    shorthand: 'key',
    resourceRequired: true,
    importable: true,
    incremental: true,
    incrementalNote: 'ETag: an object that has not changed since the last Run (HTTP 304 to If-None-Match) skips the rest of the Run',
    changeCheck: {
      note: "the object's ETag from a HEAD",
    },
  },
  destination: {
    target: z.strictObject({
      key: relativeKey('Object key to write, relative to the prefix; ending in "/" it names a folder and the output keeps its filename'),
    }),
    deliverable: true,
  },
});
