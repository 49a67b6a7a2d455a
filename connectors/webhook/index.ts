import { z } from 'zod';
import { destinationNotImplemented, httpUrl, secret } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const webhook: ConnectorDefinition = {
  type: 'webhook',
  label: 'Webhook',
  description: 'POSTs the converted output to an HTTP endpoint, optionally signed with HMAC-SHA256.',
  configuration: z.strictObject({
    url: httpUrl,
    headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,100}$/), z.string().max(4000)).default({}).describe('Extra request headers (not secret)'),
    signing_secret: secret('Shared secret for the X-Geoflow-Signature HMAC-SHA256 header'),
    bearer_token: secret('Token sent as Authorization: Bearer'),
  }),
  secrets: ['signing_secret', 'bearer_token'],
  example: { url: 'https://hooks.example.org/geoflow', signing_secret: '…' },
  implemented: false,
  verifiedAgainst: 'a local HTTP server in the tests',
  destination: destinationNotImplemented('webhook', z.strictObject({})),
};
