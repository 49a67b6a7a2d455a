import { z } from 'zod';
import { httpUrl, secret } from '../shared/fields.js';
import { plainHeaders } from '../shared/http/http-fields.js';
import { declareConnector } from '../types.js';

const configuration = z.strictObject({
  url: httpUrl.describe('Endpoint that receives the converted file in a POST (no redirects are followed)'),
  headers: plainHeaders.describe('Extra request headers, stored in plain text (credentials belong in bearer_token)'),
  signing_secret: secret('Shared secret: each request then carries X-Geoflow-Signature, an HMAC-SHA256 of the timestamp and the body'),
  bearer_token: secret('Token sent as Authorization: Bearer'),
});

/** What the registry knows of webhook without loading its behaviour (index.ts) or its SDK. */
export const webhookDeclaration = declareConnector({
  type: 'webhook',
  label: 'Webhook',
  description: 'POSTs the converted output to an HTTP endpoint, optionally signed with HMAC-SHA256.',
  configuration,
  secrets: ['signing_secret', 'bearer_token'],
  example: { url: 'https://hooks.example.org/geoflow', signing_secret: '…' },
  implemented: true,
  verifiedAgainst: 'real server in npm test: a local HTTP receiver in the tests that checks the signature, the timestamp and the delivery id',
  destination: {
    target: z.strictObject({}).describe('No target fields: the configuration says where the file goes'),
    deliverable: true,
  },
});
