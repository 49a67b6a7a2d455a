import { z } from 'zod';
import { download, publicUrl } from '../shared/download.js';
import { httpUrl } from '../shared/fields.js';
import type { ConnectorDefinition, SourceSupport } from '../types.js';
import { testHttp } from '../shared/http-test.js';

const configuration = z.strictObject({
  url: httpUrl.describe('Address of the file: GeoJSON, a zipped shapefile, GeoPackage, CSV, KML … (redirects are followed)'),
});
type UrlConfig = z.infer<typeof configuration>;

/** What a url Source remembers between Runs: the validators of the file it last read. */
interface UrlCursor {
  etag: string | null;
  last_modified: string | null;
}

const source: SourceSupport<Record<string, never>> = {
  resource: z.strictObject({}),
  resourceRequired: false,
  importable: true,
  incremental: true,
  incrementalNote: 'ETag / Last-Modified: an unchanged file (HTTP 304) skips the rest of the Run',
  async extract(config, _resource, ctx, options) {
    const { url } = config as UrlConfig;
    const cursor = (options.sync?.cursor ?? null) as UrlCursor | null;
    const got = await download({ url, ifNoneMatch: cursor?.etag, ifModifiedSince: cursor?.last_modified }, ctx);
    const sync = { cursor: { etag: got.etag, last_modified: got.lastModified } satisfies UrlCursor };
    if (!got.file) return { file: '', filename: '', bytes: 0, sync: options.sync ?? sync, unchanged: true };
    return { file: got.file, filename: got.filename, bytes: got.bytes, sync };
  },
};

/** A file at a public URL: the simplest Source, and the reference for the others. */
export const url: ConnectorDefinition = {
  type: 'url',
  label: 'File at a URL',
  description: 'Downloads one file from an http(s) URL on every use (streamed to disk, size-limited).',
  configuration,
  secrets: [],
  example: { url: 'https://example.org/data/parcels.geojson' },
  implemented: true,
  verifiedAgainst: 'a local HTTP server in the tests (redirects, ETag, large files)',
  async test(config, ctx) {
    return testHttp({ url: (config as UrlConfig).url }, ctx, { url: publicUrl((config as UrlConfig).url) });
  },
  source,
};
