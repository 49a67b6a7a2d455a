import { z } from 'zod';
import { destinationNotImplemented, secret, sourceNotImplemented } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

/** Google Drive: accepted and validated; no Drive API can run on this machine to verify a client against. */
export const gdrive: ConnectorDefinition = {
  type: 'gdrive',
  label: 'Google Drive',
  description: 'Files in a Google Drive folder, read and written with a service account.',
  configuration: z.strictObject({
    folder_id: z.string().min(1).max(200).describe('Id of the Drive folder (from its URL)'),
    credentials_json: secret('Service account key as JSON'),
  }),
  secrets: ['credentials_json'],
  example: { folder_id: '1AbCdEfGhIjKlMnOp', credentials_json: '{"type": "service_account", …}' },
  implemented: false,
  verifiedAgainst: 'not verified: no Google Drive API server can run here',
  // The spec refuses gdrive for Workspace import and delivery; Jobs may use it once implemented.
  source: sourceNotImplemented('gdrive', z.strictObject({ file_id: z.string().min(1).max(200).describe('Drive file id') }), false, 'file_id'),
  destination: destinationNotImplemented('gdrive', z.strictObject({ filename: z.string().min(1).max(255).describe('Name of the file to write') }), false),
};
