import { z } from 'zod';
import { destinationNotImplemented, httpUrl, secret, sourceNotImplemented } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const hub: ConnectorDefinition = {
  type: 'hub',
  label: 'ArcGIS Online / Hub',
  description: 'Items of an ArcGIS Online or Enterprise portal (Hub): read and published through the portal API.',
  configuration: z.strictObject({
    url: httpUrl.default('https://www.arcgis.com').describe('Portal URL'),
    username: z.string().min(1).max(255).optional().describe('Portal user'),
    password: secret('Password'),
    api_key: secret('API key'),
  }),
  secrets: ['password', 'api_key'],
  example: { url: 'https://www.arcgis.com', api_key: '…' },
  implemented: false,
  verifiedAgainst: 'not verified: no ArcGIS portal can run here',
  source: sourceNotImplemented('hub', z.strictObject({ item_id: z.string().min(1).max(64).describe('Portal item id'), layer: z.number().int().min(0).optional() }), true, 'item_id'),
  destination: destinationNotImplemented('hub', z.strictObject({ title: z.string().min(1).max(255).describe('Title of the published item'), item_id: z.string().max(64).optional().describe('Item to overwrite') })),
};
