import { z } from 'zod';
import { httpUrl, secret, sourceNotImplemented } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

/** A file behind an authenticated or non-GET HTTP endpoint (an export URL of an internal system). */
export const http: ConnectorDefinition = {
  type: 'http',
  label: 'HTTP endpoint',
  description: 'Downloads one file from an http(s) endpoint with authentication, custom headers or a POST body.',
  configuration: z.strictObject({
    url: httpUrl,
    method: z.enum(['GET', 'POST']).default('GET').describe('HTTP method'),
    headers: z.record(z.string().regex(/^[A-Za-z0-9-]{1,100}$/), z.string().max(4000)).default({}).describe('Extra request headers (not secret: put tokens in bearer_token or password)'),
    body: z.string().max(100_000).optional().describe('Request body for POST'),
    auth: z.enum(['none', 'basic', 'bearer']).default('none').describe('Authentication scheme'),
    username: z.string().min(1).max(255).optional().describe('User for basic authentication'),
    password: secret('Password for basic authentication'),
    bearer_token: secret('Token for bearer authentication'),
  }),
  secrets: ['password', 'bearer_token'],
  example: { url: 'https://intranet.example.org/export/roads.zip', auth: 'bearer', bearer_token: '…' },
  implemented: false,
  verifiedAgainst: 'a local HTTP server in the tests',
  source: { ...sourceNotImplemented('http', z.strictObject({}), true), resourceRequired: false },
};
