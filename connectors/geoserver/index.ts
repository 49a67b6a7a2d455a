import { z } from 'zod';
import { destinationNotImplemented, httpUrl, secret, sourceNotImplemented, username } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const geoserver: ConnectorDefinition = {
  type: 'geoserver',
  label: 'GeoServer',
  description: 'Layers of a GeoServer: read through WFS, published through its REST API.',
  configuration: z.strictObject({
    url: httpUrl.describe('GeoServer base URL, e.g. https://maps.example.org/geoserver'),
    username: username.optional(),
    password: secret('Password'),
    workspace: z.string().min(1).max(255).optional().describe('Default GeoServer workspace'),
  }),
  secrets: ['password'],
  example: { url: 'https://maps.example.org/geoserver', username: 'admin', password: '…', workspace: 'topp' },
  implemented: false,
  verifiedAgainst: 'not verified: GeoServer (Java web application) is not installed by the test setup yet',
  source: sourceNotImplemented('geoserver', z.strictObject({ layer: z.string().min(1).max(255).describe('Layer name, workspace:name') }), true, 'layer'),
  destination: destinationNotImplemented(
    'geoserver',
    z.strictObject({
      workspace: z.string().min(1).max(255).optional().describe('GeoServer workspace (default: the connection\'s)'),
      store: z.string().min(1).max(255).optional().describe('Data store to publish into'),
      layer: z.string().min(1).max(255).describe('Layer name to publish'),
    }),
  ),
};
