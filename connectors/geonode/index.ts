import { z } from 'zod';
import { destinationNotImplemented, httpUrl, secret, sourceNotImplemented, username } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const geonode: ConnectorDefinition = {
  type: 'geonode',
  label: 'GeoNode',
  description: 'Datasets of a GeoNode portal: read and uploaded through its API.',
  configuration: z.strictObject({
    url: httpUrl.describe('GeoNode base URL'),
    username: username.optional(),
    password: secret('Password'),
    api_key: secret('API key'),
  }),
  secrets: ['password', 'api_key'],
  example: { url: 'https://geonode.example.org', username: 'editor', api_key: '…' },
  implemented: false,
  verifiedAgainst: 'not verified: GeoNode is not installed by the test setup',
  source: sourceNotImplemented('geonode', z.strictObject({ dataset: z.string().min(1).max(255).describe('Dataset id or alternate name') }), true, 'dataset'),
  destination: destinationNotImplemented('geonode', z.strictObject({ title: z.string().min(1).max(255).describe('Title of the uploaded dataset') })),
};
