import { z } from 'zod';
import { httpUrl, secret } from '../shared/fields.js';
import { headerName } from '../shared/http/http-fields.js';
import { declareConnector } from '../types.js';

export const configuration = z.strictObject({
  url: httpUrl.describe('Landing page of the API (the URL that lists /collections)'),
  api_key: secret('API key, sent in api_key_header'),
  api_key_header: headerName.default('X-API-Key').describe('Header that carries api_key (Authorization works too, with a value such as "Bearer …")'),
});

export const resource = z.strictObject({
  collection: z.string().min(1).max(255).describe('Collection id'),
  bbox: z.tuple([z.number(), z.number(), z.number(), z.number()]).optional().describe('[min_lon, min_lat, max_lon, max_lat] in CRS84'),
  datetime_property: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe("Property holding each feature's datetime, for incremental reads: the server's datetime filter must apply to it"),
  page_size: z.number().int().min(1).max(10_000).default(1000).describe('Features asked for per request (servers may send fewer)'),
});

/** What the registry knows of ogcfeatures without loading its behaviour (index.ts) or its SDK. */
export const ogcfeaturesDeclaration = declareConnector({
  type: 'ogcfeatures',
  label: 'OGC API – Features',
  description: 'Collections of an OGC API – Features server (pygeoapi, GeoServer, ldproxy, …).',
  configuration,
  secrets: ['api_key'],
  example: { url: 'https://demo.pygeoapi.io/master' },
  implemented: true,
  verifiedAgainst: 'real server in npm test: pygeoapi 0.21 (PyPI) started by the tests, serving local files',
  source: {
    resource,
    shorthand: 'collection',
    resourceRequired: true,
    importable: true,
    incremental: true,
    incrementalNote:
      'with datetime_property: each Run asks for datetime=<latest value seen>/.. and keeps the newest value it reads; a Run that finds nothing new is unchanged',
  },
});
