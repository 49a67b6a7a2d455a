import { z } from 'zod';
import { changedSince, downloadIfChanged, publicUrl } from '../shared/http/download.js';
import { httpUrl } from '../shared/fields.js';
import { defineConnector, type SourceSupport } from '../types.js';
import { testHttp } from '../shared/http/http-test.js';

const configuration = z.strictObject({
  url: httpUrl.describe('Address of the file: GeoJSON, a zipped shapefile, GeoPackage, CSV, KML … (redirects are followed)'),
});
type UrlConfig = z.output<typeof configuration>;

/** A url Source remembers the validators (ETag, Last-Modified) of the file it last read. */
const source: SourceSupport<Record<string, never>, UrlConfig> = {
  resource: z.strictObject({}),
  resourceRequired: false,
  importable: true,
  incremental: true,
  incrementalNote: 'ETag / Last-Modified: an unchanged file (HTTP 304) skips the rest of the Run',
  extract: (config, _resource, ctx, options) => downloadIfChanged({ url: config.url }, ctx, options.sync),
  changeCheck: {
    note: 'a HEAD with the last ETag / Last-Modified: 304 (or the same validators) is unchanged',
    changed: (config, _resource, ctx, sync) => changedSince({ url: config.url }, ctx, sync),
  },
};

/** A file at a public URL: the simplest Source, and the reference for the others. */
export const url = defineConnector({
  type: 'url',
  label: 'File at a URL',
  description: 'Downloads one file from an http(s) URL on every use (streamed to disk, size-limited).',
  configuration,
  secrets: [],
  example: { url: 'https://example.org/data/parcels.geojson' },
  implemented: true,
  verifiedAgainst: 'real server in npm test: a local HTTP server in the tests (redirects, ETag and Last-Modified, large files streamed, 401/404/5xx)',
  notes: [
    'Each use downloads the file again and streams it to disk; the upload size limit is enforced while it streams (a `Content-Length` over the limit is refused before the first byte). The file name comes from `Content-Disposition`, else from the last segment of the URL, and an extension is added from `Content-Type` when the name has none. The file is then prepared and inspected like an upload (a `.zip` may hold a shapefile).',
    '',
    '- **Redirects** are followed, at most 10.',
    '- **Incremental reads** (Jobs): the `ETag` and `Last-Modified` of the last download are kept and sent back as `If-None-Match` / `If-Modified-Since`; a `304 Not Modified` ends the Run early as unchanged.',
    '- **Failures**: 401 → `authentication_failed`, 403 → `permission_denied`, 404/410 → `not_found`, 408/504 → `timeout`, 429 and 5xx → `server_error` (retried by Runs), refused connections and DNS failures → `unreachable`, an empty answer → `invalid_data`.',
    '- Messages and test results name the URL without its query string, which may carry a key. For URLs that need credentials, use an `http` Source.',
  ].join('\n'),
  async test(config, ctx) {
    return testHttp({ url: config.url }, ctx, { url: publicUrl(config.url) });
  },
  source,
});
