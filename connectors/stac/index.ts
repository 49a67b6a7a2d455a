import { z } from 'zod';
import { httpUrl, secret, sourceNotImplemented } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const stac: ConnectorDefinition = {
  type: 'stac',
  label: 'STAC catalog',
  description: 'Assets of items in a STAC catalog or STAC API.',
  configuration: z.strictObject({
    url: httpUrl.describe('Root catalog or STAC API landing page'),
    token: secret('Bearer token'),
  }),
  secrets: ['token'],
  example: { url: 'https://stac.example.org/catalog.json' },
  implemented: false,
  verifiedAgainst: 'a static STAC catalog served over HTTP by the tests',
  source: sourceNotImplemented(
    'stac',
    z.strictObject({
      collection: z.string().min(1).max(255).optional().describe('Collection id'),
      item: z.string().min(1).max(255).describe('Item id'),
      asset: z.string().min(1).max(255).describe('Asset key'),
    }),
    true,
  ),
};
