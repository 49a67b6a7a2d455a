import { z } from 'zod';
import { httpUrl, secret } from '../shared/fields.js';
import { headerName, plainHeaders } from '../shared/http/http-fields.js';
import { declareConnector } from '../types.js';

export const configuration = z.strictObject({
  url: httpUrl.describe('Address of the endpoint that answers with one file (GeoJSON, zipped shapefile, GeoPackage, CSV …)'),
  method: z.enum(['GET', 'POST']).default('GET').describe('HTTP method'),
  headers: plainHeaders.describe('Extra request headers, stored in plain text (credentials belong in the auth fields)'),
  body: z
    .string()
    .max(100_000)
    .optional()
    .describe('Request body, sent with POST only; its Content-Type is the one in headers, else application/json when the body is JSON, else text/plain'),
  auth: z
    .enum(['none', 'basic', 'bearer', 'header'])
    .default('none')
    .describe('none; basic (username + password); bearer (bearer_token); header (api_key in the header api_key_header)'),
  username: z.string().min(1).max(255).optional().describe('User for basic authentication'),
  password: secret('Password for basic authentication'),
  bearer_token: secret('Token for bearer authentication (Authorization: Bearer …)'),
  api_key_header: headerName.optional().describe('Header that carries api_key when auth is "header" (e.g. X-API-Key)'),
  api_key: secret('Value sent in api_key_header when auth is "header"'),
});

/** What the registry knows of http without loading its behaviour (index.ts) or its SDK. */
export const httpDeclaration = declareConnector({
  type: 'http',
  label: 'HTTP endpoint',
  description: 'Downloads one file from an http(s) endpoint with authentication, custom headers or a POST body.',
  configuration,
  secrets: ['password', 'bearer_token', 'api_key'],
  example: { url: 'https://intranet.example.org/export/roads.zip', method: 'GET', auth: 'bearer', bearer_token: '…' },
  implemented: true,
  verifiedAgainst: 'real server in npm test: a local HTTP server in the tests (basic, bearer and API-key auth, POST export, redirects, ETag)',
  source: {
    resource: z.strictObject({}),
    resourceRequired: false,
    importable: true,
    incremental: true,
    incrementalNote: 'ETag / Last-Modified: an unchanged answer (HTTP 304) skips the rest of the Run',
    changeCheck: {
      note: 'a HEAD (a POST source: its own request, answer dropped after the headers) with the last ETag / Last-Modified: 304 (or the same validators) is unchanged',
    },
  },
});
