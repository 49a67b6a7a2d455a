import { z } from 'zod';
import { httpUrl, secret, sourceNotImplemented } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const qfieldcloud: ConnectorDefinition = {
  type: 'qfieldcloud',
  label: 'QFieldCloud',
  description: 'Layers of QFieldCloud projects (field data collection).',
  configuration: z.strictObject({
    url: httpUrl.default('https://app.qfield.cloud').describe('QFieldCloud URL'),
    username: z.string().min(1).max(255).describe('User name'),
    password: secret('Password'),
  }),
  secrets: ['password'],
  example: { url: 'https://app.qfield.cloud', username: 'surveyor', password: '…' },
  implemented: false,
  verifiedAgainst: 'not verified: QFieldCloud is not installed by the test setup',
  // The spec refuses qfieldcloud for Workspace import.
  source: sourceNotImplemented('qfieldcloud', z.strictObject({ project: z.string().min(1).max(255), layer: z.string().min(1).max(255).optional() }), false, 'project'),
};
