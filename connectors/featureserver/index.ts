import { z } from 'zod';
import { httpUrl, secret, sourceNotImplemented } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const featureserver: ConnectorDefinition = {
  type: 'featureserver',
  label: 'ArcGIS FeatureServer',
  description: 'Layers of an ArcGIS REST FeatureServer or MapServer (paged queries).',
  configuration: z.strictObject({
    url: httpUrl.describe('Service URL ending in /FeatureServer (or /MapServer)'),
    token: secret('ArcGIS token'),
  }),
  secrets: ['token'],
  example: { url: 'https://services.arcgis.com/xyz/arcgis/rest/services/Parcels/FeatureServer' },
  implemented: false,
  verifiedAgainst: 'a local server speaking the FeatureServer query protocol (no ArcGIS server can run here)',
  source: sourceNotImplemented(
    'featureserver',
    z.strictObject({
      layer: z.number().int().min(0).describe('Layer id'),
      where: z.string().max(4000).default('1=1').describe('SQL where clause'),
    }),
    true,
    'layer',
  ),
};
