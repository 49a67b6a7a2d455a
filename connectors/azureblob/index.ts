import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { underPrefix } from '../shared/files/remote-paths.js';
import { connectionTest } from '../shared/connection-test.js';
import { alreadyDelivered, objectChanged, readObjectIfChanged } from '../shared/files/object-store.js';
import { azureFailure, azureWhere, containerClient, credentialKind, isDenied, isMissing, isNotModified, type AzureConfig } from './client.js';
import { azureblobDeclaration } from './declaration.js';
import { defineConnector, type ConnectorContext, type DestinationBehaviour, type SourceBehaviour, type TestResult } from '../types.js';

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

const source = {
  extract(config, resource, ctx, options) {
    const c = config;
    const name = underPrefix(c.prefix, resource.blob);
    return readObjectIfChanged(
      {
        field: 'blob' satisfies keyof AzureCursor,
        name,
        async read(ifNoneMatch) {
          const answer = await containerClient(c)
            .getBlobClient(name)
            .download(0, undefined, { abortSignal: ctx.signal, conditions: ifNoneMatch ? { ifNoneMatch } : undefined });
          return { body: answer.readableStreamBody, length: answer.contentLength, etag: answer.etag ?? null };
        },
        notModified: isNotModified,
        failure: (error) => azureFailure(error, label(c, name), azureWhere(c, name)),
        label: label(c, name),
        where: azureWhere(c, name),
      },
      options.sync,
      ctx,
    );
  },
  changeCheck: {
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
} satisfies SourceBehaviour<{ blob: string }, AzureConfig>;

const destination = {
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
} satisfies DestinationBehaviour<{ blob: string }, AzureConfig>;

export const azureblob = defineConnector(azureblobDeclaration, {
  test,
  source,
  destination,
});
