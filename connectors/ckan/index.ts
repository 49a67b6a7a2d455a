import { z } from 'zod';
import { httpUrl, secret, sourceNotImplemented } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const ckan: ConnectorDefinition = {
  type: 'ckan',
  label: 'CKAN',
  description: 'Resources of a CKAN open-data portal.',
  configuration: z.strictObject({
    url: httpUrl.describe('CKAN portal URL'),
    api_key: secret('API token (for private datasets)'),
  }),
  secrets: ['api_key'],
  example: { url: 'https://data.example.org' },
  implemented: false,
  verifiedAgainst: 'not verified: CKAN is not installed by the test setup',
  // The spec refuses ckan for Workspace import.
  source: sourceNotImplemented('ckan', z.strictObject({ resource_id: z.string().min(1).max(255).describe('CKAN resource id') }), false, 'resource_id'),
};
