import { z } from 'zod';
import { httpUrl, secret, sourceNotImplemented } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const merginmaps: ConnectorDefinition = {
  type: 'merginmaps',
  label: 'Mergin Maps',
  description: 'Layers of Mergin Maps projects (field data collection).',
  configuration: z.strictObject({
    url: httpUrl.default('https://app.merginmaps.com').describe('Mergin Maps server URL'),
    username: z.string().min(1).max(255).describe('User name'),
    password: secret('Password'),
  }),
  secrets: ['password'],
  example: { url: 'https://app.merginmaps.com', username: 'surveyor', password: '…' },
  implemented: false,
  verifiedAgainst: 'not verified: Mergin Maps server is not installed by the test setup',
  // The spec refuses merginmaps for Workspace import.
  source: sourceNotImplemented('merginmaps', z.strictObject({ project: z.string().min(1).max(255).describe('workspace/project'), layer: z.string().min(1).max(255).optional() }), false, 'project'),
};
