import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { z } from 'zod';
import { safeFilename } from '../../geo/datasets/dataset-files.js';
import { connectionTest } from '../shared/connection-test.js';
import { ConnectorError } from '../../domain/transfers.js';
import { nodeReadable } from '../shared/http/policy-fetch.js';
import { saveObject } from '../shared/files/save-stream.js';
import { driveClient, driveFailure, FOLDER_TYPE, quoted, SHEET_TYPE, type DriveHandle } from './client.js';
import { resumableUpload, RESUMABLE_FROM_BYTES } from './resumable.js';
import { type configuration, type resource, gdriveDeclaration } from './declaration.js';
import { defineConnector, type ConnectorContext } from '../types.js';

type DriveConfig = z.output<typeof configuration>;

type DriveResource = z.output<typeof resource>;

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

export const gdrive = defineConnector(gdriveDeclaration, {
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
    async extract(config, selector, ctx, options) {
      const d = driveClient(config, ctx.signal);
      const file = await resolveFile(d, config, selector);
      const cursor = driveCursorOf(file);
      if (sameDriveFile((options.sync?.cursor ?? null) as DriveCursor | null, cursor))
        return { file: '', filename: '', bytes: 0, sync: { cursor }, unchanged: true };
      return { ...(await saveDriveFile(d, file, ctx)), sync: { cursor } };
    },
    changeCheck: {
      async changed(config, selector, ctx, sync) {
        const file = await resolveFile(driveClient(config, ctx.signal), config, selector);
        return !sameDriveFile((sync?.cursor ?? null) as DriveCursor | null, driveCursorOf(file));
      },
    },
  },
  destination: {
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
