import { z } from 'zod';
import { httpUrl, secret } from '../shared/fields.js';
import { relativeKey } from '../shared/files/remote-paths.js';
import { declareConnector } from '../types.js';

const configuration = z.strictObject({
  account_name: z
    .string()
    .min(3)
    .max(24)
    .regex(/^[a-z0-9]+$/, 'a storage account name')
    .describe('Storage account name'),
  container: z
    .string()
    .min(3)
    .max(63)
    .regex(/^[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9]))*$/, 'a container name: lower-case letters, digits and single hyphens')
    .describe('Container'),
  endpoint: httpUrl
    .optional()
    .describe('Blob endpoint of the account (Azurite: http://127.0.0.1:10000/<account>); omit for https://<account>.blob.core.windows.net'),
  prefix: z.string().max(512).default('').describe('Folder (blob name prefix) every blob name is relative to'),
  account_key: secret('Account key'),
  sas_token: secret('Shared access signature (used when there is no account key)'),
});

/** What the registry knows of azureblob without loading its behaviour (index.ts) or its SDK. */
export const azureblobDeclaration = declareConnector({
  type: 'azureblob',
  label: 'Azure Blob Storage',
  description: 'Blobs in an Azure Storage container.',
  configuration,
  secrets: ['account_key', 'sas_token'],
  example: { account_name: 'gisdata', container: 'exports', prefix: 'nightly/', account_key: '…' },
  implemented: true,
  verifiedAgainst: 'emulator in npm test: Azurite 3.35 (the Azure Storage emulator) started by the tests, with its own account and key',
  source: {
    resource: z.strictObject({ blob: relativeKey('Blob name, relative to the prefix') }),
    shorthand: 'blob',
    resourceRequired: true,
    importable: true,
    incremental: true,
    incrementalNote: 'ETag: a blob that has not changed since the last Run (HTTP 304 to If-None-Match) skips the rest of the Run',
    changeCheck: {
      note: "the blob's ETag from its properties",
    },
  },
  destination: {
    target: z.strictObject({
      blob: relativeKey('Blob name to write, relative to the prefix; ending in "/" it names a folder and the output keeps its filename'),
    }),
    deliverable: true,
  },
});
