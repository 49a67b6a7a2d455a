import { z } from 'zod';
import { destinationNotImplemented, httpUrl, objectKey, secret, sourceNotImplemented } from '../shared/fields.js';
import type { ConnectorDefinition } from '../types.js';

export const azureblob: ConnectorDefinition = {
  type: 'azureblob',
  label: 'Azure Blob Storage',
  description: 'Blobs in an Azure Storage container.',
  configuration: z.strictObject({
    account_name: z.string().min(3).max(24).regex(/^[a-z0-9]+$/, 'a storage account name').describe('Storage account name'),
    container: z.string().min(3).max(63).describe('Container'),
    endpoint: httpUrl.optional().describe('Blob endpoint; omit for https://<account>.blob.core.windows.net'),
    prefix: z.string().max(512).default('').describe('Blob name prefix'),
    account_key: secret('Account key'),
    sas_token: secret('Shared access signature'),
  }),
  secrets: ['account_key', 'sas_token'],
  example: { account_name: 'gisdata', container: 'exports', account_key: '…' },
  implemented: false,
  verifiedAgainst: 'Azurite started by the tests',
  source: sourceNotImplemented('azureblob', z.strictObject({ blob: objectKey('Blob name (relative to the prefix)') }), true, 'blob'),
  destination: destinationNotImplemented('azureblob', z.strictObject({ blob: objectKey('Blob name to write (relative to the prefix)') })),
};
