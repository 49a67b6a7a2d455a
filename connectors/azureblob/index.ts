import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { httpUrl, secret } from '../shared/fields.js';
import { relativeKey, underPrefix } from '../shared/files/remote-paths.js';
import { connectionTest } from '../shared/connection-test.js';
import { alreadyDelivered, objectChanged, readObjectIfChanged } from '../shared/files/object-store.js';
import { defineConnector, type ConnectorContext, type DestinationSupport, type SourceSupport, type TestResult } from '../types.js';
import { azureFailure, azureWhere, containerClient, credentialKind, isDenied, isMissing, isNotModified, type AzureConfig } from './client.js';

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

/** Blob metadata on every delivered blob: a retried delivery recognises its own committed blob. */
const DELIVERY_META = 'geoflow_delivery_id';
/** Blocks staged per delivery: Azure takes up to 50,000 blocks of up to 4000 MiB. */
const BLOCK_BYTES = 8 * 1024 * 1024;
const BLOCKS_AT_ONCE = 3;

/** What an azureblob Source remembers between Runs: the blob it read and its ETag. */
interface AzureCursor {
  blob: string;
  etag: string | null;
}

const label = (c: AzureConfig, blob?: string) =>
  blob === undefined ? `Azure container "${c.container}" of account "${c.account_name}"` : `Azure blob "${blob}" in container "${c.container}"`;

/**
 * Block ids of one delivery: derived from its delivery id, so a retry stages the same blocks
 * again, and of one fixed length, as Azure requires of all blocks of a blob.
 */
export function blockIds(deliveryId: string, count: number): string[] {
  const stem = createHash('sha256').update(deliveryId).digest('hex').slice(0, 24);
  return Array.from({ length: count }, (_, i) => Buffer.from(`${stem}-${String(i).padStart(6, '0')}`).toString('base64'));
}

async function test(config: AzureConfig, ctx: ConnectorContext): Promise<TestResult> {
  const c = config;
  return connectionTest(
    { ...azureWhere(c), prefix: c.prefix, credential: credentialKind(c) },
    async () => {
      // Listing one blob under the prefix proves endpoint, credential and read access at once; a
      // container SAS may list, but not read the container's properties.
      await containerClient(c)
        .listBlobsFlat({ prefix: c.prefix || undefined, abortSignal: ctx.signal })
        .byPage({ maxPageSize: 1 })
        .next();
      return `${label(c)} is reachable and the credential may list it`;
    },
    (error) => azureFailure(error, label(c), azureWhere(c)),
  );
}

const source: SourceSupport<{ blob: string }, AzureConfig> = {
  resource: z.strictObject({ blob: relativeKey('Blob name, relative to the prefix') }),
  shorthand: 'blob',
  resourceRequired: true,
  importable: true,
  incremental: true,
  incrementalNote: 'ETag: a blob that has not changed since the last Run (HTTP 304 to If-None-Match) skips the rest of the Run',
  extract(config, resource, ctx, options) {
    const c = config;
    const name = underPrefix(c.prefix, resource.blob);
    return readObjectIfChanged(
      {
        field: 'blob' satisfies keyof AzureCursor,
        name,
        async read(ifNoneMatch) {
          try {
            const answer = await containerClient(c)
              .getBlobClient(name)
              .download(0, undefined, { abortSignal: ctx.signal, conditions: ifNoneMatch ? { ifNoneMatch } : undefined });
            return { body: answer.readableStreamBody, length: answer.contentLength, etag: answer.etag ?? null };
          } catch (error) {
            if (ifNoneMatch && isNotModified(error)) return 'unchanged';
            throw error;
          }
        },
        failure: (error) => azureFailure(error, label(c, name), azureWhere(c, name)),
        label: label(c, name),
        where: azureWhere(c, name),
      },
      options.sync,
      ctx,
    );
  },
  changeCheck: {
    note: "the blob's ETag from its properties",
    changed(config, resource, ctx, sync) {
      const name = underPrefix(config.prefix, resource.blob);
      return objectChanged(
        {
          field: 'blob' satisfies keyof AzureCursor,
          name,
          etag: async () => (await containerClient(config).getBlobClient(name).getProperties({ abortSignal: ctx.signal })).etag ?? null,
          failure: (error) => azureFailure(error, label(config, name), azureWhere(config, name)),
        },
        sync,
      );
    },
  },
};

const destination: DestinationSupport<{ blob: string }, AzureConfig> = {
  target: z.strictObject({
    blob: relativeKey('Blob name to write, relative to the prefix; ending in "/" it names a folder and the output keeps its filename'),
  }),
  deliverable: true,
  async deliver(config, target, input, ctx) {
    const c = config;
    const name = underPrefix(c.prefix, target.blob, input.filename);
    const where = azureWhere(c, name);
    const { size } = await stat(input.file);
    const result = { target: { account_name: c.account_name, container: c.container, blob: name }, bytes_written: size };
    try {
      const blob = containerClient(c).getBlockBlobClient(name);
      // A retried or resumed delivery whose commit already happened: nothing left to do.
      const existing = await blob.getProperties({ abortSignal: ctx.signal }).catch((error: unknown) => {
        if (isMissing(error) || isDenied(error)) return null; // absent, or a write-only SAS
        throw error;
      });
      if (alreadyDelivered(existing ? { deliveryId: existing.metadata?.[DELIVERY_META], size: existing.contentLength } : null, input.deliveryId, size))
        return result;

      // Stage the blocks (invisible to readers), then commit the list: the blob changes at once.
      const ids = blockIds(input.deliveryId, Math.ceil(size / BLOCK_BYTES));
      let next = 0;
      let sent = 0;
      const stager = async () => {
        while (next < ids.length) {
          const index = next++;
          const start = index * BLOCK_BYTES;
          const end = Math.min(size, start + BLOCK_BYTES);
          // A body factory, so the SDK can retry a block by reading it again.
          await blob.stageBlock(ids[index]!, () => createReadStream(input.file, { start, end: end - 1 }), end - start, { abortSignal: ctx.signal });
          sent += end - start;
          ctx.progress?.({ bytes: sent });
        }
      };
      await Promise.all(Array.from({ length: Math.min(BLOCKS_AT_ONCE, ids.length) }, stager));
      await blob.commitBlockList(ids, {
        abortSignal: ctx.signal,
        metadata: { [DELIVERY_META]: input.deliveryId },
        ...(input.mediaType ? { blobHTTPHeaders: { blobContentType: input.mediaType } } : {}),
      });
    } catch (error) {
      throw azureFailure(error, label(c, name), where);
    }
    return result;
  },
};

export const azureblob = defineConnector({
  type: 'azureblob',
  label: 'Azure Blob Storage',
  description: 'Blobs in an Azure Storage container.',
  configuration,
  secrets: ['account_key', 'sas_token'],
  example: { account_name: 'gisdata', container: 'exports', prefix: 'nightly/', account_key: '…' },
  implemented: true,
  verifiedAgainst: 'emulator in npm test: Azurite 3.35 (the Azure Storage emulator) started by the tests, with its own account and key',
  notes: [
    "- **Credentials**: `account_key` (Shared Key), else `sas_token` (a container SAS: `r` to import, `c`+`w` to deliver, `l` for the connection test; with `r` a retried delivery also sees that it already finished), else none for a public container. They go into this call's own SDK client and nowhere else. GDAL's `/vsiaz/` is not used because gdal-async offers no per-path credential option, only the process-wide `gdal.config.set`, which another request could read; a whole-blob transfer needs no random access anyway.",
    '- **Import** (`source_resource`: `{"blob": "parcels.gpkg"}` or just `"parcels.gpkg"`): the blob under `prefix` is streamed to disk with the upload limit enforced while it streams, then opened like an upload.',
    '- **Deliver** (`destination_target`: `{"blob": "out/parcels.gpkg"}`; a name ending in `/` keeps the output\'s filename): the file is staged as 8 MiB blocks, then the block list is committed, which replaces the blob in one step; readers see the old blob or the new one, never part of it. Block ids derive from the delivery id, so a retry stages the same blocks again; the blob carries the metadata `geoflow_delivery_id`, and a retried delivery that finds its own committed blob does nothing. Uncommitted blocks of a failed delivery are discarded by Azure (after a week, or at the next commit). The result is `{"target": {"account_name", "container", "blob"}, "bytes_written"}`.',
    '- **Test** lists one blob under `prefix`: `authentication_failed` for a wrong key or SAS signature, `permission_denied` for a SAS that may not list (`l`), `not_found` for a missing container, `unreachable`/`timeout` for the endpoint.',
  ].join('\n'),
  test,
  source,
  destination,
});
