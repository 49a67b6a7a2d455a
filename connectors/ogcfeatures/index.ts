import { rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { z } from 'zod';
import { safeFilename } from '../../geo/datasets/dataset-files.js';
import { ConnectorError } from '../../domain/transfers.js';
import { fetchJson, publicUrl } from '../shared/http/fetch.js';
import { testSteps } from '../shared/http/http-test.js';
import { accept, apiUrl, readItems, type ApiAccess } from './items.js';
import { type configuration, type resource, ogcfeaturesDeclaration } from './declaration.js';
import { defineConnector, type SourceBehaviour } from '../types.js';

type OgcConfig = z.output<typeof configuration>;

type OgcResource = z.infer<typeof resource>;

/** What an incremental read remembers: the newest datetime read, of which property, and the ids read at it. */
interface OgcCursor {
  property: string;
  datetime: string | null;
  ids_at_datetime: string[];
}

function accessOf(config: OgcConfig): ApiAccess {
  const headers: Record<string, string> = {};
  if (config.api_key) headers[config.api_key_header] = config.api_key;
  return { url: config.url, headers, secretHeaders: config.api_key ? [config.api_key_header] : [] };
}

const source = {
  async extract(config, selector, ctx, options) {
    const previous = (options.sync?.cursor ?? null) as OgcCursor | null;
    const property = selector.datetime_property;
    const since = property && previous?.property === property && previous.datetime ? { value: previous.datetime, ids: previous.ids_at_datetime ?? [] } : null;
    const filename = safeFilename(`${selector.collection}.geojson`);
    const file = path.join(ctx.workDir, filename);
    let read;
    try {
      read = await readItems(
        accessOf(config),
        { collection: selector.collection, bbox: selector.bbox, datetime: since ? `${since.value}/..` : undefined, pageSize: selector.page_size },
        file,
        ctx,
        property ? { property, since } : undefined,
      );
    } catch (error) {
      await rm(file, { force: true });
      throw error;
    }
    const sync = property
      ? { cursor: { property, datetime: read.latest?.value ?? null, ids_at_datetime: read.latest?.ids ?? [] } satisfies OgcCursor }
      : undefined;
    if (since && read.features === 0) {
      await rm(file, { force: true });
      return { file: '', filename: '', bytes: 0, features: 0, sync: sync!, unchanged: true };
    }
    return { file, filename, bytes: (await stat(file)).size, features: read.features, ...(sync ? { sync } : {}) };
  },
} satisfies SourceBehaviour<OgcResource, OgcConfig>;

export const ogcfeatures = defineConnector(ogcfeaturesDeclaration, {
  async test(config, ctx) {
    const c = config;
    const access = accessOf(c);
    const collections = apiUrl(access, 'collections').toString();
    return testSteps({ url: publicUrl(c.url), api_key: Boolean(c.api_key) }, publicUrl(collections), async () => {
      const got = await fetchJson<{ collections?: { id?: string }[] }>(
        { url: collections, headers: { ...access.headers, ...accept }, secretHeaders: access.secretHeaders },
        ctx.signal,
        16 * 1024 * 1024,
      );
      if (!Array.isArray(got.json?.collections)) {
        throw new ConnectorError(
          'invalid_response',
          `${publicUrl(collections)} answered JSON without a collections list: is ${publicUrl(c.url)} the landing page of an OGC API?`,
          {},
          false,
        );
      }
      return `${publicUrl(c.url)} lists ${got.json.collections.length} collection(s)`;
    });
  },
  source,
});
