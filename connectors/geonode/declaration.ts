import { z } from 'zod';
import { httpUrl, secret, username } from '../shared/fields.js';
import { declareConnector } from '../types.js';

export const configuration = z.strictObject({
  url: httpUrl.describe('GeoNode base URL'),
  username: username.optional(),
  password: secret('Password'),
  api_key: secret('API key (an OAuth2 access token, sent as Bearer; used instead of user name and password)'),
});

export const resource = z.strictObject({
  dataset: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[^\u0000\s]+$/, 'an id, a name or an alternate name (workspace:name)')
    .describe('Dataset id, name or alternate name (geonode:name)'),
});

export const target = z.strictObject({
  dataset: z
    .string()
    .min(1)
    .max(255)
    .regex(/^[^\u0000\s]+$/)
    .optional()
    .describe('Replace the data of this dataset (id, name or alternate); absent: upload a new dataset'),
  title: z.string().min(1).max(255).describe('Title of the dataset'),
  abstract: z.string().min(1).max(4000).optional().describe('Abstract of the dataset'),
});

/** What the registry knows of geonode without loading its behaviour (index.ts) or its SDK. */
export const geonodeDeclaration = declareConnector({
  type: 'geonode',
  label: 'GeoNode',
  description: 'Datasets of a GeoNode portal: read and uploaded through its API.',
  configuration,
  secrets: ['password', 'api_key'],
  example: { url: 'https://geonode.example.org', username: 'editor', api_key: '…' },
  implemented: true,
  verifiedAgainst:
    "stand-in checked with the vendor's client: a stand-in for GeoNode's REST API v2 (datasets, uploads, execution requests) written from GeoNode's API reference and code (test/servers/geonode), checked in the suite with the geonodectl 0.3 client library (PyPI, GeoNode API v2): the real GeoNode needs a GeoServer, which cannot run here",
  source: {
    resource,
    shorthand: 'dataset',
    resourceRequired: true,
    importable: true,
    incremental: false,
  },
  destination: {
    target,
    deliverable: true,
  },
});
