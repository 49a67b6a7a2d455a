import { z } from 'zod';
import { destinationNotImplemented, httpUrl, objectKey, secret, sourceNotImplemented } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const s3: ConnectorDefinition = {
  type: 's3',
  label: 'Amazon S3 (or S3-compatible)',
  description: 'Objects in an S3 bucket, or in any S3-compatible store (MinIO, Ceph, …) through endpoint.',
  configuration: z.strictObject({
    bucket: z.string().min(3).max(63).regex(/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/, 'an S3 bucket name').describe('Bucket'),
    region: z.string().min(1).max(64).default('us-east-1').describe('Region'),
    endpoint: httpUrl.optional().describe('Endpoint of an S3-compatible store; omit for AWS'),
    force_path_style: z.boolean().default(false).describe('Path-style addressing (most S3-compatible stores need it)'),
    prefix: z.string().max(512).default('').describe('Key prefix every object key is relative to'),
    access_key: z.string().min(1).max(256).optional().describe('Access key id'),
    secret_key: secret('Secret access key'),
    session_token: secret('Session token (temporary credentials)'),
  }),
  secrets: ['secret_key', 'session_token'],
  example: { bucket: 'gis-exports', region: 'eu-central-1', access_key: 'AKIA…', secret_key: '…', prefix: 'nightly/' },
  implemented: false,
  verifiedAgainst: 'an S3-compatible server started by the tests',
  source: sourceNotImplemented('s3', z.strictObject({ key: objectKey('Object key (relative to the prefix)') }), true, 'key'),
  destination: destinationNotImplemented('s3', z.strictObject({ key: objectKey('Object key to write (relative to the prefix)') })),
};
