import { z } from 'zod';
import { httpUrl, secret, sourceNotImplemented } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const ogcfeatures: ConnectorDefinition = {
  type: 'ogcfeatures',
  label: 'OGC API – Features',
  description: 'Collections of an OGC API – Features server (pygeoapi, GeoServer, ldproxy, …).',
  configuration: z.strictObject({
    url: httpUrl.describe('Landing page of the API'),
    api_key: secret('API key, sent as a header'),
    api_key_header: z.string().max(100).default('X-API-Key').describe('Header that carries api_key'),
  }),
  secrets: ['api_key'],
  example: { url: 'https://demo.pygeoapi.io/master' },
  implemented: false,
  verifiedAgainst: 'pygeoapi started by the tests',
  source: sourceNotImplemented(
    'ogcfeatures',
    z.strictObject({
      collection: z.string().min(1).max(255).describe('Collection id'),
      bbox: z.tuple([z.number(), z.number(), z.number(), z.number()]).optional().describe('[min_lon, min_lat, max_lon, max_lat]'),
      datetime_property: z.string().max(255).optional().describe('Property for incremental reads (datetime filter)'),
    }),
    true,
    'collection',
  ),
};
