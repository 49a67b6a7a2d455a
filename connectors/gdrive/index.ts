import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import { safeFilename } from '../../geo/datasets/dataset-files.js';
import { connectionTest } from '../shared/connection-test.js';
import { ConnectorError } from '../../domain/transfers.js';
import { httpUrl, secret } from '../shared/fields.js';
import { nodeReadable } from '../shared/http/policy-fetch.js';
import { saveObject } from '../shared/files/save-stream.js';
import { defineConnector, type ConnectorContext } from '../types.js';
import { driveClient, driveFailure, FOLDER_TYPE, quoted, SHEET_TYPE, type DriveHandle } from './client.js';
import { resumableUpload, RESUMABLE_FROM_BYTES } from './resumable.js';

const driveId = (what: string) =>
  z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9_-]+$/, 'a Drive id (letters, digits, - and _), as in the file or folder URL')
    .describe(what);

const configuration = z.strictObject({
  credentials_json: secret('Service account key as JSON'),
  client_id: secret('OAuth client id (with client_secret and refresh_token, instead of a service account)'),
  client_secret: secret('OAuth client secret'),
  refresh_token: secret('OAuth refresh token'),
  folder_id: driveId("Folder that names are looked up and files are written in, unless a Job says another (a shared drive's folder works too)").optional(),
  api_url: httpUrl.default('https://www.googleapis.com').describe("Drive API root (Google's by default)"),
  token_url: httpUrl.default('https://oauth2.googleapis.com/token').describe("OAuth token endpoint for refresh tokens (Google's by default)"),
});
type DriveConfig = z.output<typeof configuration>;

const resource = z
  .strictObject({
    file_id: driveId('Drive file id (from its URL)').optional(),
    folder_id: driveId("Folder to look the name up in (default: the Source's folder)").optional(),
    name: z.string().min(1).max(255).optional().describe('File name in the folder; the newest wins when several have it'),
  })
  .refine((r) => Boolean(r.file_id) !== Boolean(r.name), 'give either file_id, or name (with folder_id unless the Source has one)');
type DriveResource = z.output<typeof resource>;

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

/** What a gdrive Source remembers between Runs: the file it read and Drive's change markers. */
interface DriveCursor {
  file_id: string;
  modified_time: string | null;
  md5: string | null;
}

const FILE_FIELDS = 'id, name, mimeType, modifiedTime, md5Checksum, size, parents, appProperties, trashed';
type DriveFile = {
  id?: string | null;
  name?: string | null;
  mimeType?: string | null;
  modifiedTime?: string | null;
  md5Checksum?: string | null;
  size?: string | null;
  appProperties?: Record<string, string> | null;
};

/** The key a delivery leaves on the file it wrote: a retried delivery finds its own finished upload. */
const DELIVERY_PROPERTY = 'geoflow_delivery';

function folderOf(config: DriveConfig, given: string | undefined, what: string): string {
  const folder = given ?? config.folder_id;
  if (!folder) throw new ConnectorError('not_found', `${what} needs a folder_id: give one in the Job or save one on the connection`, {}, false);
  return folder;
}

async function newestNamed(d: DriveHandle, folder: string, name: string): Promise<DriveFile[]> {
  const q = `${quoted(folder)} in parents and name = ${quoted(name)} and trashed = false and mimeType != ${quoted(FOLDER_TYPE)}`;
  const got = await d.api.files.list(
    {
      q,
      orderBy: 'modifiedTime desc',
      pageSize: 10,
      fields: `files(${FILE_FIELDS})`,
      supportsAllDrives: true,
      includeItemsFromAllDrives: true,
      corpora: 'allDrives',
    },
    d.call,
  );
  return got.data.files ?? [];
}

async function resolveFile(d: DriveHandle, config: DriveConfig, selector: DriveResource): Promise<DriveFile> {
  if (selector.file_id) {
    try {
      return (await d.api.files.get({ fileId: selector.file_id, fields: FILE_FIELDS, supportsAllDrives: true }, d.call)).data;
    } catch (error) {
      throw driveFailure(error, `${d.label}: file ${selector.file_id}`, { file_id: selector.file_id });
    }
  }
  const folder = folderOf(config, selector.folder_id, 'A Drive file by name');
  let files: DriveFile[];
  try {
    files = await newestNamed(d, folder, selector.name!);
  } catch (error) {
    throw driveFailure(error, `${d.label}: folder ${folder}`, { folder_id: folder });
  }
  if (!files[0])
    throw new ConnectorError('not_found', `${d.label}: folder ${folder} has no file named ${selector.name}`, { folder_id: folder, name: selector.name }, false);
  return files[0];
}

async function saveDriveFile(d: DriveHandle, file: DriveFile, ctx: ConnectorContext): Promise<{ file: string; filename: string; bytes: number }> {
  const id = file.id!;
  const label = `${d.label}: file ${id}`;
  const details = { file_id: id };
  try {
    if (file.mimeType === SHEET_TYPE) {
      // A Google Sheet has no bytes of its own: its first sheet is exported as CSV.
      const got = await d.api.files.export({ fileId: id, mimeType: 'text/csv' }, { ...d.call, responseType: 'stream' });
      return await saveObject(nodeReadable(got.data), undefined, `${stemOf(file.name ?? id)}.csv`, ctx, label, details);
    }
    if (file.mimeType?.startsWith('application/vnd.google-apps.')) {
      throw new ConnectorError(
        'invalid_data',
        `${label} is a ${file.mimeType.replace('application/vnd.google-apps.', 'Google ')} document, which has no geodata export; Sheets (as CSV) and uploaded files are read`,
        details,
        false,
      );
    }
    const declared = file.size ? Number(file.size) : undefined;
    const got = await d.api.files.get({ fileId: id, alt: 'media', supportsAllDrives: true }, { ...d.call, responseType: 'stream' });
    return await saveObject(nodeReadable(got.data), declared, safeFilename(file.name ?? id), ctx, label, details);
  } catch (error) {
    throw driveFailure(error, label, details);
  }
}

const stemOf = (name: string) => (path.extname(name) ? name.slice(0, -path.extname(name).length) : name);

const driveCursorOf = (file: { id?: string | null; modifiedTime?: string | null; md5Checksum?: string | null }) =>
  ({ file_id: file.id!, modified_time: file.modifiedTime ?? null, md5: file.md5Checksum ?? null }) satisfies DriveCursor;
const sameDriveFile = (previous: DriveCursor | null, cursor: DriveCursor) =>
  previous !== null && previous.file_id === cursor.file_id && previous.modified_time === cursor.modified_time && previous.md5 === cursor.md5;

export const gdrive = defineConnector({
  type: 'gdrive',
  label: 'Google Drive',
  description: 'Files in Google Drive (shared drives too): read a file or a Sheet, write outputs into a folder.',
  configuration,
  secrets: ['credentials_json', 'client_id', 'client_secret', 'refresh_token'],
  example: { folder_id: '1AbCdEfGhIjKlMnOp', credentials_json: '{"type": "service_account", …}' },
  implemented: true,
  verifiedAgainst:
    "stand-in checked with the vendor's client: a stand-in of the Drive v3 REST API (test/servers/gdrive, written from Google's Drive v3 reference: files list/get/export/create/update, multipart and resumable uploads, shared drives, self-signed JWT and refresh-token auth), driven by this connector through @googleapis/drive 22.0.0 (npm) and checked in the suite by google-api-python-client 2.202.0 (PyPI) listing, downloading and uploading (resumable) files; Google Drive itself cannot run here",
  notes: [
    "Uses Google's Node client (`@googleapis/drive`, `google-auth-library`), with every request asking for shared drives too (`supportsAllDrives`).",
    '',
    "- **Credentials**: a service-account key (`credentials_json`): each request carries a JWT the key signs for the Drive scope (Google's self-signed JWT with scopes; no token exchange). Share the folder (or the shared drive) with the service account's e-mail. Or an OAuth client (`client_id`, `client_secret`) with a `refresh_token`: access tokens come from `token_url`. All four are secrets.",
    '- **Source** (Jobs only: the spec refuses gdrive on Workspace import): `{"file_id": …}`, or `{"name": …}` in `folder_id` (the Job\'s, else the connection\'s); when several files have the name, the most recently modified is read. A Google Sheet is exported as CSV (its first sheet); other Google documents are refused; any other file is downloaded as it is (size-limited while it streams).',
    '- **Unchanged skip**: the file id, its `modifiedTime` and `md5Checksum` are kept; a Run that finds them the same ends early as unchanged without downloading.',
    "- **Destination** (Jobs only: the spec refuses gdrive on Workspace delivery): the output is written into `folder_id` as `filename` (default the output's name). `replace` uploads a new revision of the existing file of that name, so its id and shared links stay; `create` fails with `target_exists` when the name exists. Outputs over 5 MiB go up in a resumable upload session (8 MiB chunks); smaller ones in one multipart request. The delivery id is kept in the file's `appProperties`, so a retried delivery that already finished is not repeated.",
    '- **Failures**: 401 and a refused refresh token or client → `authentication_failed`; 403 → `permission_denied` (403 rate limits → `server_error`, retried); 404 → `not_found`.',
    "- **Outbound policy**: every request (the API's, `token_url`'s and the resumable upload session's) passes it, through the client's fetch (`connectors/shared/http/policy-fetch.ts`, not node-fetch); a redirect to another origin carries no token and no body (a token request's `client_secret` and `refresh_token` stay home), and a resumable session URI on another origin is refused (docs/security.md).",
  ].join('\n'),
  async test(config, ctx) {
    return connectionTest(
      { api_url: config.api_url, auth: config.credentials_json ? 'service_account' : 'oauth', folder_id: config.folder_id ?? null },
      async () => {
        const d = driveClient(config, ctx.signal);
        try {
          if (config.folder_id) {
            const folder = (await d.api.files.get({ fileId: config.folder_id, fields: 'id, name, mimeType', supportsAllDrives: true }, d.call)).data;
            if (folder.mimeType !== FOLDER_TYPE) throw new ConnectorError('invalid_data', `${d.label}: ${config.folder_id} is not a folder`, {}, false);
            return `${d.label}: folder "${folder.name}" is visible to ${d.principal ?? 'the OAuth account'}`;
          }
          await d.api.files.list({ pageSize: 1, fields: 'files(id)', supportsAllDrives: true, includeItemsFromAllDrives: true }, d.call);
          return `${d.label}: ${d.principal ?? 'the OAuth account'} may list files`;
        } catch (error) {
          throw driveFailure(error, d.label);
        }
      },
      (error) => driveFailure(error, 'Google Drive'),
    );
  },
  source: {
    resource,
    resourceRequired: true,
    importable: false,
    incremental: true,
    incrementalNote: "the file's id, modifiedTime and md5Checksum: a Run that finds them the same ends early as unchanged",
    async extract(config, selector, ctx, options) {
      const d = driveClient(config, ctx.signal);
      const file = await resolveFile(d, config, selector);
      const cursor = driveCursorOf(file);
      if (sameDriveFile((options.sync?.cursor ?? null) as DriveCursor | null, cursor))
        return { file: '', filename: '', bytes: 0, sync: { cursor }, unchanged: true };
      return { ...(await saveDriveFile(d, file, ctx)), sync: { cursor } };
    },
    changeCheck: {
      note: "the file's id, modifiedTime and md5Checksum from its metadata",
      async changed(config, selector, ctx, sync) {
        const file = await resolveFile(driveClient(config, ctx.signal), config, selector);
        return !sameDriveFile((sync?.cursor ?? null) as DriveCursor | null, driveCursorOf(file));
      },
    },
  },
  destination: {
    target,
    // The spec refuses gdrive for Workspace delivery: Jobs only.
    deliverable: false,
    async deliver(config, where, input, ctx) {
      const d = driveClient(config, ctx.signal);
      const folder = folderOf(config, where.folder_id, 'A Drive delivery');
      const name = where.filename ?? input.filename;
      const bytes = (await stat(input.file)).size;
      const mimeType = input.mediaType ?? 'application/octet-stream';
      const label = `${d.label}: ${name} in folder ${folder}`;
      const details = { folder_id: folder, filename: name };
      try {
        const existing = (await newestNamed(d, folder, name))[0];
        const result = (file: DriveFile) => ({
          target: { folder_id: folder, file_id: file.id, filename: name, write_mode: where.write_mode },
          bytes_written: bytes,
        });
        if (existing?.appProperties?.[DELIVERY_PROPERTY] === input.deliveryId) return result(existing);
        if (existing && where.write_mode === 'create') {
          throw new ConnectorError('target_exists', `${label} already exists (write_mode create)`, { ...details, file_id: existing.id }, false);
        }
        const metadata = { appProperties: { [DELIVERY_PROPERTY]: input.deliveryId } };
        let written: DriveFile;
        if (bytes >= RESUMABLE_FROM_BYTES) {
          written = await resumableUpload(
            d,
            { fileId: existing?.id ?? undefined, metadata: existing ? metadata : { ...metadata, name, parents: [folder] }, file: input.file, bytes, mimeType },
            ctx,
          );
        } else if (existing) {
          written = (
            await d.api.files.update(
              { fileId: existing.id!, supportsAllDrives: true, requestBody: metadata, media: { mimeType, body: createReadStream(input.file) }, fields: 'id' },
              d.call,
            )
          ).data;
        } else {
          written = (
            await d.api.files.create(
              {
                supportsAllDrives: true,
                requestBody: { ...metadata, name, parents: [folder] },
                media: { mimeType, body: createReadStream(input.file) },
                fields: 'id',
              },
              d.call,
            )
          ).data;
        }
        return result(written);
      } catch (error) {
        throw driveFailure(error, label, details);
      }
    },
  },
});
