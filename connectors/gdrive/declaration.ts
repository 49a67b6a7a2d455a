import { z } from 'zod';
import { httpUrl, secret } from '../shared/fields.js';
import { declareConnector } from '../types.js';

const driveId = (what: string) =>
  z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9_-]+$/, 'a Drive id (letters, digits, - and _), as in the file or folder URL')
    .describe(what);

export const configuration = z.strictObject({
  credentials_json: secret('Service account key as JSON'),
  client_id: secret('OAuth client id (with client_secret and refresh_token, instead of a service account)'),
  client_secret: secret('OAuth client secret'),
  refresh_token: secret('OAuth refresh token'),
  folder_id: driveId("Folder that names are looked up and files are written in, unless a Job says another (a shared drive's folder works too)").optional(),
  api_url: httpUrl.default('https://www.googleapis.com').describe("Drive API root (Google's by default)"),
  token_url: httpUrl.default('https://oauth2.googleapis.com/token').describe("OAuth token endpoint for refresh tokens (Google's by default)"),
});

export const resource = z
  .strictObject({
    file_id: driveId('Drive file id (from its URL)').optional(),
    folder_id: driveId("Folder to look the name up in (default: the Source's folder)").optional(),
    name: z.string().min(1).max(255).optional().describe('File name in the folder; the newest wins when several have it'),
  })
  .refine((r) => Boolean(r.file_id) !== Boolean(r.name), 'give either file_id, or name (with folder_id unless the Source has one)');

const target = z.strictObject({
  folder_id: driveId("Folder to write in (default: the Destination's folder)").optional(),
  filename: z
    .string()
    .min(1)
    .max(255)
    .refine((n) => !/[\\/]/.test(n), 'a file name, without folders')
    .optional()
    .describe('Name of the file in Drive (default: the output file name)'),
  write_mode: z
    .enum(['replace', 'create'])
    .default('replace')
    .describe('replace: a file of that name gets a new revision (same id, shared links keep working); create: fail if the name exists'),
});

/** What the registry knows of gdrive without loading its behaviour (index.ts) or its SDK. */
export const gdriveDeclaration = declareConnector({
  type: 'gdrive',
  label: 'Google Drive',
  description: 'Files in Google Drive (shared drives too): read a file or a Sheet, write outputs into a folder.',
  configuration,
  secrets: ['credentials_json', 'client_id', 'client_secret', 'refresh_token'],
  example: { folder_id: '1AbCdEfGhIjKlMnOp', credentials_json: '{"type": "service_account", …}' },
  implemented: true,
  verifiedAgainst:
    "stand-in checked with the vendor's client: a stand-in of the Drive v3 REST API (test/servers/gdrive, written from Google's Drive v3 reference: files list/get/export/create/update, multipart and resumable uploads, shared drives, self-signed JWT and refresh-token auth), driven by this connector through @googleapis/drive 22.0.0 (npm) and checked in the suite by google-api-python-client 2.202.0 (PyPI) listing, downloading and uploading (resumable) files; Google Drive itself cannot run here",
  source: {
    resource,
    resourceRequired: true,
    importable: false,
    incremental: true,
    incrementalNote: "the file's id, modifiedTime and md5Checksum: a Run that finds them the same ends early as unchanged",
    changeCheck: {
      note: "the file's id, modifiedTime and md5Checksum from its metadata",
    },
  },
  destination: {
    target,
    // The spec refuses gdrive for Workspace delivery: Jobs only.
    deliverable: false,
  },
});
